// Qwen2.5-Coder 0.5B and 1.5B through the JS API (www/index.js), run by
// large_models.rs. Each scenario runs in a module worker of its own (`inWorker`): the
// worker imports the package anew, so its WebAssembly instance starts empty and its
// memory figure is that of one load, and the page's main thread stays free while
// SwiftShader computes for minutes. Each scenario returns `{ log, failures }`.

const QWEN05 = '.cache/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf';
const QWEN15 = '.cache/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf';
const TINY = '.cache/synthetic/tiny-llama.gguf';
const MiB = 2 ** 20;
const mib = (b) => (b / MiB).toFixed(1);

/** What `model.info` must say of each file (parameters: every weight value in the file,
 *  as llama.cpp counts them; these files store output.weight apart from token_embd). */
const QWEN_INFO = {
  [QWEN05]: { name: 'Qwen2.5 Coder 0.5B Instruct AWQ', parameters: 630167424, dataBytes: 485452288 },
  [QWEN15]: { name: 'Qwen2.5 Coder 1.5B Instruct GGUF', parameters: 1777088000, dataBytes: 1111370240 },
};
const FILE_BYTES = {
  [QWEN05]: 491400064,
  [QWEN15]: 1117320768,
};

/** WebGPU load of the 1.5B: the engine's own share (chunks, header, buffers' bookkeeping)
 *  may take 64 MiB, the tokenizer ~24 MiB more at its peak while it is built. */
const WEBGPU_LOAD_BUDGET = 64 * MiB;
const TOKENIZER_PEAK = 24 * MiB;

/**
 * Runs `scenario(base, ...args)` of this module in a new module worker and resolves with
 * its report. The worker is a same-origin blob: script (the page and the model server
 * are different origins) that imports this file from the model server.
 */
export function inWorker(base, scenario, args = []) {
  const source = `import * as scenarios from '${base}/crates/web/tests/browser/large_models.js';
self.onmessage = async ({ data }) => {
  try {
    const { log, failures } = await scenarios[data.scenario](...data.args);
    self.postMessage({ report: { log, failures } });
  } catch (e) {
    self.postMessage({ error: String(e?.name) + ': ' + String(e?.message) + '\\n' + String(e?.stack) });
  }
};`;
  const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  const worker = new Worker(url, { type: 'module', name: scenario });
  return new Promise((resolve) => {
    const end = (report) => {
      worker.terminate();
      URL.revokeObjectURL(url);
      resolve(report);
    };
    worker.onmessage = ({ data }) => end(data.report ?? { log: [], failures: [`${scenario} threw in its worker: ${data.error}`] });
    worker.onerror = (e) => end({ log: [], failures: [`${scenario}: worker error: ${e.message ?? e}`] });
    worker.postMessage({ scenario, args: [base, ...args] });
  });
}

function report() {
  const log = [];
  const failures = [];
  return { log, failures, check: (ok, what) => ok || failures.push(what) };
}

async function engine(base) {
  const kindling = await import(`${base}/www/index.js`);
  const caps = await kindling.Model.capabilities();
  return { kindling, Model: kindling.Model, caps, fresh: await kindling.Model.memoryBytes() };
}

function checkInfo(check, info, path, backend, contextLength) {
  const want = {
    ...QWEN_INFO[path],
    architecture: 'qwen2',
    quantization: 'Q4_K_M',
    trainedContextLength: 32768,
    contextLength,
    vocabSize: 151936,
    bosTokenId: 151643,
    eosTokenId: 151645,
    hasChatTemplate: true,
    backend,
  };
  for (const [k, v] of Object.entries(want)) check(info[k] === v, `${path}: info.${k} is ${JSON.stringify(info[k])}, expected ${JSON.stringify(v)}`);
}

/** The fixture's greedy ids up to its first near-tie (margin < 0.1) against `got`. */
function checkGreedy(check, fx, got, what) {
  const tie = fx.margins.findIndex((m) => m < 0.1);
  const k = Math.min(got.tokenIds.length, tie < 0 ? fx.token_ids.length : tie);
  check(JSON.stringify(got.promptTokenIds) === JSON.stringify(fx.prompt_token_ids), `${what}: prompt ids differ from native`);
  check(k > 0 && JSON.stringify(got.tokenIds.slice(0, k)) === JSON.stringify(fx.token_ids.slice(0, k)),
    `${what}: greedy ${JSON.stringify(got.tokenIds)} vs native ${JSON.stringify(fx.token_ids)} (first ${k} compared)`);
  return k;
}

/**
 * The 1.5B (1.1 GB) from its URL onto WebGPU: peak WebAssembly memory stays within
 * 64 MiB plus the tokenizer (the weights stream chunk by chunk into GPU buffers). On
 * SwiftShader only the upload is timed, no token.
 */
