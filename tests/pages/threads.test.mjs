// The CPU path on threads, in headless Chromium without WebGPU: the package's threaded
// build (www/wasm-threads/, www/threads.js) on a cross-origin-isolated page, and each
// case that must fall back to one thread, with `info.threads` saying why. Greedy tokens
// on a real model must be the same on every thread count (the kernels' bands split
// output columns; each value's arithmetic does not change).
//
//   node tests/pages/threads.test.mjs      (scripts/test_pages.sh runs it; needs
//                                           npm run build and npm run build:threads)

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT, assertNoProblems, launch, openPage, startServer, step } from './lib/browser.mjs';

const PORT = Number(process.env.KINDLING_PAGES_PORT ?? 8643) + 10;
const MODEL = '/.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf';
// Long enough that prefill's matmuls have several rows to split.
const PROMPT = 'A lighthouse keeper counts the ships that pass each night and writes their names in a book. One night,';
const TOKENS = 24;

for (const f of ['www/wasm/kindling_web_bg.wasm', 'www/wasm-threads/kindling_web_bg.wasm']) {
  if (!existsSync(path.join(ROOT, f))) throw new Error(`${f} is missing: npm run build && npm run build:threads`);
}

const isolated = await startServer(PORT, { isolate: true });
const plain = await startServer(PORT + 1);
const browser = await launch({ webgpu: false });
try {
  const page = await openPage(browser, `${isolated.base}/tests/pages/threads/`);
  await page.waitForFunction(() => window.threadsPage);
  assert.equal(await page.evaluate(() => window.threadsPage.isolated), true, 'the page served with COOP/COEP is cross-origin isolated');
  const url = `${isolated.base}${MODEL}`;
  const run = (where, options, p = page, u = url) =>
    p.evaluate(([w, u2, o, pr, n]) => window.threadsPage[w](u2, o, pr, n), [where, u, options, PROMPT, TOKENS]);

  const one = await step('a worker on an isolated page, threads: 1 (the plain build)', async () => {
    const r = await run('inWorker', { threads: 1 });
    assert.deepEqual(r.info.threads, { count: 1, reason: 'one thread was asked for (threads: 1)' });
    return r;
  });
  const two = await step('a worker on an isolated page, threads: 2 (the threaded build)', async () => {
    const r = await run('inWorker', { threads: 2 });
    assert.equal(r.info.threads.count, 2, JSON.stringify(r.info.threads));
    assert.match(r.info.threads.reason, /threaded build on 2 threads/);
    return r;
  });
  assert.equal(two.tokenIds.length, TOKENS);
  assert.deepEqual(two.tokenIds, one.tokenIds, 'greedy tokens on 2 threads equal those on 1');
  console.log(`   "${two.text.slice(0, 60)}…"; decode ${one.timings.decodeTokensPerSecond.toFixed(1)} tok/s on 1 thread, ` +
    `${two.timings.decodeTokensPerSecond.toFixed(1)} on 2; prefill ${one.timings.prefillTokensPerSecond.toFixed(1)} → ${two.timings.prefillTokensPerSecond.toFixed(1)}`);

  await step("'auto' without WebGPU in a worker of an isolated page: the threaded build, with the fallback's reason", async () => {
    const r = await run('inWorker', { backend: 'auto', threads: 2 });
    assert.equal(r.info.backend, 'cpu');
    assert.equal(r.info.threads.count, 2, JSON.stringify(r.info.threads));
    assert.ok(r.info.fallbackReason, 'the reason auto did not take WebGPU');
    assert.deepEqual(r.tokenIds, one.tokenIds);
  });
  await step('the main thread of an isolated page: one thread, and why', async () => {
    const r = await run('onMainThread', { threads: 2 });
    assert.equal(r.info.threads.count, 1);
    assert.match(r.info.threads.reason, /main thread/);
    assert.deepEqual(r.tokenIds, one.tokenIds);
  });
  await step('threads that is not a whole number ≥ 1: InvalidRequestError before any download', async () => {
    const e = await page.evaluate(async (u) => {
      try {
        await window.threadsPage.inWorker(u, { threads: 0 }, 'x', 1);
        return null;
      } catch (err) {
        return { name: err.name, message: err.message };
      }
    }, url);
    assert.equal(e?.name, 'InvalidRequestError', JSON.stringify(e));
    assert.match(e.message, /threads must be a whole number/);
  });
  assertNoProblems(page, 'the isolated threads page');

  await step('a worker on a page that is not isolated: one thread, and why', async () => {
    const p = await openPage(browser, `${plain.base}/tests/pages/threads/`);
    await p.waitForFunction(() => window.threadsPage);
    const r = await run('inWorker', { threads: 2 }, p, `${plain.base}${MODEL}`);
    assert.equal(r.info.threads.count, 1);
    assert.match(r.info.threads.reason, /not cross-origin isolated/);
    assert.deepEqual(r.tokenIds, one.tokenIds);
    assertNoProblems(p, 'the threads page without isolation');
  });
} finally {
  await browser.close();
  isolated.stop();
  plain.stop();
}
