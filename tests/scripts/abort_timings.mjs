// The abort timings of crates/web/tests/browser/abort.js, by hand, in headless Chromium
// (playwright-core with the system Chromium) against tests/scripts/serve.py over any
// checkout: so the same test can time the package before and after a change.
//
//   node tests/scripts/abort_timings.mjs [cpu|webgpu] [--root DIR] [--port N]
//
// --root serves another checkout (e.g. a `git worktree` of an older commit with its own
// www/wasm built); abort.js itself is always this checkout's.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { launch } from '../pages/lib/browser.mjs';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args.splice(at, 2)[1] : fallback;
};
const root = path.resolve(flag('--root', path.resolve(import.meta.dirname, '../..')));
const port = Number(flag('--port', 8655));
const backend = args[0] ?? 'cpu';
const here = path.resolve(import.meta.dirname, '../..');

const server = spawn('python3', [path.join(here, 'tests/scripts/serve.py'), '--port', String(port), '--root', root], { stdio: 'inherit' });
const base = `http://127.0.0.1:${port}`;
const testBase = `http://127.0.0.1:${port + 1}`;
const tests = spawn('python3', [path.join(here, 'tests/scripts/serve.py'), '--port', String(port + 1), '--root', here], { stdio: 'inherit' });
try {
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`${base}/package.json`).then((r) => r.ok, () => false);
    if (up && (await fetch(`${testBase}/package.json`).then((r) => r.ok, () => false))) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const browser = await launch({ webgpu: backend === 'webgpu' });
  try {
    const page = await browser.newPage();
    page.on('console', (m) => (process.env.VERBOSE || m.text().startsWith('abort.js:')) && console.log(`[page] ${m.text()}`));
    await page.goto(`${base}/package.json`);
    const report = await page.evaluate(async ([b, t, be]) => {
      const { runAbortTests } = await import(`${t}/crates/web/tests/browser/abort.js`);
      return runAbortTests(b, be);
    }, [base, testBase, backend]);
    for (const line of report.log) console.log(line);
    for (const f of report.failures) console.log(`FAIL: ${f}`);
    process.exitCode = report.failures.length ? 1 : 0;
  } finally {
    await browser.close();
  }
} finally {
  server.kill();
  tests.kill();
}
