// The pages as a person uses them, in headless Chromium (playwright-core, the system
// Chromium) against tests/scripts/serve.py, twice: with WebGPU (SwiftShader) and without
// (the CPU path). Each run opens
//   - examples/gpu-test/: detection; with WebGPU every kernel test row must pass, without
//     it the page must say why and keep the tests off; a short matvec + dispatch
//     benchmark charted; SmolLM2 loaded and a few tokens generated with per-token
//     timings; the loaded model's prefill/decode benchmark charted;
//   - examples/chat/ at phone width: SmolLM2 loaded in the worker, a message sent, the
//     reply streamed (the bubble grows over several updates) and finished with tok/s;
// and fails on any console error or uncaught exception. Screenshots go to
// tests/pages/artifacts/ (gitignored).
//
//   node tests/pages/pages.test.mjs [on|off ...]     (scripts/test_pages.sh runs it)

import { assertNoProblems, docShot, launch, openPage, screenshot, startServer, step } from './lib/browser.mjs';

const PORT = Number(process.env.KINDLING_PAGES_PORT ?? 8643);
const MODEL_NAME = 'SmolLM2-135M-Instruct.Q4_1.gguf';
const runs = process.argv.slice(2).length ? process.argv.slice(2) : ['on', 'off'];
const check = (ok, message) => {
  if (!ok) throw new Error(message);
};
const text = (page, selector) => page.textContent(selector).then((t) => t.trim());

async function gpuTestPage(browser, base, webgpu) {
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

async function chatPage(browser, base, webgpu) {
  const mode = webgpu ? 'webgpu' : 'nogpu';
  const page = await openPage(browser, `${base}/examples/chat/`, { viewport: { width: 390, height: 844 } });
  await page.waitForSelector('body[data-ready]', { timeout: 60_000 });
  await step(`chat (phone width): load SmolLM2 in the worker, send a message, get a streamed reply`, async () => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 0, `the page is ${overflow}px wider than a phone screen`);
    await page.selectOption('#model', `../../.cache/models/${MODEL_NAME}`);
    await page.click('#load');
    await page.waitForSelector('body[data-backend], #status.bad', { timeout: 120_000 });
    const status = await text(page, '#status');
    console.log(`   ${status}`);
    check(/ready on/.test(status), `load: ${status}`);
    // Count the reply's updates: a streamed reply grows in several steps.
    await page.evaluate(() => {
      window.replyUpdates = 0;
      new MutationObserver(() => window.replyUpdates++).observe(document.getElementById('log'), { subtree: true, characterData: true, childList: true });
    });
    await page.click('#setup details summary'); // the settings are folded away
    await page.fill('#max-tokens', '32');
    await page.fill('#temperature', '0');
    await page.fill('#input', 'What is the capital of France?');
    await page.click('#send');
    await page.waitForSelector('.msg.assistant[data-finish]', { timeout: 120_000 });
    const reply = await text(page, '.msg.assistant');
    const updates = await page.evaluate(() => window.replyUpdates);
    const finish = await page.getAttribute('.msg.assistant', 'data-finish');
    console.log(`   reply (${updates} updates, finish ${finish}): ${reply}`);
    check(updates >= 4, `the reply should stream (saw ${updates} updates)`);
    check(/tok\/s/.test(reply) && (finish === 'stop' || finish === 'length'), `reply: ${reply}`);
    check(/cached/.test(await page.$eval('#model', (s) => s.selectedOptions[0].textContent)), 'the loaded model should be listed as cached');
    await page.click('#setup details summary');
    if (webgpu) await docShot(page, 'chat');
    await page.click('#setup details summary');
  });
  await step('chat: Stop ends a reply part-way, and the next message still gets a reply', async () => {
    await page.fill('#max-tokens', '400');
    await page.fill('#input', 'Write a long story about a dragon who learns to bake bread.');
    await page.click('#send');
    await page.waitForFunction(() => (document.querySelectorAll('.msg.assistant')[1]?.textContent.length ?? 0) > 20, null, { timeout: 60_000 });
    await page.click('#stop');
    const stopped = page.locator('.msg.assistant').nth(1);
    await page.waitForFunction(() => document.querySelectorAll('.msg.assistant[data-finish]').length === 2, null, { timeout: 30_000 });
    const finish = await stopped.getAttribute('data-finish');
    check(finish === 'stopped', `the stopped reply should say so, finish: ${finish}`);
    await page.fill('#max-tokens', '8');
    await page.fill('#input', 'Thanks!');
    await page.click('#send');
    await page.waitForFunction(() => document.querySelectorAll('.msg.assistant[data-finish]').length === 3, null, { timeout: 60_000 });
    console.log(`   stopped at: ${(await stopped.textContent()).slice(0, 60)}…; then: ${await page.locator('.msg.assistant').nth(2).textContent()}`);
  });
  await screenshot(page, `chat-${mode}`);
  assertNoProblems(page, `chat (${mode})`);
  await page.context().close();
}

const server = await startServer(PORT);
try {
  for (const run of runs) {
    const webgpu = run === 'on';
    console.log(`== pages, WebGPU ${run}`);
    const browser = await launch({ webgpu });
    try {
      await gpuTestPage(browser, server.base, webgpu);
      await chatPage(browser, server.base, webgpu);
    } finally {
      await browser.close();
    }
  }
} finally {
  server.stop();
}
