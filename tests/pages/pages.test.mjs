// The pages as a person uses them, in headless Chromium (playwright-core, the system
// Chromium) against tests/scripts/serve.py, twice: with WebGPU (SwiftShader) and without
// (the CPU path). Each run opens
//   - examples/gpu-test/ (gpu_test_page.mjs): detection, the kernel table, the charted
//     benchmarks, the model runner and its software-adapter warning;
//   - examples/chat/ (chat_page.mjs): loading in the worker, streamed replies, Stop, one
//     reply at a time, a failed load, the end of a reply in view at two window sizes;
//   - examples/search/ (search_page.mjs): nomic-embed-text-v1.5 loaded, a few documents
//     embedded with progress, queries ranked by cosine similarity, a text-generation model
//     refused;
// runs axe-core over each (no serious or critical violation), and fails on any console
// error or uncaught exception. Screenshots go to tests/pages/artifacts/ (gitignored).
//
//   node tests/pages/pages.test.mjs [on|off ...]     (scripts/test_pages.sh runs it)
//   KINDLING_PAGES_ONLY=chat node tests/pages/pages.test.mjs off    (one page: gpu-test, chat or search)

import { launch, startServer } from './lib/browser.mjs';
import { chatPage } from './chat_page.mjs';
import { gpuTestPage } from './gpu_test_page.mjs';
import { searchPage } from './search_page.mjs';

const PORT = Number(process.env.KINDLING_PAGES_PORT ?? 8643);
const runs = process.argv.slice(2).length ? process.argv.slice(2) : ['on', 'off'];
const only = (process.env.KINDLING_PAGES_ONLY ?? 'gpu-test chat search').split(/[\s,]+/);

const server = await startServer(PORT);
try {
  for (const run of runs) {
    const webgpu = run === 'on';
    console.log(`== pages, WebGPU ${run}`);
    const browser = await launch({ webgpu });
    try {
      if (only.includes('gpu-test')) await gpuTestPage(browser, server.base, webgpu);
      if (only.includes('chat')) await chatPage(browser, server.base, webgpu);
      if (only.includes('search')) await searchPage(browser, server.base, webgpu);
    } finally {
      await browser.close();
    }
  }
} finally {
  server.stop();
}
