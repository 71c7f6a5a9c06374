// examples/gpu-test/ as a person uses it (run by pages.test.mjs): detection; with WebGPU
// every kernel test row must pass (each row's Run button named for its test), without it
// the page must say why and keep the tests off; a short matvec + dispatch benchmark with
// progress as each measurement lands, charted so that small values show (each chart an
// image whose accessible name lists its values); WebGPU on the software adapter asks
// first, with an estimate; SmolLM2 loaded, the default prompt continued as plain text
// (not through the chat template) with per-token timings; the loaded model's
// prefill/decode benchmark charted; no sideways scrolling at phone width; axe-core finds
// nothing serious or critical after detection, the kernel tests and the benchmarks.

import { assertAccessible, assertNoProblems, docShot, openPage, screenshot, step } from './lib/browser.mjs';
import { MODEL_NAME, check, text } from './lib/checks.mjs';
import { ms, tokensPerSecond } from '../../examples/shared/bench-format.js';

const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1280, height: 900 };

/**
 * The chart in `selector`: its SVG's role and accessible name, and each bar's drawn
 * width and height and value label (as the page shows them).
 */
function chart(page, selector) {
  return page.$eval(selector, (c) => {
    const svg = c.querySelector('svg');
    return {
      role: svg?.getAttribute('role'),
      name: svg?.getAttribute('aria-label') ?? '',
      bars: [...c.querySelectorAll('rect.bar')].map((r) => r.getBoundingClientRect()).map((b) => ({ w: b.width, h: b.height })),
      values: [...c.querySelectorAll('text.value')].map((t) => t.textContent),
    };
  });
}

/**
 * Checks that the chart in `selector` is an image named with every value it draws (the
 * bar charts' value labels; the timeline, unlabelled, lists one value per bar), and returns it.
 */
async function checkChart(page, selector, minBars) {
  const c = await chart(page, selector);
  check(c.role === 'img', `${selector}: the chart should have role="img", has ${c.role}`);
  check(c.bars.length >= minBars, `${selector}: expected at least ${minBars} bars, got ${c.bars.length}`);
  const missing = c.values.filter((v) => !c.name.includes(v));
  const listed = c.values.length ? !missing.length : /each: /.test(c.name) && c.name.split('each: ')[1].split(', ').length === c.bars.length;
  check(listed, `${selector}: the accessible name should list every value${missing.length ? `; lacks ${missing.join(', ')}` : ''}: "${c.name}"`);
  return c;
}

