// Headless Chromium for the page tests, driven by playwright-core with the system
// Chromium (apt `chromium`; Playwright cannot download its own browsers here), and the
// repository's test server (tests/scripts/serve.py). Every page a test opens goes
// through `openPage`, which records console errors and uncaught exceptions so that a
// test can fail on any of them.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(import.meta.dirname, '../../..');
export const ARTIFACTS = path.join(ROOT, 'tests/pages/artifacts');

/** The Chromium binary: $CHROMIUM, else Debian's real binary (/usr/bin/chromium is a shell wrapper). */
function chromiumPath() {
  const candidates = [process.env.CHROMIUM, '/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  const found = candidates.find((p) => p && existsSync(p));
  if (!found) throw new Error('no Chromium found: apt-get install chromium (or set CHROMIUM=/path/to/chrome)');
  return found;
}

/**
 * Starts Chromium. `webgpu: true` turns WebGPU on (SwiftShader is picked by itself in a
 * headless Chromium without a GPU, as in crates/web/webdriver.json); without it
 * `navigator.gpu.requestAdapter()` answers null and the package takes the CPU path.
 */
export async function launch({ webgpu }) {
  const args = ['--no-sandbox', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'];
  if (webgpu) args.push('--enable-unsafe-webgpu');
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args });
}

/**
 * A new page at `url` in a fresh context, with `page.problems`: the console errors and
 * uncaught exceptions seen so far (each a string). `viewport` defaults to a laptop's.
 */
export async function openPage(browser, url, { viewport = { width: 1280, height: 900 } } = {}) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') page.problems.push(`console error: ${msg.text()} (${msg.location()?.url ?? ''})`);
    if (process.env.KINDLING_PAGES_VERBOSE) console.log(`  [page ${msg.type()}] ${msg.text()}`);
  });
  page.on('pageerror', (e) => page.problems.push(`uncaught: ${e.message}`));
  page.on('requestfailed', (r) => {
    // An aborted request is a generation or download the test stopped on purpose.
    if (!/ERR_ABORTED/.test(r.failure()?.errorText ?? '')) page.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  await page.goto(url);
  return page;
}

/** Throws when the page has logged a console error or thrown. */
export function assertNoProblems(page, what) {
  if (page.problems.length) throw new Error(`${what}: ${page.problems.length} problem(s) on the page:\n  ${page.problems.join('\n  ')}`);
}

export async function screenshot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * With KINDLING_PAGES_DOCS=DIR set, saves `target` (a locator's element, or a page's viewport) as DIR/NAME.png (the
 * README's screenshots: `KINDLING_PAGES_DOCS=docs/screenshots node tests/pages/pages.test.mjs on`).
 */
export async function docShot(target, name, options = {}) {
  const dir = process.env.KINDLING_PAGES_DOCS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await target.screenshot({ ...options, path: path.join(dir, `${name}.png`) });
}

/**
 * Runs axe-core (npm `axe-core`, injected into the page) over the page as it is now and
 * throws on any serious or critical violation, listing each rule, its help text and the
 * elements it names. Logs and returns the violations of lesser impact.
 */
export async function assertAccessible(page, what) {
  const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: axePath });
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (bad.length) {
    const lines = bad.map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 6).join(', ')}${v.nodes.length > 6 ? ', …' : ''}`);
    throw new Error(`${what}: ${bad.length} serious or critical accessibility violation(s) (axe-core):\n  ${lines.join('\n  ')}`);
  }
  console.log(`   axe-core, ${what}: nothing serious or critical${violations.length ? `; minor: ${violations.map((v) => v.id).join(', ')}` : ''}`);
  return violations;
}

/**
 * Starts tests/scripts/serve.py on `port` (repository root); resolves when it answers.
 * `isolate`: its pages are cross-origin isolated (COOP/COEP headers).
 */
export async function startServer(port, { isolate = false } = {}) {
  const args = [path.join(ROOT, 'tests/scripts/serve.py'), '--port', String(port), '--root', ROOT, ...(isolate ? ['--isolate'] : [])];
  const child = spawn('python3', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  // serve.py prints "serving ..." once it holds the port. Waiting for that line, not for
  // an answer on the port, keeps a server already there (another suite's, without
  // --isolate, say) from answering for ours when our bind fails.
  await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve.py did not start on ${base} within 10 s`)), 10_000);
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('serving ')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`serve.py on port ${port} exited (${code ?? signal}) before serving: is the port taken?`));
    });
  }).catch((e) => {
    child.kill();
    throw e;
  });
  child.stdout.resume();
  return { base, stop: () => child.kill() };
}

/** Runs `f` and prints how long it took. */
export async function step(name, f) {
  const start = Date.now();
  process.stdout.write(`-- ${name}\n`);
  const value = await f();
  console.log(`   ok (${((Date.now() - start) / 1e3).toFixed(1)} s)`);
  return value;
}