export async function qwen15WebgpuLoad(base) {
  const r = report();
  const { Model, caps, fresh } = await engine(base);
  if (!caps.webgpu) return { ...r, log: ['no WebGPU: the 1.5B WebGPU load is skipped'] };
  r.check(fresh < 16 * MiB, `the worker's wasm instance is not fresh (${fresh} bytes)`);
  let upload = 0;
  const t = performance.now();
  const m = await Model.load(`${base}/${QWEN15}`, {
    backend: 'webgpu',
    contextLength: 64,
    onProgress: (p) => p.phase === 'upload' && (upload = p.loaded),
  });
  const ms = performance.now() - t;
  const peak = await Model.memoryBytes();
  r.log.push(`Qwen2.5-Coder-1.5B WebGPU load from URL: ${(ms / 1000).toFixed(1)} s (${(upload / MiB / (ms / 1000)).toFixed(0)} MiB/s), ` +
    `peak wasm memory ${mib(peak)} MiB (${mib(fresh)} MiB fresh; ${mib(m.info.dataBytes)} MiB of tensors uploaded; adapter ${JSON.stringify(m.info.adapter)})`);
  r.check(upload === FILE_BYTES[QWEN15], `upload progress ended at ${upload} of ${FILE_BYTES[QWEN15]} bytes`);
  r.check(peak <= WEBGPU_LOAD_BUDGET + TOKENIZER_PEAK,
    `1.5B WebGPU load: peak wasm memory ${mib(peak)} MiB > ${mib(WEBGPU_LOAD_BUDGET)} MiB + ${mib(TOKENIZER_PEAK)} MiB tokenizer`);
  checkInfo(r.check, m.info, QWEN15, 'webgpu', 64);
  await m.dispose();
  return r;
}

/**
 * The 1.5B on the CPU backend (WebAssembly memory holds its 1.1 GB): loads, and its
 * greedy ids equal the native engine's. Reports the memory it took.
 */
export async function qwen15Cpu(base, fixtureText) {
  const r = report();
  const { Model, fresh } = await engine(base);
  const fx = JSON.parse(fixtureText).models['qwen2.5-1.5b'].cases[0];
  const t = performance.now();
  const m = await Model.load(`${base}/${QWEN15}`, { backend: 'cpu', contextLength: 256 });
  const loadMs = performance.now() - t;
  const peak = await Model.memoryBytes();
  r.log.push(`Qwen2.5-Coder-1.5B CPU load: ${(loadMs / 1000).toFixed(1)} s, wasm memory ${mib(peak)} MiB ` +
    `(${mib(m.info.dataBytes)} MiB of weights; ${mib(fresh)} MiB fresh)`);
  checkInfo(r.check, m.info, QWEN15, 'cpu', 256);
  r.check(peak < m.info.dataBytes + 128 * MiB, `1.5B CPU load: wasm memory ${mib(peak)} MiB, weights ${mib(m.info.dataBytes)} MiB`);
  const g = await m.complete(fx.prompt, { maxTokens: fx.token_ids.length, temperature: 0 });
  const k = checkGreedy(r.check, fx, g, '1.5B on the CPU');
  r.log.push(`1.5B CPU greedy ${JSON.stringify(g.text)}: equal to native for ${k}/${fx.token_ids.length} steps; ` +
    `prefill ${g.timings.prefillTokensPerSecond?.toFixed(2)} tok/s, decode ${g.timings.decodeTokensPerSecond?.toFixed(2)} tok/s`);
  await m.dispose();
  return r;
}

/** `llama.context_length` of a GGUF header set to `n` (a u32 value after its key). */
function withContextLength(bytes, n) {
  const key = new TextEncoder().encode('llama.context_length');
  const at = bytes.findIndex((_, i) => key.every((b, j) => bytes[i + j] === b));
  if (at < 0) throw new Error('no llama.context_length in the header');
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  if (view.getUint32(at + key.length, true) !== 4) throw new Error('llama.context_length is not a u32');
  const out = bytes.slice();
  new DataView(out.buffer).setUint32(at + key.length + 4, n, true);
  return out;
}

/**
 * Models too large for WebAssembly memory on the CPU backend are refused with an
 * OutOfMemoryError that names what they need, before their weights download:
 *  1. a 5 GiB file (the 1.5B padded with zeros by the server): refused when the loader
 *     is created, from Content-Length, before a byte of the body is read;
 *  2. a model whose KV cache cannot fit (tiny-llama trained for, and asked for, 2^24
 *     positions: gigabytes of cache): refused when its header has arrived.
 * Then the same instance still loads and runs a model (nothing aborted the module).
 */
