// The fits-check before the download (www/inspect.js, crates/web/src/inspect.rs):
// Model.inspect reads only a model's header and reports what it is and what it needs;
// Model.load refuses a model that does not fit when its header arrives, before any
// weight is allocated. Against tests/scripts/serve.py, which counts the body bytes it
// sends per request. The expected header facts come from the PyPI `gguf` reader
// (tests/fixtures/inspect_refs.json, written by tests/scripts/gen_inspect_refs.py).
// Run by inspect.rs, in the run without WebGPU and (the WebGPU limits) in the run with.

const MODELS = {
  smollm2: { path: '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf', file: 'SmolLM2-135M-Instruct.Q4_1.gguf', quantization: 'Q4_1' },
  qwen15: { path: '.cache/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', file: 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', quantization: 'Q4_K_M' },
};
const MiB = 1 << 20;

function harness(base) {
  const log = [];
  const failures = [];
  const start = performance.now();
  const h = {
    log,
    failures,
    url: (p) => `${base}/${p}`,
    check(ok, what) {
      if (!ok) failures.push(what);
      return ok;
    },
    note: (what) => log.push(`${((performance.now() - start) / 1000).toFixed(1)} s: ${what}`),
    async expectError(promise, name, what, test = () => true) {
      try {
        await promise;
        failures.push(`${what}: resolved, expected ${name}`);
        return null;
      } catch (e) {
        if (e?.name === name && test(e)) h.note(`${what}: ${e.name}: ${e.message}`);
        else failures.push(`${what}: got ${e?.name}: ${e?.message}, expected ${name}`);
        return e;
      }
    },
    async mark() {
      return (await (await fetch(`${base}/__log?since=${2 ** 31}`)).json()).next;
    },
    async requests(mark, match) {
      const { entries } = await (await fetch(`${base}/__log?since=${mark}`)).json();
      return entries.filter((e) => `${e.path}?${e.query}`.includes(match));
    },
    async rule(rule) {
      const r = await fetch(`${base}/__control`, { method: 'POST', body: JSON.stringify(rule) });
      if (!r.ok) throw new Error(`control rule ${JSON.stringify(rule)}: HTTP ${r.status}`);
    },
    async clearRules() {
      await fetch(`${base}/__control`, { method: 'DELETE' });
    },
  };
  return h;
}

const tag = (name) => `t=inspect-${name.replace(/[^a-z0-9]+/gi, '-')}-${Math.random().toString(36).slice(2, 8)}`;
const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);
const pct = (n, size) => `${((100 * n) / size).toFixed(2)}%`;
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
const sentOf = (requests) => requests.reduce((a, e) => a + e.sent, 0);

/** Checks an inspection against the gguf reader's facts and the server's HEAD. */
function checkFacts(h, r, ref, model, size, what) {
  const { check } = h;
  check(size === ref.fileSize, `${what}: HEAD says ${size} bytes, the file has ${ref.fileSize}`);
  const expect = {
    architecture: ref.architecture,
    parameters: ref.parameters,
    tensorCount: ref.tensorCount,
    fileSize: size,
    headerBytes: ref.dataOffset,
    dataBytes: sum(ref.bytesByType),
    trainedContextLength: ref.contextLength,
    blockCount: ref.blockCount,
    embeddingLength: ref.embeddingLength,
    fileType: ref.fileType,
    quantization: model.quantization,
  };
  for (const [k, v] of Object.entries(expect)) check(r[k] === v, `${what}: ${k} ${JSON.stringify(r[k])}, the gguf reader says ${JSON.stringify(v)}`);
  check(JSON.stringify(Object.entries(r.bytesByType).sort()) === JSON.stringify(Object.entries(ref.bytesByType).sort()),
    `${what}: bytesByType ${JSON.stringify(r.bytesByType)}, the gguf reader says ${JSON.stringify(ref.bytesByType)}`);
}

