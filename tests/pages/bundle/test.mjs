// The package as a bundler sees it: `npm pack`, install the tarball into a fresh app
// (tests/pages/bundle/app, copied to a temporary folder), build it with Vite and with
// webpack, each with no kindling-specific options, serve each build cross-origin isolated,
// and generate text in headless Chromium both on the page and in WorkerModel's worker (on
// two threads: the threaded build). Fails when a bundler does not bundle the worker, the
// threaded build's pool workers or the wasm, when generation fails, or on any console error.
//
//   node tests/pages/bundle/test.mjs     (needs www/wasm and www/wasm-threads: npm run build,
//                                          npm run build:threads; the models)

import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build, preview } from 'vite';
import webpack from 'webpack';
import { ROOT, assertNoProblems, launch, openPage, screenshot, startServer, step } from '../lib/browser.mjs';

const MODEL = '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf';
// Not 8641: scripts/test_web.sh runs the WebGPU suite's server there at the same time.
const SERVER_PORT = Number(process.env.KINDLING_BUNDLE_SERVER_PORT ?? 8645);
// The app's pages are cross-origin isolated, as a site that wants the threaded CPU build
// serves them.
const ISOLATED = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
const PREVIEW_PORT = Number(process.env.KINDLING_BUNDLE_PREVIEW_PORT ?? 8642);

const dir = mkdtempSync(path.join(tmpdir(), 'kindling-vite-'));
let server = null;
let site = null;
let browser = null;
try {
  const tarball = await step('npm pack', () => {
    const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' });
    return path.join(dir, out.trim().split('\n').pop());
  });
  const app = path.join(dir, 'app');
  await step('install the tarball into a fresh app', () => {
    cpSync(path.join(import.meta.dirname, 'app'), app, { recursive: true });
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'kindling-vite-app', private: true, type: 'module' }));
    // The package has no dependencies: installing the tarball needs no registry.
    execFileSync('npm', ['install', '--silent', '--no-audit', '--no-fund', '--offline', tarball], { cwd: app, stdio: 'inherit' });
  });
  await step('vite build', async () => {
    await build({ root: app, logLevel: 'warn', build: { outDir: 'dist' } });
    const assets = readdirSync(path.join(app, 'dist/assets'));
    console.log(`   dist/assets: ${assets.join(', ')}`);
    if (!assets.some((f) => /^worker.*\.js$/.test(f))) throw new Error('vite did not emit a worker chunk for kindling/worker');
    if (!assets.some((f) => f.endsWith('.wasm'))) throw new Error('vite did not emit the .wasm');
  });
  await step('webpack build', async () => {
    const out = path.join(app, 'dist-webpack');
    const stats = await new Promise((resolve, reject) =>
      webpack({ mode: 'production', context: app, entry: './main.js', output: { path: out, filename: 'main.js' }, performance: { hints: false } },
        (err, s) => (err ? reject(err) : resolve(s))));
    if (stats.hasErrors()) throw new Error(stats.toString('errors-only'));
    // webpack writes no page: the app's own, loading the bundle as a classic script.
    writeFileSync(path.join(out, 'index.html'), readFileSync(path.join(app, 'index.html'), 'utf8').replace('type="module" src="./main.js"', 'src="./main.js"'));
    const files = readdirSync(out);
    console.log(`   dist-webpack: ${files.join(', ')}`);
    if (files.filter((f) => f.endsWith('.js')).length < 2) throw new Error('webpack did not emit a worker chunk for kindling/worker');
    if (!files.some((f) => f.endsWith('.wasm'))) throw new Error('webpack did not emit the .wasm');
  });
  server = await startServer(SERVER_PORT);
  browser = await launch({ webgpu: false });
  for (const [bundler, outDir] of [['vite', 'dist'], ['webpack', 'dist-webpack']]) {
    site = await preview({ root: app, logLevel: 'warn', build: { outDir }, preview: { port: PREVIEW_PORT, strictPort: true, host: '127.0.0.1', headers: ISOLATED } });
    await step(`the ${bundler} build generates text on the page and in its worker`, async () => {
      const url = `http://127.0.0.1:${PREVIEW_PORT}/?model=${encodeURIComponent(`${server.base}/${MODEL}`)}`;
      const page = await openPage(browser, url);
      await page.waitForFunction(() => /^(done|failed)/.test(document.getElementById('status').textContent), null, { timeout: 120_000 });
      const [status, main, worker] = await page.evaluate(() => ['status', 'main-out', 'worker-out'].map((id) => document.getElementById(id).textContent));
      await screenshot(page, `${bundler}-app`);
      console.log(`   ${status}; page: ${JSON.stringify(main)}; worker: ${JSON.stringify(worker)}`);
      if (!status.startsWith('done')) throw new Error(status);
      if (!status.endsWith('worker threads 2')) throw new Error(`the worker should run the threaded build on 2 threads: ${status}`);
      if (!main.trim() || main !== worker) throw new Error('the page and the worker should generate the same greedy text');
      assertNoProblems(page, `the ${bundler} app`);
      await page.context().close();
    });
    await site.close();
    site = null;
  }
} finally {
  await browser?.close();
  await site?.close();
  server?.stop();
  rmSync(dir, { recursive: true, force: true });
}
