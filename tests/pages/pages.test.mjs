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
//   KINDLING_PAGES_ONLY=chat node tests/pages/pages.test.mjs off    (one page: gpu-test or chat)

import { launch, startServer } from './lib/browser.mjs';
import { chatPage } from './chat_page.mjs';
import { gpuTestPage } from './gpu_test_page.mjs';

const PORT = Number(process.env.KINDLING_PAGES_PORT ?? 8643);
const runs = process.argv.slice(2).length ? process.argv.slice(2) : ['on', 'off'];
const only = (process.env.KINDLING_PAGES_ONLY ?? 'gpu-test chat').split(/[\s,]+/);

const server = await startServer(PORT);
try {
  for (const run of runs) {
    const webgpu = run === 'on';
    console.log(`== pages, WebGPU ${run}`);
    const browser = await launch({ webgpu });
    try {
      if (only.includes('gpu-test')) await gpuTestPage(browser, server.base, webgpu);
      if (only.includes('chat')) await chatPage(browser, server.base, webgpu);
    } finally {
      await browser.close();
    }
  }
} finally {
  server.stop();
}
