// Embeddings through the npm package (model.embeddings.create) on the real
// nomic-embed-text-v1.5 (F16, nomic-bert), against llama.cpp's vectors of the same file
// (tests/fixtures/embed_ref_nomic.json, made by tests/scripts/gen_embed_refs.py):
// cosine >= 0.999 per input, through Model and through WorkerModel; the token counts
// equal llama.cpp's ([CLS] ... [SEP]); short inputs sharing one forward pass (one
// progress event), progress after each pass and an abort between passes (on the tiny
// bert, whose 512-token context holds one of its long inputs a pass); the refusals (a decoder asked to embed, an encoder asked to generate or chat,
// an input over the context without truncate, `input: []`, `dimensions`) as
// InvalidRequestError, also across the worker. Run by embeddings.rs, which says which
// cases each backend runs.

const TINY_LLAMA = '.cache/synthetic/tiny-llama.gguf';
const TINY_BERT = '.cache/synthetic/tiny-bert.gguf';
const MIN_COSINE = 0.999;

function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

/**
 * `backend`: 'webgpu' | 'cpu'. WebGPU runs a subset: on SwiftShader the first input after a
 * load took about 70 s (the pipelines compiling) and each further one about 10 s, and the
 * WebGPU suite is the longest part of CI; so there one request of a short and a non-ASCII
 * input, and the refusals (which run nothing). The abort, the string input and the worker
 * are backend-independent JS, checked in the CPU run; the GPU kernels also run natively
 * against llama.cpp's vectors on lavapipe (tests/embeddings.rs). `long`: also the input near the context (and the
 * truncated one over it); `modelPath`, `referencePath`: the encoder and its llama.cpp
 * reference file (a nomic-bert; the run uses nomic-embed-text-v1.5).
 */