export async function cpuRefusals(base) {
  const r = report();
  const { kindling, Model } = await engine(base);
  const refused = async (promise, what, pattern) => {
    try {
      await promise;
      r.failures.push(`${what}: loaded, expected OutOfMemoryError`);
    } catch (e) {
      r.check(e instanceof kindling.OutOfMemoryError && pattern.test(e.message), `${what}: ${e?.name}: ${e?.message}`);
      r.log.push(`${what}: ${e.name}: ${e.message}`);
    }
  };
  const size = 5 * 2 ** 30;
  let downloaded = 0;
  let t = performance.now();
  await refused(Model.load(`${base}/${QWEN15}?length=${size}`, {
    backend: 'cpu',
    onProgress: (p) => p.phase === 'download' && (downloaded = p.loaded),
  }), 'a 5 GiB model on the CPU', /needs at least 5136 MiB/);
  r.log.push(`  refused after ${(performance.now() - t).toFixed(0)} ms, ${downloaded} bytes downloaded; wasm memory stopped at ${mib(await Model.memoryBytes())} MiB`);
  r.check(downloaded === 0, `the 5 GiB model: ${downloaded} bytes downloaded before the refusal`);

  const tiny = new Uint8Array(await (await fetch(`${base}/${TINY}`)).arrayBuffer());
  t = performance.now();
  await refused(Model.load(withContextLength(tiny, 2 ** 24), { backend: 'cpu', contextLength: 2 ** 24 }),
    'a KV cache of 2^24 positions on the CPU', /needs about \d+ MiB \(weights \d+ MiB, KV cache for 16777216 positions \d+ MiB/);
  r.log.push(`  refused after ${(performance.now() - t).toFixed(0)} ms`);

  const m = await Model.load(`${base}/${TINY}`, { backend: 'cpu' });
  const c = await m.complete('hello', { maxTokens: 2, temperature: 0 });
  r.check(c.tokenIds.length >= 1, 'the instance still runs a model after the refusals');
  await m.dispose();
  return r;
}

/**
 * The 0.5B on a WebGPU device whose storage bindings hold 64 MiB (the adapter's limits
 * lowered by gpu_watch.js's wrapper): output.weight (138 MiB of Q8_0) and token_embd
 * (89 MiB) are split across buffers, and the prefill's first greedy token equals the
 * native engine's.
 */
export async function qwen05SplitOnWebgpu(base, fixtureText) {
  const r = report();
  const { Model, caps } = await engine(base);
  if (!caps.webgpu) return { ...r, log: ['no WebGPU: the split-weight test is skipped'] };
  const { shrinkAdapter, watchGpu } = await import(`${base}/crates/web/tests/browser/gpu_watch.js`);
  const binding = 64 * MiB;
  const fx = JSON.parse(fixtureText).models['qwen2.5-0.5b'].cases[0];
  const small = shrinkAdapter({ maxStorageBufferBindingSize: binding });
  const watch = watchGpu();
  try {
    let t = performance.now();
    const m = await Model.load(`${base}/${QWEN05}`, { backend: 'webgpu', contextLength: 64 });
    const loadMs = performance.now() - t;
    const labels = watch.liveLabels();
    const parts = (name) => labels.filter((l) => l.startsWith(`${name}[`));
    const largest = Math.max(...labels.map((l) => Number(/\((\d+) bytes\)$/.exec(l)?.[1] ?? 0)));
    r.log.push(`0.5B on WebGPU with ${mib(binding)} MiB bindings: loaded in ${(loadMs / 1000).toFixed(1)} s; ` +
      `output.weight in ${parts('output.weight').join(', ')}; token_embd in ${parts('token_embd.weight').length} parts; largest buffer ${mib(largest)} MiB`);
    r.check(parts('output.weight').length >= 3, `output.weight should be split in 3+ parts: ${parts('output.weight')}`);
    r.check(parts('token_embd.weight').length >= 2, `token_embd should be split: ${parts('token_embd.weight')}`);
    r.check(largest <= binding, `a buffer of ${largest} bytes exceeds the ${binding}-byte binding limit`);
    checkInfo(r.check, m.info, QWEN05, 'webgpu', 64);
    t = performance.now();
    const g = await m.complete(fx.prompt, { maxTokens: 1, temperature: 0 });
    r.log.push(`0.5B split on WebGPU: prefill of ${g.promptTokenIds.length} tokens + first token ${JSON.stringify(g.tokenIds)} ` +
      `in ${((performance.now() - t) / 1000).toFixed(1)} s (native: ${fx.token_ids[0]})`);
    checkGreedy(r.check, fx, g, '0.5B split on WebGPU');
    await m.dispose();
    r.check(watch.liveBuffers() === 0, `dispose left ${watch.liveBuffers()} buffers`);
  } finally {
    watch.restore();
    small.restore();
  }
  return r;
}
