// The benchmark page's plan: for each model, Kindling on the CPU, Kindling on WebGPU
// (only on a hardware adapter unless forced), then wllama single-threaded; each row's
// figures go to the driver (run.mjs) as JSON POSTs as soon as they exist, so a timeout
// later still leaves the earlier rows.
//
// Query parameters (run.mjs sets them): report (the driver's URL), models (comma-separated
// URLs), prompt, gen, reps, warmup, webgpu (auto | force | off), wgPrompt, wgGen, wgReps,
// engines (comma-separated subset of kindling-cpu, kindling-webgpu, wllama,
// kindling-cpu-threads, wllama-threads, kindling-cpu-embed), threads (the threaded rows'
// count each), stepTimeout (seconds per row); embedModels (URLs of embedding
// models), embedBatches ("32x16 4x2000": INPUTSxTOKENS), embedReps: the embeddings rows.

import { makePrompts } from './prompt.js';
import { promptsWithTokenizer, runKindling, webgpuAdapter } from './kindling.js';
import { runWllama, wllamaVersion } from './wllama.js';
import { runEmbeddings } from './embed.js';
import { parseBatches } from '/bench/embed_inputs.js';

const q = new URLSearchParams(location.search);
const num = (key, dflt) => (q.has(key) ? Number(q.get(key)) : dflt);
const params = {
  models: (q.get('models') ?? '').split(',').filter(Boolean),
  promptTokens: num('prompt', 64),
  genTokens: num('gen', 64),
  reps: num('reps', 3),
  warmup: num('warmup', 1),
  webgpu: q.get('webgpu') ?? 'auto',
  // SwiftShader runs a SmolLM2 token in ~90 s: a forced WebGPU row gets tiny counts.
  wgPromptTokens: num('wgPrompt', 4),
  wgGenTokens: num('wgGen', 2),
  wgReps: num('wgReps', 1),
  engines: (q.get('engines') ?? 'kindling-cpu,kindling-webgpu,wllama').split(','),
  stepTimeoutS: num('stepTimeout', 900),
  embedModels: (q.get('embedModels') ?? '').split(',').filter(Boolean),
  embedBatches: parseBatches(q.get('embedBatches') ?? '32x16'),
  embedReps: num('embedReps', 2),
  threads: num('threads', 2),
};
const report = q.get('report');

const pre = document.getElementById('log');
async function post(message) {
  if (!report) return;
  // A string body is a "simple" cross-origin request: no preflight to answer.
  await fetch(report, { method: 'POST', body: JSON.stringify(message) }).catch(() => {});
}
function log(text) {
  pre.textContent += `${text}\n`;
  post({ type: 'log', text });
}

