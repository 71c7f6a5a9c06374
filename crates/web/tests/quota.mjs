// The model cache under a real storage limit: Chromium's quota for the test server's
// origin is lowered through the DevTools protocol (Storage.overrideQuotaForOrigin; a
// page cannot lower it, and chromedriver's session is the test runner's), then a page of
// that origin loads SmolLM2 (98 MB) with a 40 MB quota:
//   - with Content-Length and without (the size unknown up front), OPFS refuses a write
//     part-way (Chromium's estimate() does not show the lowered quota, so the up-front
//     check cannot see it: cache_api.js tests that check with estimate() replaced);
// both fail with QuotaExceededError saying what was needed and what the browser took,
// leave no entry and (almost) no bytes in the origin's storage; with cache: 'off' the
// model loads.
//
//   node --experimental-websocket crates/web/tests/quota.mjs http://127.0.0.1:8631
// (scripts/test_browser.sh runs it with the server it started; node 22+ needs no flag.)

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const server = process.argv[2] ?? 'http://127.0.0.1:8631';
const QUOTA = 40e6;
const MODEL = '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf';

/** A minimal DevTools protocol client: send(method, params) → result. */
function connect(wsUrl) {
  const ws = new WebSocket(wsUrl);
  let next = 1;
  const waiting = new Map();
  ws.onmessage = ({ data }) => {
    const msg = JSON.parse(data);
    const w = waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (msg.error) w.reject(new Error(`${w.method}: ${msg.error.message}`));
    else w.resolve(msg.result);
  };
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject, method });
      ws.send(JSON.stringify({ id, method, params }));
    });
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve({ send, close: () => ws.close() });
    ws.onerror = () => reject(new Error(`cannot connect to ${wsUrl}`));
  });
}

async function waitFor(what, f, seconds = 30) {
  const deadline = Date.now() + seconds * 1e3;
  for (;;) {
    try {
      const v = await f();
      if (v) return v;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// What runs in the page: one async function, its result returned by value.
async function inPage(model, quota) {
  const { Model } = await import('/www/index.js');
  const log = [];
  const failures = [];
  const check = (ok, what) => ok || failures.push(what);
  const opfsEntries = async () => {
    const root = await navigator.storage.getDirectory();
    let dir;
    try {
      dir = await root.getDirectoryHandle('kindling-models-v1');
    } catch {
      return 0;
    }
    let n = 0;
    for await (const _ of dir.keys()) n++;
    return n;
  };
  await Model.cache.clear();
  const before = await navigator.storage.estimate();
  log.push(`quota ${before.quota}, usage ${before.usage}`);
  // Chromium's estimate() does not show a quota set through DevTools; the writes meet it.
  for (const [what, url] of [['with Content-Length', model], ['without Content-Length', `${model}?nolength=1`]]) {
    try {
      await Model.load(url, { backend: 'cpu', contextLength: 64 });
      failures.push(`${what}: the load succeeded under a ${quota}-byte quota`);
    } catch (e) {
      log.push(`${what}: ${e.name}: ${e.message}`);
      check(e.name === 'QuotaExceededError', `${what}: ${e.name}: ${e.message}`);
      check(what.startsWith('without') ? e.needed === null : e.needed > quota, `${what}: needed ${e.needed}`);
      check(e.available != null && e.available <= quota, `${what}: available ${e.available}`);
    }
    const list = await Model.cache.list();
    const entries = await opfsEntries();
    const { usage } = await navigator.storage.estimate();
    log.push(`${what}: after the failure ${list.length} cache entries, ${entries} OPFS folders, origin usage ${usage}`);
    check(list.length === 0 && entries === 0, `${what}: left ${list.length} entries, ${entries} folders`);
    check(usage < 1e6, `${what}: the origin still uses ${usage} bytes`);
  }
  const loaded = await Model.load(model, { backend: 'cpu', contextLength: 64, cache: 'off' });
  const { tokenIds } = await loaded.complete('The capital of France is', { maxTokens: 4, temperature: 0, ignoreEos: true });
  await loaded.dispose();
  log.push(`cache 'off' under the quota: ids ${JSON.stringify(tokenIds)}`);
  check(tokenIds.length === 4, `cache 'off': ${tokenIds.length} ids`);
  return { log, failures };
}

async function main() {
  const profile = mkdtempSync(path.join(tmpdir(), 'kindling-quota-'));
  // The no-WebGPU browser run's options (quiet: no background requests, which this
  // machine's closed network refuses), as scripts/test_browser.sh's restart run takes them.
  const options = JSON.parse(readFileSync(new URL('../webdriver-nogpu.json', import.meta.url), 'utf8'));
  const chrome = spawn('chromium', [
    '--headless=new', ...options['goog:chromeOptions'].args, '--remote-debugging-port=0',
    `--user-data-dir=${profile}`, 'about:blank',
  ], { detached: true, stdio: 'ignore' });
  let cdp;
  try {
    const port = await waitFor('DevToolsActivePort', () => readFileSync(path.join(profile, 'DevToolsActivePort'), 'utf8').split('\n')[0]);
    const pageWs = await waitFor('a page target', async () => {
      const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
      return targets.find((t) => t.type === 'page')?.webSocketDebuggerUrl;
    });
    cdp = await connect(pageWs);
    const origin = new URL(server).origin;
    await cdp.send('Page.enable');
    await cdp.send('Page.navigate', { url: `${server}/package.json` });
    await waitFor('the page', async () => {
      const r = await cdp.send('Runtime.evaluate', { expression: 'location.origin + document.readyState', returnByValue: true });
      return r.result.value === `${origin}complete`;
    });
    // After the page is at the origin: before it, estimate() in the page kept reporting
    // the default quota (writes were refused at the override all the same).
    await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: QUOTA });
    const r = await cdp.send('Runtime.evaluate', {
      expression: `(${inPage})(${JSON.stringify(`${server}/${MODEL}`)}, ${QUOTA})`,
      awaitPromise: true,
      returnByValue: true,
    });
    if (r.exceptionDetails) throw new Error(`the page threw: ${JSON.stringify(r.exceptionDetails)}`);
    const { log, failures } = r.result.value;
    for (const line of log) console.log(`[quota] ${line}`);
    if (failures.length) {
      console.error(`quota test failures:\n${failures.join('\n')}`);
      process.exitCode = 1;
    } else {
      console.log('quota test: ok');
    }
  } finally {
    cdp?.close();
    try {
      process.kill(-chrome.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`quota test: ${e.stack ?? e}`);
  process.exit(1);
});
