// The JS API tests (www/index.js), run in the browser by js_api.rs. Each check records
// a failure instead of throwing, so one run reports everything that is wrong.

const SMOLLM2 = '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf';
const GEMMA3 = '.cache/models/gemma-3-270m-q4_k_m.gguf';
const TINY = '.cache/synthetic/tiny-llama.gguf';

export async function runApiTests(base, fixtureText) {
  const log = [];
  const failures = [];
  const check = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const expectError = async (promise, name, what, test = () => true) => {
    try {
      await promise;
      failures.push(`${what}: resolved, expected ${name}`);
    } catch (e) {
      const ok = e?.name === name && test(e);
      if (!ok) failures.push(`${what}: got ${e?.name}: ${e?.message}, expected ${name}`);
      else log.push(`${what}: ${e.name}: ${e.message}`);
      return e;
    }
  };
  const fixture = JSON.parse(fixtureText);
  const url = (p) => `${base}/${p}`;
  // Other tests in this page import the package too, and one loads a model on the CPU
  // into its wasm memory, which never shrinks. The same server under its other name
  // (127.0.0.1 ↔ localhost) is another origin, so this import gets a module graph, and
  // a wasm instance, of its own, whose memory the Gemma load below starts from.
  const own = base.includes('//127.0.0.1') ? base.replace('//127.0.0.1', '//localhost') : base.replace('//localhost', '//127.0.0.1');
  const kindling = await import(`${own}/www/index.js`);
  const { Model } = kindling;
  const caps = await Model.capabilities();
  log.push(`capabilities: webgpu ${caps.webgpu}, adapter ${JSON.stringify(caps.adapter)}, simd128 ${caps.simd128}, ` +
    `${caps.features.length} features, reason ${caps.reason}`);

  const progressOk = (events, what) => {
    for (const phase of ['download', 'upload']) {
      const ev = events.filter((e) => e.phase === phase);
      check(ev.length > 0, `${what}: no ${phase} progress`);
      for (let i = 1; i < ev.length; i++) check(ev[i].loaded > ev[i - 1].loaded, `${what}: ${phase} progress not monotonic`);
      const last = ev[ev.length - 1];
      check(last && last.loaded === last.total, `${what}: ${phase} progress ends at ${last?.loaded} of ${last?.total}`);
    }
    check(events.some((e) => e.phase === 'prepare' && e.loaded === 1), `${what}: no prepare progress`);
  };

  // 1. Peak WebAssembly memory of a WebGPU load of Gemma 3 (253 MB): this instance is
  //    fresh, and wasm memory only grows, so its size after the load is the peak.
  if (caps.webgpu) {
    const before = await Model.memoryBytes();
    check(before < 16 * 2 ** 20, `the package's wasm instance is not fresh (${before} bytes before the Gemma load)`);
    const events = [];
    const t = performance.now();
    const m = await Model.load(url(GEMMA3), { backend: 'webgpu', contextLength: 64, onProgress: (p) => events.push(p) });
    const after = await Model.memoryBytes();
    const mib = (b) => (b / 2 ** 20).toFixed(1);
    log.push(`Gemma 3 WebGPU load: ${(performance.now() - t).toFixed(0)} ms; peak wasm memory ${mib(after)} MiB ` +
      `(${mib(before)} MiB before; model file ${mib(m.info.dataBytes)} MiB of tensors)`);
    check(m.info.backend === 'webgpu', 'Gemma 3: backend webgpu');
    check(after < 128 * 2 ** 20, `Gemma 3 WebGPU load: wasm memory ${mib(after)} MiB ≥ 128 MiB`);
    progressOk(events, 'Gemma 3 load');
    await m.dispose();
  }

  // 2. Sources: URL, Blob, ArrayBuffer, Uint8Array, ReadableStream give the same model.
  const bytes = new Uint8Array(await (await fetch(url(TINY))).arrayBuffer());
  const sources = {
    url: url(TINY),
    URL: new URL(url(TINY)),
    blob: new Blob([bytes]),
    arrayBuffer: bytes.buffer.slice(0),
    uint8array: bytes,
    readableStream: new Blob([bytes]).stream(),
  };
  let reference = null;
  for (const [kind, source] of Object.entries(sources)) {
    try {
      const events = [];
      const m = await Model.load(source, { backend: 'cpu', onProgress: (p) => events.push(p) });
      const ids = m.tokenize('hello world');
      reference ??= JSON.stringify(ids);
      check(JSON.stringify(ids) === reference, `source ${kind}: tokenize differs`);
      if (kind !== 'readableStream') progressOk(events, `source ${kind}`);
      await m.dispose();
    } catch (e) {
      failures.push(`source ${kind}: ${e.name}: ${e.message}`);
    }
  }

  // 3. Backend choice and fallback.
  const auto = await Model.load(url(TINY), { backend: 'auto' });
  log.push(`auto: backend ${auto.info.backend}, fallbackReason: ${auto.info.fallbackReason}`);
  if (!caps.webgpu) {
    check(auto.info.backend === 'cpu' && /requestAdapter|navigator\.gpu/.test(auto.info.fallbackReason ?? ''),
      `no WebGPU: auto should fall back with a reason, got ${JSON.stringify(auto.info)}`);
    await expectError(Model.load(url(TINY), { backend: 'webgpu' }), 'WebGPUUnavailableError', 'backend webgpu without WebGPU');
  } else if (caps.adapter?.isFallbackAdapter) {
    check(auto.info.backend === 'cpu' && /software/.test(auto.info.fallbackReason ?? ''), 'software adapter: auto → cpu with a reason');
  } else {
    check(auto.info.backend === 'webgpu' && auto.info.fallbackReason === null, 'hardware adapter: auto → webgpu');
  }

  // 3b. kvCacheType: an unknown value fails before the download; the CPU backend keeps an
  //     f32 cache whatever is asked; on WebGPU 'f16' is what the session gets, and it
  //     generates (its logits against the CPU: kernels.rs's tiny_llama_f16_kv_cache test;
  //     WebGPU's default, f32, is checked in worker_api.js).
  await expectError(Model.load(url(`${TINY}?kv-type`), { kvCacheType: 'q8_0' }), 'TypeError', 'kvCacheType q8_0',
    (e) => /kvCacheType must be one of f32, f16/.test(e.message));
  {
    const cpu = await Model.load(url(TINY), { backend: 'cpu', kvCacheType: 'f16' });
    check(cpu.info.kvCacheType === 'f32', `CPU with kvCacheType f16: info.kvCacheType ${cpu.info.kvCacheType}`);
    await cpu.dispose();
    if (caps.webgpu) {
      const m = await Model.load(url(TINY), { backend: 'webgpu', kvCacheType: 'f16' });
      const c = await m.complete('hello', { maxTokens: 3, temperature: 0 });
      check(m.info.kvCacheType === 'f16' && c.tokenIds.length >= 1,
        `WebGPU with kvCacheType f16: info.kvCacheType ${m.info.kvCacheType}, ${c.tokenIds.length} tokens`);
      await m.dispose();
    }
  }

  // 4. Generation on the tiny model: pieces, break-out, abort mid-generation, complete.
  const pieces = [];
  for await (const p of auto.generate('hello', { maxTokens: 5, temperature: 0 })) pieces.push(p);
  check(pieces.length >= 1 && pieces.every((p) => typeof p.text === 'string'), 'generate yields pieces');
  let n = 0;
  for await (const _ of auto.generate('hello', { maxTokens: 50, temperature: 0.7, seed: 3 })) if (++n === 2) break;
  check(n === 2, 'break out of generate');
  const controller = new AbortController();
  let count = 0;
  const aborted = (async () => {
    for await (const _ of auto.generate('hello', { maxTokens: 100, temperature: 0.7, seed: 1, signal: controller.signal })) {
      if (++count === 3) controller.abort();
    }
  })();
  await expectError(aborted, 'AbortError', 'abort during generation', () => count === 3);
  const c = await auto.complete('hello', { maxTokens: 4, temperature: 0.5, seed: 7 });
  const c2 = await auto.complete('hello', { maxTokens: 4, temperature: 0.5, seed: 7 });
  // The tiny model's weights are random: it may end with EOS before maxTokens.
  check(c.tokenIds.length <= 4 && ['length', 'eos'].includes(c.finishReason) && c.usage.completionTokens === c.tokenIds.length &&
    c.usage.promptTokens === c.promptTokenIds.length && c.timings, `complete: ${JSON.stringify(c)}`);
  check(JSON.stringify(c.tokenIds) === JSON.stringify(c2.tokenIds), 'same seed, same tokens');
  check(auto.detokenize(c.tokenIds) === c.text, 'detokenize(tokenIds) is the text');
  await auto.dispose();
  try {
    auto.tokenize('x');
    failures.push('tokenize after dispose did not throw');
  } catch (e) {
    check(/disposed/.test(e.message), `after dispose: ${e.message}`);
  }

  // 5. The real SmolLM2 through the JS API: greedy ids equal to the native engine's, chat.
  const smol = await Model.load(url(SMOLLM2), { contextLength: 512 });
  const fx = fixture.models.smollm2.cases[0];
  const r = await smol.complete(fx.prompt, { maxTokens: 8, temperature: 0 });
  const upTo = fx.margins.findIndex((m) => m < 0.1);
  const k = upTo < 0 ? fx.token_ids.length : upTo;
  check(JSON.stringify(r.promptTokenIds) === JSON.stringify(fx.prompt_token_ids), 'SmolLM2 prompt ids equal native');
  check(JSON.stringify(r.tokenIds.slice(0, k)) === JSON.stringify(fx.token_ids.slice(0, k)),
    `SmolLM2 greedy ${JSON.stringify(r.tokenIds)} vs native ${JSON.stringify(fx.token_ids)}`);
  log.push(`SmolLM2 (${smol.info.backend}) complete: ${JSON.stringify(r.text)}; ${r.timings.decodeTokensPerSecond.toFixed(2)} tok/s decode`);
  const chat = await smol.chat.completions.create({ messages: [{ role: 'user', content: 'Hi!' }], max_tokens: 4, temperature: 0 });
  check(chat.object === 'chat.completion' && chat.choices[0].message.role === 'assistant' && chat.usage.completion_tokens >= 1,
    `chat completion: ${JSON.stringify(chat)}`);
  const chunks = [];
  for await (const ch of await smol.chat.completions.create({ messages: [{ role: 'user', content: 'Hi!' }], max_tokens: 4, temperature: 0, stream: true })) chunks.push(ch);
  const streamed = chunks.map((ch) => ch.choices[0].delta.content ?? '').join('');
  check(streamed === chat.choices[0].message.content, `streamed chat ${JSON.stringify(streamed)} equals ${JSON.stringify(chat.choices[0].message.content)}`);
  check(chunks[chunks.length - 1].choices[0].finish_reason !== null, 'last chunk has a finish_reason');
  await smol.dispose();

  // 6. Abort during the download: rejects with AbortError within 100 ms.
  {
    const controller = new AbortController();
    let abortedAt = 0;
    const load = Model.load(url(`${SMOLLM2}?delay_ms=20`), {
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === 'download' && p.loaded > 256 * 1024 && !abortedAt) {
          abortedAt = performance.now();
          controller.abort();
        }
      },
    });
    await expectError(load, 'AbortError', 'abort during download');
    const ms = performance.now() - abortedAt;
    log.push(`abort during download: rejected ${ms.toFixed(1)} ms after abort()`);
    check(abortedAt > 0 && ms < 100, `abort during download took ${ms.toFixed(1)} ms`);
    const pre = new AbortController();
    pre.abort();
    await expectError(Model.load(url(TINY), { signal: pre.signal }), 'AbortError', 'already-aborted signal');
  }

  // 7. Bad URL, not GGUF, truncated.
  await expectError(Model.load(url('.cache/models/no-such-model.gguf')), 'DownloadError', 'bad URL',
    (e) => e.status === 404 && e.message.includes('404') && e.message.includes('no-such-model.gguf'));
  await expectError(Model.load('http://127.0.0.1:9/model.gguf', { retryDelayMs: 10 }), 'DownloadError', 'unreachable server',
    (e) => e.message.includes('after 3 retries') && e.url === 'http://127.0.0.1:9/model.gguf');
  await expectError(Model.load(url('README.md')), 'InvalidModelError', 'not a GGUF file', (e) => /GGUF/.test(e.message));
  await expectError(Model.load(url(`${TINY}?truncate=600000`), { backend: 'cpu' }), 'InvalidModelError', 'truncated file');
  await expectError(Model.load(url(`${TINY}?truncate=600000&nolength=1`), { backend: 'cpu' }), 'InvalidModelError',
    'truncated file without Content-Length');
  const e = await expectError(Model.load(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])), 'InvalidModelError', 'garbage bytes');
  check(e instanceof kindling.InvalidModelError, 'errors are instances of the exported classes');

  log.push(`JS API tests: ${(performance.now() - 0).toFixed(0)} ms since page load`);
  return { log, failures };
}
