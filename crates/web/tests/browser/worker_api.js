// WorkerModel (www/worker-model.js): the engine in a module worker, driven from this
// page. The page and the package are on different origins here (the runner's port and
// the model server's), so this also runs the blob: worker that imports the package.
// Run by worker_api.rs.

const SMOLLM2 = '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf';
const TINY = '.cache/synthetic/tiny-llama.gguf';

export async function runWorkerTests(base) {
  const log = [];
  const failures = [];
  const check = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const expectError = async (promise, Class, what) => {
    try {
      await promise;
      failures.push(`${what}: resolved, expected ${Class.name}`);
    } catch (e) {
      if (e instanceof Class) log.push(`${what}: ${e.name}: ${e.message}`);
      else failures.push(`${what}: got ${e?.name}: ${e?.message}, expected ${Class.name}`);
    }
  };
  const start = performance.now();
  const mark = (what) => log.push(`${what}: done at ${((performance.now() - start) / 1000).toFixed(1)} s`);
  const url = (p) => `${base}/${p}`;
  const { Model } = await import(url('www/index.js'));
  const { WorkerModel, AbortError, InvalidModelError } = await import(url('www/worker-model.js'));
  const caps = await Model.capabilities();
  // The CPU backend on both sides (a token of even the tiny model takes seconds on
  // SwiftShader); WebGPU inside the worker is checked once, in section 8.
  const backend = 'cpu';
  const greedy = { maxTokens: 8, temperature: 0, ignoreEos: true };
  const prompt = 'hello world';

  const reference = await Model.load(url(TINY), { backend });
  const want = (await reference.complete(prompt, greedy)).tokenIds;
  const wantPrompt = reference.tokenize(prompt);
  await reference.dispose();

  mark('1. Load with prog');
  // 1. Load with progress; generate's greedy ids are the main thread's.
  const events = [];
  const t0 = performance.now();
  const wm = await WorkerModel.load(url(TINY), { backend, onProgress: (p) => events.push(p) });
  log.push(`worker load (${backend}): ${(performance.now() - t0).toFixed(0)} ms, info ${JSON.stringify(wm.info)}`);
  check(wm.info.backend === backend, `worker backend ${wm.info.backend}, expected ${backend}`);
  check(['download', 'upload', 'prepare'].every((ph) => events.some((e) => e.phase === ph)), `progress events: ${JSON.stringify(events.slice(-3))}`);
  const ids = [];
  for await (const piece of wm.generate(prompt, greedy)) if (piece.tokenId !== null) ids.push(piece.tokenId);
  check(same(ids, want), `worker greedy ${JSON.stringify(ids)} vs main thread ${JSON.stringify(want)}`);
  const c = await wm.complete(prompt, greedy);
  check(same(c.tokenIds, want) && c.finishReason === 'length' && c.usage.completionTokens === want.length, `worker complete: ${JSON.stringify(c)}`);
  check(same(await wm.tokenize(prompt), wantPrompt), 'worker tokenize');
  check((await wm.detokenize(c.tokenIds)) === c.text, 'worker detokenize');

  mark('2. Breaking out');
  // 2. Breaking out of the iterator stops the worker's generation; the next call runs.
  let n = 0;
  for await (const _ of wm.generate(prompt, { ...greedy, maxTokens: 100 })) if (++n === 2) break;
  check(n === 2, 'break out of the worker generation');
  check(same((await wm.complete(prompt, greedy)).tokenIds, want), 'complete after a break');

  mark('3. Abort by signa');
  // 3. Abort by signal mid-generation: AbortError at once.
  {
    const controller = new AbortController();
    let count = 0;
    let abortedAt = 0;
    const run = (async () => {
      for await (const _ of wm.generate(prompt, { ...greedy, maxTokens: 100, signal: controller.signal })) {
        if (++count === 3) {
          abortedAt = performance.now();
          controller.abort();
        }
      }
    })();
    await expectError(run, AbortError, 'abort during a worker generation');
    const ms = performance.now() - abortedAt;
    check(count === 3 && ms < 100, `abort during a worker generation: ${count} pieces, rejected after ${ms.toFixed(1)} ms`);
    check(same((await wm.complete(prompt, greedy)).tokenIds, want), 'complete after an abort');
  }

  mark('4. Chat, whole');
  // 4. Chat, whole and streamed.
  const messages = [{ role: 'user', content: 'Hi!' }];
  const chat = await wm.chat.completions.create({ messages, max_tokens: 4, temperature: 0 });
  const chunks = [];
  for await (const ch of await wm.chat.completions.create({ messages, max_tokens: 4, temperature: 0, stream: true })) chunks.push(ch);
  const streamed = chunks.map((ch) => ch.choices[0].delta.content ?? '').join('');
  check(chat.object === 'chat.completion' && streamed === chat.choices[0].message.content,
    `worker chat ${JSON.stringify(chat.choices[0].message)} vs streamed ${JSON.stringify(streamed)}`);

  mark('5. dispose ends');
  // 5. dispose ends the worker; later calls reject clearly.
  await wm.dispose();
  try {
    await wm.tokenize('x');
    failures.push('tokenize after dispose resolved');
  } catch (e) {
    check(/disposed/.test(e.message), `after dispose: ${e.message}`);
  }

  mark('6. Sources:');
  // 6. Sources: an ArrayBuffer is moved (detached here), a Blob and a ReadableStream
  //    cross as they are; each gives the same model.
  const bytes = await (await fetch(url(TINY))).arrayBuffer();
  const moved = bytes.slice(0);
  for (const [kind, source] of [['arrayBuffer', moved], ['blob', new Blob([bytes])], ['readableStream', new Blob([bytes]).stream()]]) {
    try {
      const m = await WorkerModel.load(source, { backend: 'cpu' });
      check(same(await m.tokenize(prompt), wantPrompt), `worker source ${kind}: tokenize differs`);
      await m.dispose();
    } catch (e) {
      failures.push(`worker source ${kind}: ${e.name}: ${e.message}`);
    }
  }
  check(moved.byteLength === 0, `an ArrayBuffer source is transferred, not copied (byteLength after: ${moved.byteLength})`);

  mark('7. Errors keep');
  // 7. Errors keep their classes across the worker; an abort mid-download is prompt.
  await expectError(WorkerModel.load(url('README.md')), InvalidModelError, 'worker: not a GGUF file');
  {
    const controller = new AbortController();
    let abortedAt = 0;
    const load = WorkerModel.load(url(`${SMOLLM2}?delay_ms=20`), {
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === 'download' && p.loaded > 256 * 1024 && !abortedAt) {
          abortedAt = performance.now();
          controller.abort();
        }
      },
    });
    await expectError(load, AbortError, 'worker: abort during download');
    const ms = performance.now() - abortedAt;
    check(abortedAt > 0 && ms < 100, `worker: abort during download took ${ms.toFixed(1)} ms`);
  }

  // 8. WebGPU inside the worker: the same greedy ids as WebGPU on the main thread.
  if (caps.webgpu) {
    mark('8. WebGPU in the worker');
    const two = { ...greedy, maxTokens: 2 };
    const main = await Model.load(url(TINY), { backend: 'webgpu' });
    const mainIds = (await main.complete(prompt, two)).tokenIds;
    await main.dispose();
    const gpu = await WorkerModel.load(url(TINY), { backend: 'webgpu' });
    const workerIds = (await gpu.complete(prompt, two)).tokenIds;
    check(gpu.info.backend === 'webgpu' && gpu.info.kvCacheType === 'f32', `worker WebGPU backend: ${gpu.info.backend}, KV cache ${gpu.info.kvCacheType}`);
    check(same(workerIds, mainIds), `WebGPU in the worker ${JSON.stringify(workerIds)} vs main thread ${JSON.stringify(mainIds)}`);
    await gpu.dispose();
  }
  mark('all');
  return { log, failures };
}
