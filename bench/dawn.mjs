// The npm package's own wasm on a real GPU through Dawn (Chrome's WebGPU library), via
// ../shared/dawn-node's shim, which gives Node a browser-like `navigator.gpu`.
//
//   bash .dawn/run.sh .dawn bench/dawn.mjs PKG_DIR NAME=FILE.gguf [NAME=FILE.gguf ...]
//
// PKG_DIR holds www/'s index.js, errors.js, source.js and the built wasm under wasm/
// (bench/dawn.sh assembles it). Runs what `kindling bench` runs, through the public JS
// API: load from a Blob (streamed chunk by chunk), prompts of 8, 512, 2,048 and 4,096 tokens
// (PROMPTS; prefill tok/s and decode after each), 128 greedy tokens each, one warm-up and
// REPS measured repetitions (median). Prints one JSON line per model.
//
// SCHEMAS="NAME=FILE.json ..." (issue 26) adds, per model and schema, free against
// constrained decoding of the same chat prompt (bench/schemas/NAME.prompt.txt beside the
// schema), greedy, up to CONSTRAINED_TOKENS tokens, as `kindling bench --json-schema` does
// natively: `constrained.NAME` = { free, constrained, ratio } (decode tok/s, medians).
// PROMPTS="" leaves out the plain rows.
import fs from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [pkgDir, ...specs] = process.argv.slice(2);
if (!pkgDir || specs.length === 0) {
  console.error('usage: dawn.mjs PKG_DIR NAME=FILE.gguf ...');
  process.exit(2);
}
const REPS = Number(process.env.REPS ?? 3);
const GEN_TOKENS = Number(process.env.GEN_TOKENS ?? 128);
const PROMPTS = (process.env.PROMPTS ?? '8 512 2048 4096').split(/\s+/).filter(Boolean).map(Number);
const SCHEMAS = (process.env.SCHEMAS ?? '').split(/\s+/).filter(Boolean).map((s) => s.split('='));
const CONSTRAINED_TOKENS = Number(process.env.CONSTRAINED_TOKENS ?? 256);

if (process.env.DAWN_TOGGLES && !process.env.TRACE_GPU) dawnWith([]);
const trace = process.env.TRACE_API ? await traceWebGpuCalls() : null;
const profiler = process.env.TRACE_GPU ? await gpuProfiler() : null;
const { Model, initEngine } = await import(pathToFileURL(path.resolve(pkgDir, 'index.js')).href);
await initEngine(fs.readFileSync(path.resolve(pkgDir, 'wasm/kindling_web_bg.wasm')));
const caps = await Model.capabilities();
console.log(JSON.stringify({ capabilities: { adapter: caps.adapter, features: caps.features } }));

/**
 * Ordinary ids spread over the vocabulary, as `kindling bench` uses (rep 0 is its
 * prompt). Each repetition starts differently, or the session's prefix reuse would skip
 * the prefill that `kindling bench` (a new session per repetition) measures.
 */
