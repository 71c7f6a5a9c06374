// examples/gpu-test/ as a person uses it (run by pages.test.mjs): detection; with WebGPU
// every kernel test row must pass, without it the page must say why and keep the tests
// off; a short matvec + dispatch benchmark charted; SmolLM2 loaded and a few tokens
// generated with per-token timings; the loaded model's prefill/decode benchmark charted.

import { assertNoProblems, docShot, openPage, screenshot, step } from './lib/browser.mjs';
import { MODEL_NAME, check, text } from './lib/checks.mjs';

export async function gpuTestPage(browser, base, webgpu) {
  const mode = webgpu ? 'webgpu' : 'nogpu';
  const page = await openPage(browser, `${base}/examples/gpu-test/`);
  await page.waitForSelector('body[data-ready]', { timeout: 60_000 });
  const detected = await text(page, '#detect-summary');
  console.log(`   detection: ${detected}`);

  if (webgpu) {
    await step('gpu-test: every kernel test row passes on WebGPU', async () => {
      check(/WebGPU on/.test(detected), `detection should find WebGPU: ${detected}`);
      await page.click('#kernels-run-all');
      await page.waitForFunction(
        () => !document.querySelector('#kernels-table tr[data-status="pending"], #kernels-table tr[data-status="running"]'),
        null, { timeout: 300_000, polling: 500 },
      );
      const rows = await page.$$eval('#kernels-table tbody tr', (trs) => trs.map((tr) => ({
        name: tr.dataset.name, status: tr.dataset.status, cells: [...tr.cells].slice(1, 8).map((c) => c.textContent),
      })));
      const failed = rows.filter((r) => r.status !== 'pass');
      console.log(`   ${await text(page, '#kernels-summary')}`);
      check(rows.length >= 50, `expected every kernel family, got ${rows.length} rows`);
      check(!failed.length, `kernel rows not passing:\n${failed.map((r) => `${r.name}: ${r.cells.join(' | ')}`).join('\n')}`);
      const json = JSON.parse(await page.evaluate(() => window.kindlingKernelResults()));
      check(json.results.length === rows.length && json.results.every((r) => r.pass), 'the JSON results should match the table');
    });
  } else {
    await step('gpu-test: without WebGPU the page says so and keeps the kernel tests off', async () => {
      check(/No WebGPU/.test(detected), `detection should report no WebGPU: ${detected}`);
      check(await page.isDisabled('#kernels-run-all'), 'Run all should be disabled without WebGPU');
      check(/need WebGPU/.test(await text(page, '#kernels-summary')), 'the kernel section should say it needs WebGPU');
    });
  }

  await step(`gpu-test: a short matvec and dispatch benchmark (${webgpu ? 'WebGPU + CPU' : 'CPU'})`, async () => {
    await page.selectOption('#bench-size', '512');
    await page.fill('#bench-reps', '3');
    await page.click('#bench-run');
    await page.waitForSelector('#bench-chart[data-done], #bench-summary.bad', { timeout: 120_000 });
    const summary = await text(page, '#bench-summary');
    check(/^done/.test(summary), `benchmark: ${summary}`);
    const bars = await page.$$eval('#bench-chart svg rect', (r) => r.length);
    const series = webgpu ? 2 : 1;
    check(bars >= 8 * series, `the chart should have a bar per type and backend, has ${bars - series}`);
    console.log(`   ${await text(page, '#bench-dispatch')}`);
  });

  await step('gpu-test: load SmolLM2 (backend auto), generate with per-token timings, benchmark it', async () => {
    await page.fill('#model-url', `../../.cache/models/${MODEL_NAME}`);
    await page.click('#model-load');
    await page.waitForSelector('#model-status.ok, #model-status.bad', { timeout: 120_000 });
    const status = await text(page, '#model-status');
    console.log(`   ${status}`);
    check(/^Loaded/.test(status), `load: ${status}`);
    // SwiftShader is a software adapter: 'auto' takes the CPU path there and says why.
    check(/on cpu/.test(status) && (!webgpu || /because/.test(status)), `auto should pick the CPU here with a reason: ${status}`);
    await page.fill('#gen-max', '8');
    await page.click('#gen-run');
    await page.waitForSelector('#gen-stats[data-done]', { timeout: 120_000 });
    const stats = await text(page, '#gen-stats');
    const out = await text(page, '#gen-out');
    console.log(`   "${out}" — ${stats}`);
    check(out.length > 0 && (await page.getAttribute('#gen-stats', 'data-done')) === 'done', `generation: ${stats}`);
    check(await page.$$eval('#gen-timeline svg rect', (r) => r.length) >= 2, 'per-token timeline should show the tokens');
    await page.fill('#mbench-prompt', '16');
    await page.fill('#mbench-gen', '4');
    await page.click('#mbench-run');
    await page.waitForSelector('#mbench-chart[data-done], #mbench-summary.bad', { timeout: 120_000 });
    const mb = await text(page, '#mbench-summary');
    console.log(`   ${mb}`);
    check(/prefill 16 tokens at [\d.]+ tok\/s, decode 4 tokens/.test(mb), `model benchmark: ${mb}`);
  });
  if (!webgpu) {
    await step('gpu-test: load by hf: name through the test server\'s hub stand-in (a signed redirect), not cached, then cached', async () => {
      await page.fill('#model-hub', `${base}/hf`);
      await page.fill('#model-url', `hf:kindling/test-models/${MODEL_NAME}`);
      await page.dispatchEvent('#model-url', 'change');
      await page.waitForFunction(() => /not cached/.test(document.getElementById('model-cached').textContent), null, { timeout: 10_000 });
      await page.click('#model-load');
      await page.waitForSelector('#model-status.ok, #model-status.bad', { timeout: 120_000 });
      const status = await text(page, '#model-status');
      check(/^Loaded /.test(status), `hf: load: ${status}`);
      await page.waitForFunction(() => /^cached/.test(document.getElementById('model-cached').textContent), null, { timeout: 10_000 });
      console.log(`   ${status.slice(0, 80)}…; then: ${await text(page, '#model-cached')}`);
    });
  }
  await screenshot(page, `gpu-test-${mode}`);
  if (webgpu) {
    await docShot(page.locator('#detect'), 'gpu-test-detection');
    // The kernel table's first rows (all 56 make a tall picture).
    const box = await page.locator('#kernels').boundingBox();
    await docShot(page, 'gpu-test-kernels', { clip: { ...box, height: Math.min(box.height, 620) }, fullPage: true });
    await docShot(page.locator('#bench'), 'gpu-test-benchmarks');
    await docShot(page.locator('#runner'), 'gpu-test-runner');
  }
  assertNoProblems(page, `gpu-test (${mode})`);
  await page.context().close();
}