export async function gpuTestPage(browser, base, webgpu) {
  const mode = webgpu ? 'webgpu' : 'nogpu';
  // The stats line's formatting of a software adapter's speeds (the page showed "decode 0.0 tok/s").
  check(tokensPerSecond(0.027) === '0.027 tok/s (37 s/token)' && ms(37_012) === '37 s', `small speeds: ${tokensPerSecond(0.027)}, ${ms(37_012)}`);

  const page = await openPage(browser, `${base}/examples/gpu-test/`, { viewport: LAPTOP });
  await page.waitForSelector('body[data-ready]', { timeout: 60_000 });
  const detected = await text(page, '#detect-summary');
  console.log(`   detection: ${detected}`);
  await assertAccessible(page, `gpu-test ${mode}, detected`);

  await step('gpu-test: every column header has text and each Run button names its test', async () => {
    const headers = await page.$$eval('#kernels-table th', (ths) => ths.map((th) => th.textContent.trim()));
    check(headers.every(Boolean), `a kernel table column header is empty: ${JSON.stringify(headers)}`);
    // The accessible name: aria-label when set, else the text.
    const names = await page.$$eval('#kernels-table tbody button', (bs) => bs.map((b) => b.getAttribute('aria-label') ?? b.textContent));
    const repeated = names.filter((n, i) => names.indexOf(n) !== i);
    check(names.length >= 50 && !repeated.length, `the ${names.length} Run buttons should have distinct names; repeated: ${[...new Set(repeated)].join(', ')}`);
    check(names.every((n) => /^Run\b/.test(n)), `each name should start with the visible text "Run": ${names[0]}`);
  });

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
      const progress = await page.$eval('#kernels-progress', (p) => [p.value, p.max, p.hidden]);
      check(progress[0] === rows.length && progress[1] === rows.length && !progress[2], `the kernel progress bar should be full: ${progress}`);
      await assertAccessible(page, 'gpu-test webgpu, kernel tests run');
    });
  } else {
    await step('gpu-test: without WebGPU the page says so and keeps the kernel tests off', async () => {
      check(/No WebGPU/.test(detected), `detection should report no WebGPU: ${detected}`);
      check(await page.isDisabled('#kernels-run-all'), 'Run all should be disabled without WebGPU');
      check(/need WebGPU/.test(await text(page, '#kernels-summary')), 'the kernel section should say it needs WebGPU');
    });
  }

  await step(`gpu-test: a short matvec and dispatch benchmark (${webgpu ? 'WebGPU + CPU' : 'CPU'}), with progress, charted`, async () => {
    await page.selectOption('#bench-size', '512');
    await page.fill('#bench-reps', '3');
    // Every value the progress bar and the status take while it runs (too quick to poll).
    await page.evaluate(() => {
      window.benchSeen = [];
      const note = () => window.benchSeen.push(`${document.getElementById('bench-progress').value} | ${document.getElementById('bench-summary').textContent}`);
      new MutationObserver(note).observe(document.getElementById('bench-summary'), { childList: true, characterData: true, subtree: true });
    });
    await page.click('#bench-run');
    await page.waitForSelector('#bench-chart[data-done], #bench-summary.bad', { timeout: 300_000 });
    const summary = await text(page, '#bench-summary');
    check(/^done/.test(summary), `benchmark: ${summary}`);
    const series = webgpu ? 2 : 1;
    const steps = 9 * series; // 8 matvec types and the dispatch cost, per backend
    const seen = await page.evaluate(() => window.benchSeen);
    const counts = seen.map((s) => Number(s.split(' | ')[0]));
    check(seen.length >= steps && counts.includes(1) && counts.includes(steps - 1),
      `progress should count each of the ${steps} measurements as it lands, saw:\n${seen.join('\n')}`);
    check(seen.some((s) => /^\d+ \| \d+ of \d+ measured; now matvec \w+ on (webgpu|cpu)/.test(s)), `the status should say what runs: ${seen[0]}`);
    const progress = await page.$eval('#bench-progress', (p) => [p.value, p.max, p.labels.length || p.getAttribute('aria-label')]);
    check(progress[0] === steps && progress[1] === steps && progress[2], `the benchmark progress bar should be full and labelled: ${progress}`);

    const c = await checkChart(page, '#bench-chart', 8 * series);
    // Small values show: WebGPU on SwiftShader measures ~1/100 of the CPU's GB/s, which a
    // linear axis draws ~1 px long; the page then takes a log axis.
    const shortest = Math.min(...c.bars.map((b) => b.w));
    check(shortest >= 8, `every bar should be visible: the shortest is ${shortest.toFixed(1)} px (${c.name})`);
    const numbers = c.values.map(Number).filter((v) => v > 0);
    if (Math.max(...numbers) / Math.min(...numbers) > 20) check(/log scale/.test(c.name), `values spanning over 20× should get a log axis: ${c.name}`);
    console.log(`   ${c.name}`);
    console.log(`   ${await text(page, '#bench-dispatch')}`);
  });

  if (webgpu) {
    await step('gpu-test: backend webgpu on the software adapter warns with an estimate before loading; cancel and confirm', async () => {
      await page.fill('#model-url', `../../.cache/models/${MODEL_NAME}`);
      await page.dispatchEvent('#model-url', 'change');
      await page.selectOption('#model-backend', 'webgpu');
      await page.waitForFunction(() => /Estimate: about .+ per token/.test(document.getElementById('slow-estimate').textContent), null, { timeout: 10_000 });
      const warning = await text(page, '#slow-warning');
      console.log(`   ${warning}`);
      check(await page.isVisible('#slow-warning') && /software adapter/.test(warning), `the warning should show: ${warning}`);
      // The benchmark above ran, so the estimate rests on this adapter's measured rate.
      check(/MiB of weights read per token at [\d.]+ MB\/s, the Q4_1 matvec rate this page's benchmark measured on this adapter .*rough guess/.test(warning),
        `the estimate should say what it rests on (SmolLM2's Q4_1 rate, measured above) and that it is rough: ${warning}`);
      await docShot(page.locator('#slow-warning'), 'gpu-test-warning');
      // Load asks first: nothing starts.
      await page.click('#model-load');
      check(/^Not loaded/.test(await text(page, '#model-status')) && (await page.isDisabled('#model-abort')), 'Load should not start before the warning is confirmed');
      check(await page.evaluate(() => document.activeElement?.id === 'slow-confirm'), 'Load should move the focus to the warning');
      // Cancel: the CPU path is picked and the warning goes.
      await page.click('#slow-cancel');
      check((await page.inputValue('#model-backend')) === 'cpu' && !(await page.isVisible('#slow-warning')), 'cancel should pick the CPU path and hide the warning');
      // Confirm: the load starts (stopped here; a generation would take minutes).
      await page.selectOption('#model-backend', 'webgpu');
      await page.click('#slow-confirm');
      // (60 s: with the WebGPU suite on the other core, SwiftShader's device took over 10.)
      await page.waitForFunction(() => !document.getElementById('model-abort').disabled || /^Loaded/.test(document.getElementById('model-status').textContent), null, { timeout: 60_000 });
      await page.evaluate(() => document.getElementById('model-abort').click());
      await page.waitForSelector('#model-status.ok, #model-status.bad', { timeout: 120_000 });
      const status = await text(page, '#model-status');
      console.log(`   confirmed, then aborted: ${status}`);
      check(/^Loaded .* on webgpu|^AbortError/.test(status), `the confirmed load should run on WebGPU until aborted: ${status}`);
      await page.selectOption('#model-backend', 'auto');
    });
  }

  await step('gpu-test: load SmolLM2 (backend auto), continue the default prompt as plain text with per-token timings, benchmark it', async () => {
    await page.fill('#model-url', `../../.cache/models/${MODEL_NAME}`);
    await page.click('#model-load');
    await page.waitForSelector('#model-status.ok, #model-status.bad', { timeout: 120_000 });
    const status = await text(page, '#model-status');
    console.log(`   ${status}`);
    check(/^Loaded/.test(status), `load: ${status}`);
    // SwiftShader is a software adapter: 'auto' takes the CPU path there and says why.
    check(/on cpu/.test(status) && (!webgpu || /because/.test(status)), `auto should pick the CPU here with a reason: ${status}`);

    // SmolLM2-Instruct has a chat template; loading it must not switch the default prompt to chat.
    check(!(await page.isChecked('#gen-chat')) && (await page.isChecked('#gen-complete')) && !(await page.isDisabled('#gen-chat')),
      'the prompt should stay text to continue after a model with a chat template loads');
    check((await page.inputValue('#gen-prompt')) === 'Once upon a time,', 'the default prompt');
    const generate = async (max) => {
      await page.fill('#gen-max', String(max));
      await page.click('#gen-run');
      await page.waitForSelector('#gen-stats[data-done]', { timeout: 120_000 });
      return page.$eval('#gen-stats', (s) => ({ ...s.dataset, text: s.textContent.trim() }));
    };
    // A chat message first: its prompt, through the template (SmolLM2's adds a system prompt), is far longer.
    await page.check('#gen-chat');
    check((await page.inputValue('#gen-prompt')) !== 'Once upon a time,', 'chat mode should swap in its example prompt');
    const chat = await generate(2);
    await page.check('#gen-complete');
    check((await page.inputValue('#gen-prompt')) === 'Once upon a time,', 'completion mode should bring the example back');
    const plain = await generate(8);
    const out = await text(page, '#gen-out');
    console.log(`   "Once upon a time,${out}" — ${plain.text}`);
    check(plain.done === 'done' && out.length > 0, `generation: ${plain.text}`);
    check(plain.mode === 'complete' && chat.mode === 'chat', `the modes sent: ${plain.mode}, ${chat.mode}`);
    check(Number(plain.promptTokens) <= 8 && Number(chat.promptTokens) > Number(plain.promptTokens) + 10,
      `"Once upon a time," should go as its own few tokens, not chat-templated: ${plain.promptTokens} tokens (as a chat message: ${chat.promptTokens})`);
    check(/^\d+ prompt tokens \(text to continue\)/.test(plain.text), `the stats should say how the prompt went: ${plain.text}`);
    const timeline = await checkChart(page, '#gen-timeline', 2);
    check(/^Milliseconds per decode token.*min [\d.]+, median/.test(timeline.name), `timeline name: ${timeline.name}`);

    await page.fill('#mbench-prompt', '16');
    await page.fill('#mbench-gen', '4');
    await page.click('#mbench-run');
    check(await page.isVisible('#mbench-progress'), 'the model benchmark should show that it runs');
    await page.waitForSelector('#mbench-chart[data-done], #mbench-summary.bad', { timeout: 120_000 });
    const mb = await text(page, '#mbench-summary');
    console.log(`   ${mb}`);
    check(/prefill 16 tokens at [\d.]+ tok\/s, decode 4 tokens/.test(mb), `model benchmark: ${mb}`);
    await checkChart(page, '#mbench-chart', 2);
    await assertAccessible(page, `gpu-test ${mode}, benchmarks charted`);
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

  await step('gpu-test: at phone width nothing scrolls the page sideways and the charts fit', async () => {
    await page.setViewportSize(PHONE);
    // The charts redraw at their new width (a ResizeObserver): wait for that frame.
    await page.waitForFunction(() => [...document.querySelectorAll('.chart svg')].every((s) => s.getBoundingClientRect().width <= innerWidth));
    const wide = await page.evaluate(() => {
      const out = [...document.querySelectorAll('body *')].filter((e) => !e.closest('.scroll') && e.getBoundingClientRect().right > innerWidth + 1);
      return { scroll: document.documentElement.scrollWidth, inner: innerWidth, what: out.slice(0, 5).map((e) => `${e.tagName}#${e.id}.${e.className?.baseVal ?? e.className}`) };
    });
    check(wide.scroll <= wide.inner && !wide.what.length, `at ${PHONE.width} px the page is ${wide.scroll} px wide; too wide: ${wide.what.join(', ')}`);
    await screenshot(page, `gpu-test-${mode}-phone`);
    await page.setViewportSize(LAPTOP);
  });
  assertNoProblems(page, `gpu-test (${mode})`);
  await page.context().close();
}