function benchPrompt(n, vocab, rep) {
  return Array.from({ length: n }, (_, i) => 1 + ((i * 7919 + rep * 1009) % Math.max(vocab - 1, 1)));
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

for (const spec of specs) {
  const [name, file] = spec.split('=');
  const blob = await fs.openAsBlob(file);
  const start = performance.now();
  let uploads = 0;
  const model = await Model.load(blob, {
    backend: process.env.BACKEND ?? 'webgpu', // 'cpu' to check the script on a machine without a GPU
    contextLength: Math.max(...PROMPTS, 0) + GEN_TOKENS + CONSTRAINED_TOKENS + 512,
    onProgress: (p) => (uploads += p.phase === 'upload'),
  });
  const loadMs = performance.now() - start;
  const info = model.info;
  const result = { model: name, bytes: blob.size, load_ms: loadMs, progress_events: uploads, backend: info.backend, adapter: info.adapter };
  for (const n of PROMPTS) {
    const prefill = [];
    const decode = [];
    for (let rep = 0; rep <= REPS; rep++) {
      const r = await model.complete(benchPrompt(n, info.vocabSize, rep), { maxTokens: GEN_TOKENS, temperature: 0, ignoreEos: true });
      if (r.tokenIds.length !== GEN_TOKENS) throw new Error(`${name}: ${r.tokenIds.length} tokens, wanted ${GEN_TOKENS} (${r.finishReason})`);
      if (rep === 0) {
        trace?.reset();
        continue; // warm-up: pipelines, bind groups
      }
      prefill.push(r.timings.prefillTokensPerSecond);
      decode.push(r.timings.decodeTokensPerSecond);
    }
    if (trace) result[`p${n}_api_per_token`] = trace.perToken(REPS * GEN_TOKENS);
    if (profiler) result[`p${n}_gpu_us`] = await profileKernels(model, benchPrompt(n, info.vocabSize, REPS + 1));
    result[`p${n}`] = { prefill_tok_s: median(prefill), decode_tok_s: median(decode), decode_runs: decode };
  }
  for (const [schemaName, schemaFile] of SCHEMAS) {
    result.constrained ??= {};
    result.constrained[schemaName] = await constrainedRow(model, schemaFile);
  }
  await model.dispose();
  console.log(JSON.stringify(result));
}

/** Free and constrained decode tok/s of the schema's prompt (greedy; medians of REPS). */
async function constrainedRow(model, schemaFile) {
  const schema = fs.readFileSync(schemaFile, 'utf8');
  const user = fs.readFileSync(schemaFile.replace(/\.json$/, '.prompt.txt'), 'utf8').trim();
  const text = model.applyChatTemplate([{ role: 'user', content: user }]);
  const ids = model.tokenize(text, { addSpecial: true, parseSpecial: true });
  const row = { prompt_tokens: ids.length };
  // Free and constrained runs alternate, so that drift on the machine (Dawn's decode
  // speed wanders by 10-20% between runs there) lands on both alike; the ratio is also
  // taken per pair of neighbouring runs.
  const kinds = [['free', { ignoreEos: true }], ['constrained', { jsonSchema: schema }]];
  const runs = { free: [], constrained: [] };
  for (let rep = 0; rep <= REPS; rep++) {
    for (const [kind, extra] of kinds) {
      const r = await model.complete(ids, { maxTokens: CONSTRAINED_TOKENS, temperature: 0, ...extra });
      if (rep > 0) runs[kind].push(r); // rep 0 warms up: pipelines, the constraint's lexer
    }
  }
  for (const [kind] of kinds) {
    const last = runs[kind].at(-1);
    const decode = runs[kind].map((r) => r.timings.decodeTokensPerSecond);
    row[kind] = {
      decode_tok_s: median(decode),
      decode_runs: decode,
      constraint_ms_per_token: median(runs[kind].map((r) => r.timings.constraintMs / Math.max(r.tokenIds.length, 1))),
      tokens: last.tokenIds.length,
      finish_reason: last.finishReason,
    };
  }
  row.text = runs.constrained.at(-1).text;
  row.pair_ratios = runs.free.map((f, i) => runs.constrained[i].timings.decodeTokensPerSecond / f.timings.decodeTokensPerSecond);
  row.ratio = row.constrained.decode_tok_s / row.free.decode_tok_s;
  return row;
}

/**
 * navigator.gpu made again with these Dawn flags, plus DAWN_TOGGLES="a,b" turned on (e.g.
 * disable_robustness, disable_workgroup_init: what a kernel pays for a browser's safety;
 * no page can do this). Without TRACE_GPU, the toggles apply to the plain rows too.
 */
function dawnWith(flags) {
  const webgpu = module.createRequire(import.meta.url)(process.env.DAWN_WEBGPU_DIR ?? '/tmp/dawn-node/webgpu');
  const toggles = process.env.DAWN_TOGGLES ? [`enable-dawn-features=${process.env.DAWN_TOGGLES}`] : [];
  const gpu = webgpu.create([...flags, ...toggles]);
  Object.defineProperty(globalThis, 'navigator', { value: { gpu, userAgent: 'dawn.node' }, configurable: true });
}

/**
 * TRACE_GPU=1: Dawn with exact timestamps and the kernel profiler (bench/dawn_profile.mjs).
 * Dawn rounds timestamps unless told not to, so navigator.gpu is made again with that off.
 */
async function gpuProfiler() {
  dawnWith(['disable-dawn-features=timestamp_quantization']);
  const { installGpuProfiler } = await import('./dawn_profile.mjs');
  return installGpuProfiler();
}

/** GPU µs per kernel: of a prefill of `ids` (+ its first token), then per decode token. */
async function profileKernels(model, ids) {
  profiler.enable(true);
  await model.complete(ids, { maxTokens: 1, temperature: 0 });
  profiler.enable(false);
  const prefill = await profiler.report(1);
  const steps = Number(process.env.TRACE_STEPS ?? 16);
  let seen = 0;
  for await (const _ of model.generate(ids.slice(1), { maxTokens: steps + 1, temperature: 0, ignoreEos: true })) {
    // The prompt's prefill and first token unprofiled, then `steps` decode tokens.
    if (++seen === 1) profiler.enable(true);
  }
  profiler.enable(false);
  return { prefill, decode_per_token: await profiler.report(steps) };
}

/**
 * TRACE_API=1: counts the WebGPU calls the engine makes and the host time spent inside
 * each (Dawn's validation and encoding), to tell host-bound decoding from GPU-bound.
 * Wraps the prototypes of Dawn's objects, found through a throwaway device.
 */
async function traceWebGpuCalls() {
  const device = await (await navigator.gpu.requestAdapter()).requestDevice();
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  const protos = {
    pass: Object.getPrototypeOf(pass),
    encoder: Object.getPrototypeOf(encoder),
    queue: Object.getPrototypeOf(device.queue),
    buffer: Object.getPrototypeOf(device.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ })),
  };
  pass.end();
  device.destroy();
  const stats = new Map();
  const wrap = (proto, name, label) => {
    const inner = proto[name];
    if (typeof inner !== 'function') return;
    proto[name] = function (...args) {
      const t = performance.now();
      try {
        return inner.apply(this, args);
      } finally {
        const s = stats.get(label) ?? { calls: 0, ms: 0 };
        s.calls += 1;
        s.ms += performance.now() - t;
        stats.set(label, s);
      }
    };
  };
  for (const m of ['setPipeline', 'setBindGroup', 'dispatchWorkgroups', 'end']) wrap(protos.pass, m, `pass.${m}`);
  for (const m of ['beginComputePass', 'copyBufferToBuffer', 'finish']) wrap(protos.encoder, m, `encoder.${m}`);
  for (const m of ['submit', 'writeBuffer']) wrap(protos.queue, m, `queue.${m}`);
  for (const m of ['getMappedRange', 'unmap']) wrap(protos.buffer, m, `buffer.${m}`);
  // mapAsync: the time until its promise settles (the wait for the GPU), not the call.
  const mapAsync = protos.buffer.mapAsync;
  protos.buffer.mapAsync = function (...args) {
    const t = performance.now();
    const settle = () => {
      const s = stats.get('buffer.mapAsync (until settled)') ?? { calls: 0, ms: 0 };
      s.calls += 1;
      s.ms += performance.now() - t;
      stats.set('buffer.mapAsync (until settled)', s);
    };
    const promise = mapAsync.apply(this, args);
    promise.then(settle, settle);
    return promise;
  };
  return {
    reset: () => stats.clear(),
    perToken(tokens) {
      const out = {};
      let ms = 0;
      for (const [k, s] of stats) {
        out[k] = { calls: +(s.calls / tokens).toFixed(2), us: +((s.ms * 1e3) / tokens).toFixed(1) };
        if (!k.startsWith('buffer.mapAsync')) ms += s.ms;
      }
      out.calls_total_us = +((ms * 1e3) / tokens).toFixed(1);
      stats.clear();
      return out;
    },
  };
}