export async function runEmbeddingTests(base, backend, long, modelPath, referencePath) {
  const log = [];
  // Also to the console as it goes: the runner hears the page between long steps.
  log.push = (...lines) => {
    for (const l of lines) console.log(`[embeddings] ${l}`);
    return Array.prototype.push.apply(log, lines);
  };
  const failures = [];
  const check = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const start = performance.now();
  const secs = () => `${((performance.now() - start) / 1000).toFixed(1)} s`;
  const url = (p) => `${base}/${p}`;
  const { Model, InvalidRequestError, AbortError } = await import(url('www/index.js'));
  const { WorkerModel } = await import(url('www/worker-model.js'));
  const expectError = async (promise, Class, what) => {
    try {
      await promise;
      failures.push(`${what}: resolved, expected ${Class.name}`);
    } catch (e) {
      if (e instanceof Class) log.push(`${what}: ${e.name}: ${e.message}`);
      else failures.push(`${what}: got ${e?.name}: ${e?.message}, expected ${Class.name}`);
    }
  };
  const ref = await (await fetch(url(referencePath))).json();
  const cases = (kind) => ref.cases.filter((c) => c.kind === kind);
  /** Checks a response against the reference cases it embedded, in order. */
  const compare = (reply, wanted, what) => {
    check(reply.object === 'list' && reply.data.length === wanted.length, `${what}: ${reply.data.length} vectors for ${wanted.length} inputs`);
    const tokens = wanted.reduce((n, c) => n + c.n_tokens, 0);
    check(reply.usage.prompt_tokens === tokens && reply.usage.total_tokens === tokens,
      `${what}: usage ${JSON.stringify(reply.usage)}, llama.cpp embedded ${tokens} tokens`);
    wanted.forEach((c, i) => {
      const d = reply.data[i];
      if (!d) return;
      check(d.object === 'embedding' && d.index === i, `${what} ${c.name}: object ${d.object}, index ${d.index}`);
      check(d.embedding instanceof Float32Array && d.embedding.length === ref.n_embd,
        `${what} ${c.name}: embedding is ${d.embedding?.constructor?.name} of ${d.embedding?.length}`);
      const cos = cosine(d.embedding, c.embedding);
      log.push(`${what} ${c.kind} ${c.name} (${c.n_tokens} tokens): cosine ${cos.toFixed(6)}`);
      check(cos >= MIN_COSINE, `${what} ${c.name}: cosine ${cos} < ${MIN_COSINE}`);
    });
  };

  // 0. The fits-check reads an encoder from its header.
  const seen = await Model.inspect(url(modelPath), { backend, cache: 'off' });
  log.push(`inspect: kind ${seen.kind}, ${seen.contextLength} positions, memory ${JSON.stringify(seen.memory)}, fits ${seen.fits}`);
  check(seen.kind === 'encoder' && seen.architecture === 'nomic-bert' && seen.fits, `inspect: ${JSON.stringify(seen)}`);
  check(seen.contextLength === ref.n_ctx_train, `inspect contextLength ${seen.contextLength}, expected ${ref.n_ctx_train}`);
  // The encoder's own session: keys and values, f32, every layer, the whole context.
  const kv = 2 * seen.blockCount * ref.n_ctx_train * ref.n_embd * 4;
  check(seen.memory.kvCache === kv, `inspect kvCache ${seen.memory.kvCache}, expected ${kv}`);

  // 1. Model on the page: the short and non-ASCII inputs in one request, the batch in another.
  let t = performance.now();
  const model = await Model.load(url(modelPath), { backend });
  log.push(`load (${backend}): ${(performance.now() - t).toFixed(0)} ms, info ${JSON.stringify(model.info)}`);
  check(model.info.kind === 'encoder' && model.info.backend === backend, `info ${JSON.stringify(model.info)}`);
  check(model.info.contextLength === ref.n_ctx_train, `info.contextLength ${model.info.contextLength}`);
  for (const c of ref.cases.filter((c) => c.kind !== 'long')) {
    const ids = model.tokenize(c.text);
    check(JSON.stringify(ids) === JSON.stringify(c.ids), `tokenize ${c.name}: ${JSON.stringify(ids)} vs llama.cpp ${JSON.stringify(c.ids)}`);
  }
  const gpu = backend === 'webgpu';
  // On WebGPU one request of a short and a non-ASCII input; on the CPU all of them.
  const singles = gpu ? [cases('short')[0], cases('non_ascii')[1]] : [...cases('short'), ...cases('non_ascii')];
  const progress = [];
  t = performance.now();
  compare(await model.embeddings.create({ input: singles.map((c) => c.text) }, { onProgress: (p) => progress.push(p) }), singles, 'Model');
  log.push(`Model: ${singles.length} short inputs in ${(performance.now() - t).toFixed(0)} ms (${secs()})`);
  // Short inputs share one forward pass: one progress event.
  check(JSON.stringify(progress) === JSON.stringify([{ done: singles.length, total: singles.length }]),
    `progress ${JSON.stringify(progress)}`);
  if (!gpu) {
    t = performance.now();
    compare(await model.embeddings.create({ input: cases('batch').map((c) => c.text) }), cases('batch'), 'Model batch');
    log.push(`Model: the batch of ${cases('batch').length} in ${(performance.now() - t).toFixed(0)} ms (${secs()})`);
    // A single string is one input; the model name is the file's.
    const one = await model.embeddings.create({ input: singles[0].text, model: 'ignored', encoding_format: 'float' });
    compare(one, [singles[0]], 'Model string input');
    check(one.model === model.info.name, `model ${one.model}, info.name ${model.info.name}`);
  }

  // 2. Long inputs: near the context (llama.cpp's), and over it (refused; cut with truncate).
  const longCase = cases('long')[0];
  const over = `${longCase.text} ${longCase.text}`;
  await expectError(model.embeddings.create({ input: ['search_query: hi', over] }), InvalidRequestError, 'over the context without truncate');
  if (long) {
    t = performance.now();
    compare(await model.embeddings.create({ input: [longCase.text] }), [longCase], 'Model long');
    log.push(`Model: ${longCase.n_tokens} tokens in ${(performance.now() - t).toFixed(0)} ms (${secs()})`);
    t = performance.now();
    const cut = await model.embeddings.create({ input: over, truncate: true });
    log.push(`Model: truncated to ${cut.usage.prompt_tokens} tokens in ${(performance.now() - t).toFixed(0)} ms`);
    check(cut.usage.prompt_tokens === ref.n_ctx_train, `truncate: ${cut.usage.prompt_tokens} tokens, expected ${ref.n_ctx_train}`);
    // It holds the whole long input and a few tokens more (then [SEP]): close to its vector.
    const cos = cosine(cut.data[0].embedding, longCase.embedding);
    log.push(`truncated vs long: cosine ${cos.toFixed(5)}`);
    check(cos > 0.95, `the truncated input's vector against the long one's: cosine ${cos}`);
  }

  // 3. The refusals, before anything runs.
  await expectError(model.embeddings.create({ input: [] }), InvalidRequestError, 'input: []');
  await expectError(model.embeddings.create({ input: 'x', dimensions: 256 }), InvalidRequestError, 'dimensions');
  await expectError(model.embeddings.create({ input: 'x', encoding_format: 'base64' }), InvalidRequestError, 'encoding_format base64');
  await expectError(model.embeddings.create({ input: ['x', 3] }), InvalidRequestError, 'input: a number');
  await expectError(model.complete('hello', { maxTokens: 2 }), InvalidRequestError, 'an encoder asked to complete');
  await expectError(model.chat.completions.create({ messages: [{ role: 'user', content: 'hi' }] }), InvalidRequestError,
    'an encoder asked to chat');

  await model.dispose();

  // 4. Several passes (CPU run): on the tiny bert (context 512) each ~300-token input takes a
  //    pass of its own, so progress comes after each, and an abort between passes is an
  //    AbortError; the model embeds afterwards.
  if (!gpu) {
    const bert = await Model.load(url(TINY_BERT), { backend: 'cpu' });
    const inputs = ['a', 'b', 'c', 'd'].map((w) => Array(300).fill(w).join(' '));
    const passes = [];
    const all = await bert.embeddings.create({ input: inputs }, { onProgress: (p) => passes.push(p.done) });
    check(JSON.stringify(passes) === '[1,2,3,4]', `progress over four passes: ${JSON.stringify(passes)}`);
    const controller = new AbortController();
    const done = [];
    const aborted = bert.embeddings.create({ input: inputs }, {
      signal: controller.signal,
      onProgress: (p) => {
        done.push(p.done);
        if (p.done === 1) controller.abort();
      },
    });
    await expectError(aborted, AbortError, 'abort after the first pass');
    check(JSON.stringify(done) === '[1]', `progress after the abort: ${JSON.stringify(done)}`);
    const again = await bert.embeddings.create({ input: inputs[1] });
    check(cosine(again.data[0].embedding, all.data[1].embedding) > 0.99999, 'tiny bert after an abort: another vector');
    await bert.dispose();
  }

  // 5. A decoder asked for embeddings.
  const decoder = await Model.load(url(TINY_LLAMA), { backend: 'cpu' });
  check(decoder.info.kind === 'decoder', `tiny-llama kind ${decoder.info.kind}`);
  await expectError(decoder.embeddings.create({ input: 'hi' }), InvalidRequestError, 'a decoder asked to embed');
  await decoder.dispose();
  log.push(`Model done (${secs()})`);
  if (gpu) return { log, failures };

  // 6. WorkerModel (CPU run): the batch and a non-ASCII input cross the worker (vectors moved as
  //    Float32Arrays), progress and errors too.
  t = performance.now();
  const wm = await WorkerModel.load(url(modelPath), { backend });
  log.push(`worker load (${backend}): ${(performance.now() - t).toFixed(0)} ms`);
  check(wm.info.kind === 'encoder', `worker info ${JSON.stringify(wm.info)}`);
  const wanted = [...cases('batch'), cases('non_ascii')[1]];
  const workerProgress = [];
  t = performance.now();
  compare(await wm.embeddings.create({ input: wanted.map((c) => c.text) }, { onProgress: (p) => workerProgress.push(p.done) }), wanted, 'WorkerModel');
  log.push(`WorkerModel: ${wanted.length} inputs in ${(performance.now() - t).toFixed(0)} ms (${secs()})`);
  check(JSON.stringify(workerProgress) === JSON.stringify([wanted.length]), `worker progress (one pass) ${JSON.stringify(workerProgress)}`);
  await expectError(wm.embeddings.create({ input: 'x', dimensions: 8 }), InvalidRequestError, 'worker: dimensions');
  await expectError(wm.embeddings.create({ input: over }), InvalidRequestError, 'worker: over the context');
  await expectError(wm.complete('hello', { maxTokens: 2 }), InvalidRequestError, 'worker: an encoder asked to complete');
  {
    const controller = new AbortController();
    controller.abort();
    await expectError(wm.embeddings.create({ input: 'x' }, { signal: controller.signal }), AbortError, 'worker: an aborted signal');
  }
  await wm.dispose();
  log.push(`done (${secs()})`);
  return { log, failures };
}