export async function runInspectTests(base, webgpu) {
  const h = harness(base);
  const { url, check, note } = h;
  const { Model, OutOfMemoryError } = await import(`${base}/www/index.js`);
  const { WorkerModel } = await import(`${base}/www/worker-model.js`);
  const refs = await (await fetch(url('tests/fixtures/inspect_refs.json'))).json();
  const sizes = {};
  for (const [key, m] of Object.entries(MODELS)) {
    sizes[key] = Number((await fetch(url(m.path), { method: 'HEAD' })).headers.get('content-length'));
  }

  // 1. Both models over the network: the facts match the gguf reader's; only the
  //    header's bytes (Range requests of growing size) are fetched.
  const inspected = {};
  for (const [key, m] of Object.entries(MODELS)) {
    const ref = refs[m.file];
    const size = sizes[key];
    const p = `${m.path}?${tag(key)}`;
    const mark = await h.mark();
    const t = performance.now();
    const r = await Model.inspect(url(p), { backend: 'cpu' });
    const ms = performance.now() - t;
    const requests = await h.requests(mark, p);
    const sent = sentOf(requests);
    inspected[key] = r;
    note(`${key}: ${r.architecture}, ${r.parameters} parameters, ${r.quantization}, header ${mb(r.headerBytes)}, ` +
      `${requests.length} requests (${requests.map((e) => `${e.status} ${e.range}`).join(', ')}), ${mb(sent)} = ${pct(sent, size)} of the file, ${ms.toFixed(0)} ms; ` +
      `cpu need ${mb(r.memory.total)} (weights ${mb(r.memory.weights)}, kv ${mb(r.memory.kvCache)} for ${r.contextLength}, activations ${mb(r.memory.activations)}): fits ${r.fits}`);
    checkFacts(h, r, ref, m, size, key);
    check(r.source === 'network' && requests.length >= 1 && requests.every((e) => e.status === 206 && e.range),
      `${key}: every request is a Range request: ${JSON.stringify(requests)}`);
    // Doubling ranges from 1 MiB read at most twice the header plus the first MiB (the
    // last range's bytes past the header are sent but not read).
    check(r.bytesRead <= sent && r.bytesRead >= ref.dataOffset && sent >= ref.dataOffset && sent <= 2 * ref.dataOffset + MiB && sent < 0.1 * size,
      `${key}: the server sent ${sent} bytes (${pct(sent, size)}) for a ${ref.dataOffset}-byte header`);
    // The CPU need: weights ≈ the tensor data (one-row tensors also as f32), the KV
    // cache of f32 keys and values, against wasm32's 4 GiB.
    const kvWidth = ref.headCountKv * (ref.embeddingLength / ref.headCount);
    check(r.backend === 'cpu' && r.contextLength === Math.min(2048, ref.contextLength), `${key}: cpu context ${r.contextLength}`);
    check(r.memory.kvCache === 2 * ref.blockCount * r.contextLength * kvWidth * 4, `${key}: kvCache ${r.memory.kvCache}`);
    check(r.memory.weights >= sum(ref.bytesByType) && r.memory.weights <= sum(ref.bytesByType) + MiB, `${key}: weights ${r.memory.weights}`);
    check(r.memory.total === r.memory.weights + r.memory.kvCache + r.memory.activations + r.memory.other, `${key}: total ${JSON.stringify(r.memory)}`);
    check(r.fits && r.reasons.length === 0 && r.allowed.wasmMemoryBytes === 4 * 2 ** 30, `${key}: fits on the CPU: ${JSON.stringify(r.reasons)}`);
    check(r.largestWeight?.name === ref.largestTensor.name && r.largestWeight.bytes === ref.largestTensor.bytes,
      `${key}: largest weight ${JSON.stringify(r.largestWeight)}, the gguf reader says ${JSON.stringify(ref.largestTensor)}`);
    const ctx = await Model.inspect(url(p), { backend: 'cpu', contextLength: 256, cache: 'off' });
    check(ctx.contextLength === 256 && ctx.memory.kvCache === 2 * ref.blockCount * 256 * kvWidth * 4, `${key}: contextLength 256 sizes ${ctx.memory.kvCache}`);
    // kvCacheType: f16 halves a WebGPU session's cache (and nothing else); the CPU's stays f32.
    const gpu = {};
    for (const kvCacheType of ['f32', 'f16']) {
      gpu[kvCacheType] = await Model.inspect(url(p), { backend: 'webgpu', contextLength: 256, kvCacheType, cache: 'off' });
    }
    const cpuF16 = await Model.inspect(url(p), { backend: 'cpu', contextLength: 256, kvCacheType: 'f16', cache: 'off' });
    check(gpu.f32.kvCacheType === 'f32' && gpu.f16.kvCacheType === 'f16' && gpu.f16.memory.kvCache === gpu.f32.memory.kvCache / 2 &&
      gpu.f32.memory.kvCache === ctx.memory.kvCache && gpu.f16.memory.total === gpu.f32.memory.total - gpu.f16.memory.kvCache,
      `${key}: WebGPU kvCache f32 ${gpu.f32.memory.kvCache} (${gpu.f32.kvCacheType}), f16 ${gpu.f16.memory.kvCache} (${gpu.f16.kvCacheType})`);
    check(cpuF16.kvCacheType === 'f32' && cpuF16.memory.kvCache === ctx.memory.kvCache, `${key}: the CPU's cache stays f32: ${cpuF16.kvCacheType}`);
  }

  // 2. Lowered limits: WebAssembly memory below the need, on the CPU.
  {
    const q = inspected.qwen15;
    const r = await Model.inspect(url(MODELS.qwen15.path), { backend: 'cpu', limits: { wasmMemoryBytes: 512 * MiB } });
    check(!r.fits && r.reasons.length === 1 && /WebAssembly memory/.test(r.reasons[0]) && r.allowed.wasmMemoryBytes === 512 * MiB,
      `qwen on a 512 MiB wasm memory: fits ${r.fits}, ${JSON.stringify(r.reasons)}`);
    check(r.memory.total === q.memory.total, 'the need does not depend on the limits');
    note(`qwen, 512 MiB of wasm memory: ${r.reasons[0]}`);
  }

  // 3. WebGPU: the adapter's limits (SwiftShader: 1 GiB), and Qwen 1.5B's 183 MiB
  //    output.weight against a 128 MiB binding: split by rows into two buffers, so it
  //    fits; a 4 MiB binding cannot hold the activations.
  {
    const caps = await Model.capabilities();
    const r = await Model.inspect(url(MODELS.qwen15.path), { backend: 'webgpu', limits: { maxStorageBufferBindingSize: 128 * MiB } });
    if (webgpu) {
      const lw = r.largestWeight;
      note(`qwen on WebGPU, binding 128 MiB: ${mb(r.memory.total)} (weights ${mb(r.memory.weights)}, kv ${mb(r.memory.kvCache)} for ${r.contextLength}, ` +
        `activations ${mb(r.memory.activations)}); largest weight ${lw?.name} ${mb(lw?.bytes)} in ${lw?.buffers} buffers; adapter ${JSON.stringify(caps.limits.maxStorageBufferBindingSize)}`);
      check(r.fits && r.backend === 'webgpu' && r.allowed.maxStorageBufferBindingSize === 128 * MiB &&
        r.allowed.maxBufferSize === caps.limits.maxBufferSize, `qwen on WebGPU with a 128 MiB binding: ${JSON.stringify({ fits: r.fits, reasons: r.reasons, allowed: r.allowed })}`);
      check(lw?.name === 'output.weight' && lw.bytes > 128 * MiB && lw.buffers === Math.ceil(lw.bytes / (Math.floor((128 * MiB) / lw.rowBytes) * lw.rowBytes)) && lw.buffers === 2,
        `qwen's output.weight against a 128 MiB binding: ${JSON.stringify(lw)}`);
      check(r.contextLength === 4096 && r.memory.weights >= sum(refs[MODELS.qwen15.file].bytesByType), `qwen on WebGPU: ${r.contextLength} positions, ${r.memory.weights} bytes of weights`);
      const plain = await Model.inspect(url(MODELS.smollm2.path), { backend: 'webgpu' });
      check(plain.fits && plain.allowed.maxStorageBufferBindingSize === caps.limits.maxStorageBufferBindingSize, `smollm2 on this adapter: ${JSON.stringify(plain.allowed)}`);
      const small = await Model.inspect(url(MODELS.smollm2.path), { backend: 'webgpu', limits: { maxStorageBufferBindingSize: 4 * MiB } });
      check(!small.fits && small.reasons.some((x) => /logits \[32, 49152\]/.test(x)), `smollm2 with a 4 MiB binding: ${JSON.stringify(small.reasons)}`);
      note(`smollm2 with a 4 MiB binding: ${small.reasons.join('; ')}`);
      // 'auto' on a software adapter (SwiftShader) uses the CPU, as a load does.
      const auto = await Model.inspect(url(MODELS.smollm2.path));
      check(auto.backend === (caps.adapter?.isFallbackAdapter ? 'cpu' : 'webgpu') && auto.fits, `'auto': ${auto.backend}, fits ${auto.fits}`);
    } else {
      check(!r.fits && /WebGPU is not available/.test(r.reasons[0] ?? ''), `'webgpu' without WebGPU: ${JSON.stringify(r.reasons)}`);
      const auto = await Model.inspect(url(MODELS.smollm2.path));
      check(auto.backend === 'cpu' && auto.fits && auto.checked.webgpu?.fits === false, `'auto' without WebGPU: ${JSON.stringify({ backend: auto.backend, checked: auto.checked })}`);
    }
  }

  // 4. From the cache: a complete entry gives the header with no request at all.
  {
    const p = `${MODELS.smollm2.path}?${tag('cached')}`;
    const model = await Model.load(url(p), { backend: 'cpu', contextLength: 64 });
    await model.dispose();
    const mark = await h.mark();
    const r = await Model.inspect(url(p), { backend: 'cpu' });
    const requests = await h.requests(mark, p);
    check(r.source === 'cache' && requests.length === 0 && r.requests === 0, `from the cache: source ${r.source}, ${requests.length} requests`);
    checkFacts(h, r, refs[MODELS.smollm2.file], MODELS.smollm2, sizes.smollm2, 'from the cache');
    note(`from the cache: ${mb(r.bytesRead)} read from storage, no request`);
    await Model.cache.delete(url(p));
  }

  // 5. hf: URLs resolve against hubUrl (the server's stand-in redirects to a signed URL).
  {
    const hubUrl = `${base}/hf`;
    const hf = `hf:kindling-test/inspect-${Math.random().toString(36).slice(2, 8)}@main/${MODELS.smollm2.file}`;
    const mark = await h.mark();
    const r = await Model.inspect(hf, { hubUrl, backend: 'cpu' });
    const requests = await h.requests(mark, MODELS.smollm2.file);
    checkFacts(h, r, refs[MODELS.smollm2.file], MODELS.smollm2, sizes.smollm2, 'hf:');
    check(requests[0]?.status === 302 && requests[0]?.path.startsWith('/hf/kindling-test/'), `hf: ${JSON.stringify(requests[0])}`);
  }

  // 5b. The first shard of a split model (scripts/test_browser.sh writes SmolLM2 in 3):
  //     its header says how many files; the tensors and sizes are the first shard's.
  {
    const r = await Model.inspect(url('.cache/shards/SmolLM2-135M-Instruct.Q4_1-00001-of-00003.gguf'), { backend: 'cpu', cache: 'off' });
    const whole = inspected.smollm2;
    note(`first of 3 shards: ${r.tensorCount} tensors, ${r.parameters} parameters, ${mb(r.fileSize)}`);
    check(r.shards === 3 && r.architecture === 'llama' && r.tensorCount > 0 && r.tensorCount < whole.tensorCount &&
      r.parameters < whole.parameters && r.trainedContextLength === whole.trainedContextLength && r.fits && whole.shards === 1,
      `first shard: ${JSON.stringify({ shards: r.shards, tensors: r.tensorCount, parameters: r.parameters, fits: r.fits })}`);
  }

  // 6. A server that ignores Range (answers 200 with the whole file): the response is
  //    read until the header is complete, then cancelled.
  {
    const p = `${MODELS.smollm2.path}?${tag('no-range')}`;
    await h.rule({ match: p, ignore_range: true, times: 0 });
    const mark = await h.mark();
    const r = await Model.inspect(url(p), { backend: 'cpu' });
    await new Promise((resolve) => setTimeout(resolve, 300)); // let the server see the cancel
    const requests = await h.requests(mark, p);
    await h.clearRules();
    const sent = sentOf(requests);
    note(`server ignoring Range: ${requests.map((e) => `${e.status} ${e.sent}`).join(', ')}: ${mb(sent)} = ${pct(sent, sizes.smollm2)} sent, ${mb(r.bytesRead)} read`);
    checkFacts(h, r, refs[MODELS.smollm2.file], MODELS.smollm2, sizes.smollm2, 'server ignoring Range');
    check(requests.length === 1 && requests[0].status === 200 && sent < 0.5 * sizes.smollm2,
      `server ignoring Range: ${requests.length} requests, ${pct(sent, sizes.smollm2)} of the file sent`);
  }

  // 7. Model.load refuses a model that does not fit, with OutOfMemoryError saying what
  //    it needs and what is allowed, when its header arrives: before any weight is
  //    allocated, with only the header and what the browser had buffered fetched.
  const refused = async (Class, what, key, backend, limits) => {
    const m = MODELS[key];
    const p = `${m.path}?${tag(`refuse-${what}`)}`;
    const mark = await h.mark();
    const t = performance.now();
    const e = await h.expectError(Class.load(url(p), { backend, limits, cache: 'off' }), 'OutOfMemoryError', `${what}: load with ${JSON.stringify(limits)}`,
      (err) => err instanceof OutOfMemoryError && /does not fit/.test(err.message) && /needs/.test(err.message) && /MiB/.test(err.message));
    const ms = performance.now() - t;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const requests = await h.requests(mark, p);
    const sent = sentOf(requests);
    const header = refs[m.file].dataOffset;
    note(`${what}: refused after ${ms.toFixed(0)} ms with ${mb(sent)} sent (${pct(sent, sizes[key])} of the file; header ${mb(header)}; ` +
      `${mb(Math.max(0, sent - header))} past it, buffered by the browser)`);
    // One request (no second read of the header); what the server wrote past the header
    // before the refusal cancelled the response is what the browser had buffered. How much
    // that is depends on how busy the machine is (19 MB once, on a loaded 2-core VM, for
    // the 1.1 GB Qwen): the bound is 16 MiB or 5% of the file, whichever is more, still
    // far from a download of the weights.
    const slack = Math.max(16 * MiB, 0.05 * sizes[key]);
    check(requests.length === 1 && sent <= header + slack,
      `${what}: ${requests.length} requests, ${mb(sent)} sent before the refusal (header ${mb(header)}, allowed ${mb(header + slack)})`);
    return e;
  };
  // SmolLM2 on the CPU (a CPU load first reserves the file's size of wasm memory: 98 MB
  // here, not Qwen's 1.1 GB), Qwen 1.5B on WebGPU.
  await refused(Model, 'Model, cpu', 'smollm2', 'cpu', { wasmMemoryBytes: 64 * MiB });
  await refused(WorkerModel, 'WorkerModel, cpu', 'smollm2', 'cpu', { wasmMemoryBytes: 64 * MiB });
  if (webgpu) {
    await refused(Model, 'Model, webgpu', 'qwen15', 'webgpu', { maxStorageBufferBindingSize: 8 * MiB });
    await refused(WorkerModel, 'WorkerModel, webgpu', 'qwen15', 'webgpu', { maxStorageBufferBindingSize: 8 * MiB });
  }
  // Limits that leave room: the load goes on.
  {
    const p = `${MODELS.smollm2.path}?${tag('room')}`;
    const model = await Model.load(url(p), { backend: 'cpu', contextLength: 64, cache: 'off', limits: { wasmMemoryBytes: 1024 * MiB } });
    const out = await model.complete('The capital of France is', { maxTokens: 2, temperature: 0 });
    check(out.tokenIds.length === 2, `a model that fits loads and generates: ${JSON.stringify(out.tokenIds)}`);
    await model.dispose();
  }

  // 8. WorkerModel.inspect: the same facts, from the worker.
  {
    const p = `${MODELS.qwen15.path}?${tag('worker')}`;
    const r = await WorkerModel.inspect(url(p), { backend: 'cpu' });
    checkFacts(h, r, refs[MODELS.qwen15.file], MODELS.qwen15, sizes.qwen15, 'WorkerModel.inspect');
    check(r.fits && r.source === 'network', `WorkerModel.inspect: fits ${r.fits}, source ${r.source}`);
    const low = await WorkerModel.inspect(url(p), { backend: 'cpu', limits: { wasmMemoryBytes: 512 * MiB } });
    check(!low.fits && low.reasons.length === 1, `WorkerModel.inspect with 512 MiB: ${JSON.stringify(low.reasons)}`);
    await h.expectError(WorkerModel.inspect(url('package.json')), 'InvalidModelError', 'WorkerModel.inspect of a JSON file');
  }

  // 9. What is not a model, or not there: clear errors.
  await h.expectError(Model.inspect(url('package.json')), 'InvalidModelError', 'a JSON file', (e) => /GGUF|magic/i.test(e.message));
  await h.expectError(Model.inspect(url('.cache/models/no-such-model.gguf')), 'DownloadError', 'a 404', (e) => e.status === 404);
  await h.expectError(Model.inspect(url(`${MODELS.smollm2.path}?truncate=1500000&${tag('cut')}`)), 'InvalidModelError', 'a file cut inside its header',
    (e) => /truncat|cut|ends|short/i.test(e.message));
  {
    const p = `${MODELS.smollm2.path}?${tag('cut-no-range')}&truncate=1500000`;
    await h.rule({ match: p, ignore_range: true, times: 0 });
    await h.expectError(Model.inspect(url(p)), 'InvalidModelError', 'a cut file from a server ignoring Range');
    await h.clearRules();
  }
  {
    const controller = new AbortController();
    controller.abort();
    await h.expectError(Model.inspect(url(MODELS.smollm2.path), { signal: controller.signal }), 'AbortError', 'an aborted inspection');
  }
  await h.expectError(Model.inspect(new Uint8Array(8)), 'TypeError', 'a buffer source');

  note('all');
  return { log: h.log, failures: h.failures };
}