function withTimeout(promise, seconds, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${seconds} s`)), seconds * 1e3);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** One table row from an engine's runs: the medians over the measured (non-warm-up) runs. */
function summarize(base, result, warmup) {
  const measured = result.runs.slice(warmup);
  const pick = (k) => measured.map((r) => r[k]);
  return {
    ...base,
    status: 'ok',
    loadMs: result.loadMs,
    promptTokens: measured[0]?.promptTokens,
    genTokens: measured[0]?.genTokens,
    prefillTokS: median(pick('prefillTokS')),
    decodeTokS: median(pick('decodeTokS')),
    prefillRange: [Math.min(...pick('prefillTokS')), Math.max(...pick('prefillTokS'))],
    decodeRange: [Math.min(...pick('decodeTokS')), Math.max(...pick('decodeTokS'))],
    info: result.info,
    runs: result.runs,
    prompts: result.prompts?.map((p) => p.text),
  };
}

async function row(base, warmup, body) {
  if (!params.engines.includes(base.id)) return null;
  const t0 = performance.now();
  let out;
  try {
    out = summarize(base, await withTimeout(body(), params.stepTimeoutS, `${base.id} on ${base.model}`), warmup);
  } catch (e) {
    log(`${base.id} on ${base.model} failed: ${e?.stack ?? e}`);
    out = { ...base, status: 'error', reason: String(e?.message ?? e) };
  }
  out.wallS = (performance.now() - t0) / 1e3;
  await post({ type: 'row', row: out });
  return out;
}

async function benchModel(url, gpu, rows) {
  const model = decodeURIComponent(url.split('/').pop());
  const { promptTokens: n, genTokens, reps, warmup } = params;
  // The first Kindling row makes the prompts with the model's tokenizer; wllama reuses them.
  let prompts = null;
  const promptsFor = (n, count) => (tokenize) => makePrompts(tokenize, count, n);
  const keep = (result) => ((prompts ??= result.prompts), result);

  rows.push(await row({ id: 'kindling-cpu', engine: 'kindling', backend: 'cpu', model }, warmup, async () =>
    keep(await runKindling({ url, backend: 'cpu', promptsFor: promptsFor(n, warmup + reps), genTokens, warmup, log }))));

  const wgBase = { id: 'kindling-webgpu', engine: 'kindling', backend: 'webgpu', model };
  if (params.engines.includes(wgBase.id)) {
    const skip = params.webgpu === 'off' ? 'turned off (--webgpu=off)'
      : !gpu.caps.webgpu ? `no WebGPU adapter: ${gpu.caps.reason}`
      : gpu.software && params.webgpu !== 'force' ? `software adapter (${gpu.label}); --webgpu=force runs it anyway`
      : null;
    if (skip) {
      log(`kindling webgpu on ${model}: skipped: ${skip}`);
      const out = { ...wgBase, status: 'skipped', reason: skip };
      await post({ type: 'row', row: out });
      rows.push(out);
    } else {
      // A software adapter gets tiny counts and no warm-up; a real GPU the full plan.
      const [wn, wg, wr, ww] = gpu.software ? [params.wgPromptTokens, params.wgGenTokens, params.wgReps, 0] : [n, genTokens, reps, warmup];
      rows.push(await row(wgBase, ww, () =>
        runKindling({ url, backend: 'webgpu', promptsFor: promptsFor(wn, ww + wr), genTokens: wg, warmup: ww, log })));
    }
  }

  rows.push(await row({ id: 'wllama', engine: 'wllama', backend: 'cpu-1t', model }, warmup, async () => {
    prompts ??= await promptsWithTokenizer(url, promptsFor(n, warmup + reps));
    return runWllama({ url, prompts, genTokens, warmup, log });
  }));

  // The threaded pair: both engines on `threads` threads (a cross-origin-isolated page).
  const threads = params.threads;
  rows.push(await row({ id: 'kindling-cpu-threads', engine: 'kindling', backend: `cpu-${threads}t`, model, threads }, warmup, async () => {
    prompts ??= await promptsWithTokenizer(url, promptsFor(n, warmup + reps));
    return runKindling({ url, backend: 'cpu', prompts, threads, genTokens, warmup, log });
  }));
  rows.push(await row({ id: 'wllama-threads', engine: 'wllama', backend: `cpu-${threads}t`, model, threads }, warmup, async () => {
    prompts ??= await promptsWithTokenizer(url, promptsFor(n, warmup + reps));
    return runWllama({ url, prompts, genTokens, warmup, log, threads });
  }));
}

/** Kindling's CPU path on an embedding model: one row per batch (see embed.js). */
async function benchEmbeddings(url, rows) {
  const base = { id: 'kindling-cpu-embed', engine: 'kindling', backend: 'cpu', model: decodeURIComponent(url.split('/').pop()) };
  if (!params.engines.includes(base.id)) return;
  const t0 = performance.now();
  let out;
  try {
    const results = await withTimeout(runEmbeddings({ url, batches: params.embedBatches, reps: params.embedReps, log }), params.stepTimeoutS, `${base.id} on ${base.model}`);
    out = results.map((r) => ({ ...base, status: 'ok', ...r }));
  } catch (e) {
    log(`${base.id} on ${base.model} failed: ${e?.stack ?? e}`);
    out = [{ ...base, status: 'error', reason: String(e?.message ?? e) }];
  }
  for (const r of out) {
    r.wallS = (performance.now() - t0) / 1e3;
    await post({ type: 'row', row: r });
    rows.push(r);
  }
}

async function main() {
  if (!params.models.length && !params.embedModels.length) throw new Error('no models: pass ?models=URL[,URL] or ?embedModels=URL');
  if (!(params.reps >= 1)) throw new Error('reps must be at least 1');
  const gpu = await webgpuAdapter();
  const env = {
    userAgent: navigator.userAgent,
    hardwareConcurrency: navigator.hardwareConcurrency,
    crossOriginIsolated: self.crossOriginIsolated,
    simd128: gpu.caps.simd128,
    webgpu: { available: gpu.caps.webgpu, adapter: gpu.caps.adapter, software: gpu.software, reason: gpu.caps.reason },
    wllama: wllamaVersion(),
  };
  log(`WebGPU adapter: ${gpu.label ?? 'none'}${gpu.software ? ' (software)' : ''}`);
  const rows = [];
  for (const url of params.models) await benchModel(url, gpu, rows);
  for (const url of params.embedModels) await benchEmbeddings(url, rows);
  return { env, params, rows: rows.filter(Boolean) };
}

main().then(
  (results) => {
    pre.textContent += `${JSON.stringify(results, null, 2)}\n`;
    return post({ type: 'done', results });
  },
  (e) => {
    pre.textContent += `failed: ${e?.stack ?? e}\n`;
    return post({ type: 'fatal', message: String(e?.stack ?? e) });
  },
);
