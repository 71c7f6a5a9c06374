// Kindling: GGUF language models in the browser, on WebGPU or the CPU (WebAssembly).
//
//   import { Model } from 'kindling';
//   const model = await Model.load('https://…/model.gguf', { onProgress: console.log });
//   for await (const piece of model.generate('Once upon a time', { maxTokens: 64 })) out += piece.text;
//
// This file is the JS face only: reading sources, progress, abort, async iterators and
// the OpenAI-shaped chat API. Everything about the model runs in the wasm engine
// (crates/web), which this file drives through its small export surface.

import init, * as engine from './wasm/kindling_web.js';
import {
  AbortError, DeviceLostError, DownloadError, IntegrityError, InvalidModelError, InvalidRequestError, OutOfMemoryError,
  QuotaExceededError, UnsupportedModelError, WebGPUUnavailableError, raceAbort, throwIfAborted, toError, withSignal,
} from './errors.js';
import { modelCache } from './cache.js';
import { RestartLoad } from './download.js';
import { openSource } from './source.js';
import { inspectSource, kvCacheTypeOption } from './inspect.js';
import { GPU_THREADS, cpuEngine, oneThreadReason, threadedMemoryBytes, threadsOption } from './threads.js';

export {
  AbortError, DeviceLostError, DownloadError, IntegrityError, InvalidModelError, InvalidRequestError, OutOfMemoryError,
  QuotaExceededError, UnsupportedModelError, WebGPUUnavailableError, modelCache,
};

let ready = null;

/** Errors of loads that ran on WebGPU (an OutOfMemoryError there may fit on the CPU). */
const failedOnGpu = new WeakSet();

/**
 * Loads the WebAssembly engine once. Called by every entry point; call it yourself to
 * load the `.wasm` from another place (`module_or_path`: URL, Response or Module).
 */
export function initEngine(module_or_path) {
  ready ??= init(module_or_path === undefined ? undefined : { module_or_path }).catch((e) => {
    ready = null;
    throw e;
  });
  return ready;
}

function emit(onProgress, event) {
  if (!onProgress) return;
  try {
    onProgress(event);
  } catch (e) {
    // A throwing progress callback must not break the load.
    console.error('kindling: onProgress threw', e);
  }
}

/** Bytes per second over the last few seconds of a download. */
class Rate {
  #samples = [];

  /** Adds the count at `now` (ms); returns bytes per second, or null before there is a span to measure. */
  add(now, bytes) {
    const s = this.#samples;
    s.push([now, bytes]);
    while (s.length > 2 && now - s[1][0] >= 3000) s.shift();
    const [t0, b0] = s[0];
    return now - t0 >= 50 ? ((bytes - b0) * 1000) / (now - t0) : null;
  }

  /** Forgets the samples (the source changed: cache and network run at different speeds). */
  reset() {
    this.#samples = [];
  }
}

/**
 * Bytes copied into WebAssembly memory per call: a chunk crosses as a copy, so its size
 * sets the engine's peak memory. In-memory sources (4 MiB chunks) and the odd large
 * network chunk are fed in pieces of this size, as the cache is read (download.js).
 */
const FEED_BYTES = 1 << 20;

function feed(loader, bytes) {
  for (let at = 0; at < bytes.byteLength; at += FEED_BYTES) {
    loader.feed(bytes.subarray(at, Math.min(at + FEED_BYTES, bytes.byteLength)));
  }
}

/** A new loader of `eng` for `src` (see crates/web/src/loader.rs). */
function createLoader(eng, backend, src, contextLength, kvCacheType) {
  return 'shardCount' in src
    ? eng.createLoader(backend, src.firstTotal ?? undefined, contextLength ?? undefined, src.total ?? undefined, kvCacheType)
    : eng.createLoader(backend, src.total ?? undefined, contextLength ?? undefined, undefined, kvCacheType);
}

/**
 * Which build and backend a load starts on (threads.js): a model bound for the CPU goes to
 * the threaded build where that may run. For 'auto' there the engine first says which
 * backend it would pick (no device opened, no memory reserved), so that a plain loader
 * never reserves the weights' memory only to be dropped. `{ eng, backend, threads,
 * fallbackReason, adapter }`; the last two are set only where the plain engine chose.
 */
async function planLoad(backend, options, signal) {
  const plan = { eng: engine, backend, threads: null, fallbackReason: undefined, adapter: undefined };
  if (backend === 'auto' && !oneThreadReason(options)) {
    const pick = await raceAbort(engine.autoBackend(), signal, 'the model load');
    if (pick.backend === 'cpu') Object.assign(plan, { backend: 'cpu', fallbackReason: pick.fallbackReason, adapter: pick.adapter });
  }
  if (plan.backend !== 'cpu') return plan;
  const cpu = await raceAbort(cpuEngine(engine, options), signal, 'the model load');
  return { ...plan, eng: cpu.engine, threads: cpu.threads };
}

/**
 * Streams `source` into a new engine loader; returns the engine's model, with the
 * fallback reason, adapter and CPU threads of its build (threads.js).
 */
async function loadOnce(source, backend, options) {
  const { signal, onProgress, contextLength } = options;
  throwIfAborted(signal, 'the model load');
  // A URL's download honours `signal` itself (and cleans up after it).
  const src = await openSource(source, options, { Sha256: engine.Sha256 });
  let loader = null;
  const onAbort = () => src.cancel(signal.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let creating = null;
  let onGpu = false;
  let fallbackReason = null;
  let adapter;
  let threads = GPU_THREADS;
  try {
    throwIfAborted(signal, 'the model load');
    const sharded = 'shardCount' in src;
    const plan = await planLoad(backend, options, signal);
    creating = createLoader(plan.eng, plan.backend, src, contextLength, kvCacheTypeOption(options));
    loader = await raceAbort(creating, signal, 'the model load');
    fallbackReason = plan.fallbackReason ?? loader.fallbackReason ?? null;
    adapter = plan.adapter;
    if (loader.backend === 'cpu') {
      // 'auto' that fell back only once WebGPU failed to open stays on the plain build.
      threads = plan.threads ?? { count: 1, reason: oneThreadReason(options) ?? 'WebGPU failed to open after its adapter was chosen; the fallback runs on one thread' };
    }
    // The fits-check runs on the header as it arrives (inspect.js, crates/web/src/inspect.rs).
    if (options.limits) loader.setLimits(options.limits);
    onGpu = loader.backend === 'webgpu';
    const last = { download: -1, upload: -1 };
    const rate = new Rate();
    let lastSource = null;
    const report = (phase, loaded, total) => {
      // Monotonic: never repeat or go back.
      if (loaded <= last[phase]) return;
      last[phase] = loaded;
      if (phase !== 'download') return emit(onProgress, { phase, loaded, total });
      if (src.source !== lastSource) rate.reset();
      lastSource = src.source;
      const bytesPerSecond = rate.add(performance.now(), loaded);
      const etaSeconds = bytesPerSecond && total != null ? Math.max(0, total - loaded) / bytesPerSecond : null;
      emit(onProgress, {
        phase, loaded, total, bytesPerSecond, etaSeconds, source: src.source,
        cachedBytes: src.cachedBytes, networkBytes: src.networkBytes,
      });
    };
    for (;;) {
      const { done, value } = await raceAbort(src.read(), signal, 'the model download');
      if (!done) {
        report('download', src.offset, src.total ?? (sharded ? null : loader.total) ?? null);
        feed(loader, value);
      }
      // A shard has ended (every tensor of it in, or its bytes): the next begins. The
      // engine says which tensor is missing when a shard ends short.
      if ((done || loader.isShardComplete) && !loader.isComplete && src.hasNextShard) {
        const size = await raceAbort(src.nextShard(), signal, 'the model download');
        loader.nextShard(size ?? undefined);
        continue;
      }
      if (done) break;
      if (loader.isComplete) {
        // Every tensor is in: the rest of the stream (if any) is padding, read only
        // to complete the cache entry or the integrity check.
        await raceAbort(src.drain(), signal, 'the model download');
        const total = loader.total ?? src.offset;
        report('download', Math.max(src.offset, total), Math.max(src.offset, total));
        report('upload', total, total);
        break;
      }
      report('upload', loader.received, loader.total ?? src.total ?? null);
    }
    throwIfAborted(signal, 'the model load');
    await src.verify();
    emit(onProgress, { phase: 'prepare', loaded: 0, total: 1 });
    const model = loader.finish(contextLength ?? undefined);
    await src.commit();
    emit(onProgress, { phase: 'prepare', loaded: 1, total: 1 });
    return { model, label: src.label, fallbackReason, adapter, threads };
  } catch (e) {
    src.cancel();
    // Drop every buffer allocated so far before reporting.
    loader?.abort();
    // Aborted while the backend was being opened: the device arrives later, and only
    // the garbage collector would free it.
    if (!loader) creating?.then((l) => l.free(), () => {});
    let error = e instanceof RestartLoad ? e
      : signal?.aborted && !(toError(e) instanceof AbortError) ? new AbortError('the model load was aborted') : toError(e);
    // Bytes from the cache that the engine refuses: a corrupt entry; fetch it again.
    if (error instanceof InvalidModelError && src.cachedBytes > 0) {
      error = new RestartLoad(`the cached copy of ${src.label} is not a valid model (${error.message})`, { cause: error });
    }
    if (onGpu) failedOnGpu.add(error);
    // After an abort the entry is tidied in the background (the next load of it waits).
    const failing = src.fail(error);
    if (!(error instanceof AbortError)) await failing;
    throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    loader?.free();
  }
}

/** loadOnce, once more from the network when the cached copy was corrupt or the file changed meanwhile. */
async function loadFresh(source, backend, options) {
  try {
    return await loadOnce(source, backend, options);
  } catch (e) {
    if (!(e instanceof RestartLoad)) throw e;
    console.warn(`kindling: ${e.message}; loading it again from the network`);
    try {
      return await loadOnce(source, backend, options);
    } catch (e2) {
      if (!(e2 instanceof RestartLoad)) throw e2;
      throw new DownloadError(`${e2.message} (twice)`, { cause: e2 });
    }
  }
}

export class Model {
  #engine;
  #info;
  #tail = Promise.resolve();
  #disposed = false;

  /** Use `Model.load`. */
  constructor(engineModel, fallbackReason, threads, adapter) {
    if (!engineModel) throw new TypeError('use Model.load(source, options) to create a Model');
    this.#engine = engineModel;
    this.#info = engineModel.info;
    if (fallbackReason) this.#info.fallbackReason = fallbackReason;
    // The adapter the plain engine probed when the threaded build runs the model.
    if (adapter !== undefined) this.#info.adapter = adapter;
    this.#info.threads = { ...(threads ?? GPU_THREADS) };
    // `create(request, { signal })` as OpenAI's SDK takes it, or the signal in the request.
    this.chat = { completions: { create: (request, options) => this.#chatCreate(withSignal(request, options)) } };
    // OpenAI's `embeddings.create`, for an embedding model (info.kind 'encoder').
    this.embeddings = { create: (request, options) => this.#embeddingsCreate(request, options) };
  }

  /** What this browser offers: `{ webgpu, adapter, features, limits, simd128, reason }`. */
  static async capabilities() {
    await initEngine();
    return engine.capabilities();
  }

  /**
   * Bytes of WebAssembly memory the engine holds (it only grows: after a load, the peak);
   * with the threaded CPU build started in this worker, both builds' memories.
   */
  static async memoryBytes() {
    await initEngine();
    return engine.memoryBytes() + (await threadedMemoryBytes());
  }

  /**
   * What a model is and whether it fits here, from its GGUF header alone (read with
   * Range requests, or from the cache): `{ architecture, parameters, quantization,
   * fileSize, trainedContextLength, backend, contextLength, kvCacheType, memory: { weights,
   * kvCache, activations, total }, allowed, largestWeight, fits, reasons, ... }`. Options:
   * `backend` ('auto' | 'webgpu' | 'cpu'), `contextLength`, `kvCacheType`, `limits`, `signal`,
   * `hubUrl`, `cacheKey`, `cache: 'off'` (inspect.js).
   */
  static async inspect(source, options = {}) {
    await raceAbort(initEngine(), options.signal, 'the model inspection');
    return inspectSource(source, options, engine);
  }

  /** The persistent model cache of this origin: list, has, delete, clear, usage, persist (cache.js). */
  static cache = modelCache;

  /**
   * Loads a GGUF model. `source`: URL string | URL | `hf:OWNER/REPO[@REV]/FILE` | Blob/File |
   * ArrayBuffer | Uint8Array | ReadableStream<Uint8Array>. Options: `backend` ('auto' |
   * 'webgpu' | 'cpu'), `onProgress({phase, loaded, total, ...})`, `signal`, `contextLength`,
   * `kvCacheType` ('f32' | 'f16': how a WebGPU session keeps its KV cache);
   * for URLs: `cache` ('default' | 'no-validate' | 'off'), `integrity` ('sha256-…'),
   * `retries`, `retryDelayMs`, `hubUrl`, `cacheKey`, `persist` (index.d.ts says what each does).
   */
  static async load(source, options = {}) {
    const backend = options.backend ?? 'auto';
    try {
      threadsOption(options); // a bad `threads` or `kvCacheType` fails before the download
      kvCacheTypeOption(options);
      await raceAbort(initEngine(), options.signal, 'the model load');
      const { model, fallbackReason, threads, adapter } = await loadFresh(source, backend, options);
      return new Model(model, fallbackReason, threads, adapter);
    } catch (e0) {
      const e = toError(e0);
      // 'auto': a model that does not fit the GPU runs on the CPU, if we can read it again.
      if (backend === 'auto' && e instanceof OutOfMemoryError && failedOnGpu.has(e) && isRereadable(source)) {
        const { model, threads } = await loadFresh(source, 'cpu', options);
        return new Model(model, `the model does not fit the WebGPU device: ${e.message}`, threads);
      }
      throw e;
    }
  }

  /** `{ architecture, name, parameters, quantization, contextLength, backend, adapter, fallbackReason, ... }` */
  get info() {
    return { ...this.#info, threads: { ...this.#info.threads } };
  }

  #live() {
    if (this.#disposed) throw new Error('this model has been disposed; load it again to use it');
    return this.#engine;
  }

  /** Token ids of `text` (`addSpecial`: BOS as the model asks; `parseSpecial`: control tokens). */
  tokenize(text, { addSpecial = true, parseSpecial = false } = {}) {
    try {
      return Array.from(this.#live().tokenize(String(text), addSpecial, parseSpecial));
    } catch (e) {
      throw toError(e);
    }
  }

  /** Text of token ids. */
  detokenize(ids, { renderSpecial = false } = {}) {
    try {
      return this.#live().detokenize(Uint32Array.from(ids), renderSpecial);
    } catch (e) {
      throw toError(e);
    }
  }

  /** `messages` rendered with the model's own chat template. */
  applyChatTemplate(messages, { addGenerationPrompt = true } = {}) {
    try {
      return this.#live().applyChatTemplate(messages, addGenerationPrompt);
    } catch (e) {
      throw toError(e);
    }
  }

  /** Waits for the model's previous generation, then holds it until `release()`. */
  async #acquire() {
    const previous = this.#tail;
    let release;
    this.#tail = new Promise((resolve) => (release = resolve));
    await previous;
    return release;
  }

  /** Ids of a plain-text prompt (BOS as the model asks), or the ids given. */
  #promptIds(prompt) {
    if (typeof prompt === 'string') return this.#live().encodePrompt(prompt, false);
    if (Array.isArray(prompt) || prompt instanceof Uint32Array) return Uint32Array.from(prompt);
    throw new TypeError('prompt must be a string or an array of token ids');
  }

  /**
   * The generation loop behind `generate`, `complete` and chat: `begin()` starts the
   * engine's generation once the model is free; yields pieces (`toolCalls` on the piece
   * after which calls completed) and fills `result` with ids, text, tool calls, finish
   * reason and timings.
   */
  async *#run(begin, options, result) {
    const { signal } = options;
    throwIfAborted(signal, 'the generation');
    const release = await this.#acquire();
    let generation = null;
    let inflight = null;
    try {
      throwIfAborted(signal, 'the generation');
      const start = performance.now();
      generation = begin();
      result.promptTokenIds = Array.from(generation.promptIds());
      result.tokenIds = [];
      result.text = '';
      result.toolCalls = [];
      let firstAt = null;
      let yielded = performance.now();
      for (;;) {
        // Let the event loop run now and then: see nextTask.
        if (performance.now() - yielded >= YIELD_EVERY_MS) {
          await nextTask();
          yielded = performance.now();
        }
        throwIfAborted(signal, 'the generation');
        inflight = generation.next();
        const step = await raceAbort(inflight, signal, 'the generation');
        inflight = null;
        if (step.prefilled !== undefined) continue; // a batch of a long prompt, no token yet
        if (step.done) {
          result.finishReason = step.finishReason;
          break;
        }
        firstAt ??= performance.now();
        if (step.tokenId !== null) result.tokenIds.push(step.tokenId);
        result.text += step.text;
        // Inside a tool call the text is the call's, not the reply's: a call is handed
        // out whole once it has closed.
        const calls = step.text === '' && options.tools ? generation.toolCalls() : [];
        const toolCalls = calls.slice(result.toolCalls.length);
        result.toolCalls.push(...toolCalls);
        yield toolCalls.length ? { text: step.text, tokenId: step.tokenId, toolCalls } : { text: step.text, tokenId: step.tokenId };
      }
      const end = performance.now();
      const prefillMs = (firstAt ?? end) - start;
      const decodeMs = end - (firstAt ?? end);
      result.timings = {
        prefillMs,
        decodeMs,
        prefillTokensPerSecond: result.promptTokenIds.length / Math.max(prefillMs / 1e3, 1e-9),
        decodeTokensPerSecond: Math.max(result.tokenIds.length - 1, 0) / Math.max(decodeMs / 1e3, 1e-9),
        constraintMs: generation.constraintMs(),
      };
    } catch (e) {
      result.finishReason = signal?.aborted ? 'abort' : 'error';
      throw toError(e);
    } finally {
      // Breaking out of the loop (or an abort) ends the generation; the engine is
      // handed on only when a step still running has finished.
      result.finishReason ??= 'abort';
      generation?.cancel();
      const done = () => {
        generation?.free();
        release();
      };
      if (inflight) inflight.then(done, done);
      else done();
    }
  }

  /**
   * Streams the continuation of `prompt` (text, or token ids) piece by piece:
   * `for await (const { text, tokenId } of model.generate(prompt, options))`.
   * Options: `maxTokens, temperature, topK, topP, minP, repetitionPenalty, seed, stop, ignoreEos, signal`.
   */
  generate(prompt, options = {}) {
    return this.#run(this.#begin(prompt, options), options, {});
  }

  /** Starts the engine's generation of `prompt` (text, or token ids) with `options`. */
  #begin(prompt, options) {
    return () => this.#live().generate(this.#promptIds(prompt), engineOptions(options));
  }

  /** The whole continuation: `{ text, tokenIds, promptTokenIds, finishReason, usage, timings }`. */
  async complete(prompt, options = {}) {
    const result = {};
    for await (const _ of this.#run(this.#begin(prompt, options), options, result));
    const u = usage(result);
    return {
      text: result.text,
      tokenIds: result.tokenIds,
      promptTokenIds: result.promptTokenIds,
      finishReason: result.finishReason,
      usage: { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, totalTokens: u.total_tokens },
      timings: result.timings,
    };
  }

  /**
   * OpenAI's `chat.completions.create`: the request (messages, tools, tool_choice,
   * parallel_tool_calls, response_format, sampling) goes to the engine as JSON, which
   * renders it through the model's template and sets up sampling, the output constraint
   * and tool calls (kindling-model's generation policy, shared with the CLI).
   */
  async #chatCreate(request = {}) {
    const { stream = false, signal, ...body } = request;
    const options = { signal, tools: Array.isArray(body.tools) && body.tools.length > 0 };
    const id = `chatcmpl-${randomId()}`;
    const created = Math.floor(Date.now() / 1000);
    const modelName = this.#info.name || this.#info.architecture;
    const result = {};
    const begin = () => this.#live().chat(JSON.stringify(body));
    const pieces = this.#run(begin, options, result);
    const head = { id, created, model: modelName };
    if (stream) return chatChunks(pieces, result, head);
    for await (const _ of pieces);
    // refusal: OpenAI's message always has it (null: nothing refused).
    const message = { role: 'assistant', content: result.text, refusal: null };
    if (result.toolCalls.length) {
      if (result.text.trim() === '') message.content = null;
      message.tool_calls = result.toolCalls.map((call, i) => toolCall(id, call, i));
    }
    return {
      id,
      object: 'chat.completion',
      created,
      model: modelName,
      choices: [{ index: 0, message, finish_reason: openaiFinish(result.finishReason), logprobs: null }],
      usage: usage(result),
    };
  }

  /**
   * OpenAI's `embeddings.create`: `{ input: string | string[], truncate? }` →
   * `{ object: 'list', data: [{ object: 'embedding', embedding: Float32Array, index }],
   * model, usage }`. The engine checks the request as the CLI does (kindling-model's
   * EmbeddingRequest) and tokenizes and checks every input before anything runs; then
   * the inputs run a forward pass at a time (as many as fit in one: short inputs share
   * it), with the abort signal heard and `onProgress({ done, total })` called between
   * passes.
   */
  async #embeddingsCreate(request = {}, options = {}) {
    const { signal, ...body } = withSignal(request, options);
    const what = 'the embeddings request';
    throwIfAborted(signal, what);
    let parsed;
    try {
      parsed = this.#live().embeddingRequest(JSON.stringify(body));
    } catch (e) {
      throw toError(e);
    }
    const release = await this.#acquire();
    let inflight = null;
    let job = null;
    try {
      job = this.#live().embeddingJob(parsed.input, parsed.truncate);
      const data = [];
      let tokens = 0;
      const total = job.total;
      while (job.done < total) {
        // Let queued tasks run (a worker's 'abort' message): the CPU backend computes
        // a pass without awaiting anything (see nextTask).
        if (job.done > 0) await nextTask();
        throwIfAborted(signal, what);
        inflight = this.#live().embedNext(job);
        const out = await raceAbort(inflight, signal, what);
        inflight = null;
        for (const embedding of out.embeddings) {
          data.push({ object: 'embedding', embedding, index: data.length });
        }
        tokens += out.tokens;
        emit(options?.onProgress, { done: job.done, total });
      }
      const model = this.#info.name || this.#info.architecture;
      return { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
    } catch (e) {
      throw toError(e);
    } finally {
      // The model is handed on once a pass still running has finished (the pass
      // holds its own reference to the job's inputs).
      job?.free();
      if (inflight) inflight.then(release, release);
      else release();
    }
  }

  /** Frees the model (GPU buffers, KV cache); later calls throw. */
  async dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    try {
      this.#engine.dispose();
      // A step still running holds its own reference; the engine goes when it ends.
      this.#engine.free();
    } catch (e) {
      throw toError(e);
    }
  }
}

/**
 * How long a generation may run before it lets the event loop take its queued tasks.
 * The CPU backend computes a step without awaiting anything, so a generation is a chain
 * of promise callbacks (microtasks) that no task can come between: in a worker the
 * 'abort' message waited behind the whole reply (82 s for a 2,000-token one), and on the
 * page nothing painted. A task every 10 ms costs one message hop (tens of µs).
 */
const YIELD_EVERY_MS = 10;

/**
 * Resolves once the tasks already waiting have run. Messages rather than setTimeout
 * (nested timeouts are clamped to 4 ms), and two of them: a timer that fell due while
 * the engine computed joins the queue only when the browser next picks a task, behind
 * the first message, but ahead of the second (with one, a timer due mid-reply on the
 * CPU path fired up to two tokens late).
 */
async function nextTask() {
  for (let hop = 0; hop < 2; hop++) {
    await new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        resolve();
      };
      channel.port2.postMessage(null);
    });
  }
}

/** The `WebModel.generate` options: the JS names, undefined where not given. */
function engineOptions(o) {
  return {
    maxTokens: o.maxTokens,
    temperature: o.temperature,
    topK: o.topK,
    topP: o.topP,
    minP: o.minP,
    repetitionPenalty: o.repetitionPenalty,
    seed: o.seed,
    stop: o.stop,
    ignoreEos: o.ignoreEos,
    // The output constraint (one at most; the engine checks): a JSON schema (object or
    // JSON text), a regex, a Lark grammar, or OpenAI's response_format (from chat).
    jsonSchema: o.jsonSchema,
    regex: o.regex,
    grammar: o.grammar,
    responseFormat: o.responseFormat,
  };
}

function isRereadable(source) {
  return !(typeof ReadableStream !== 'undefined' && source instanceof ReadableStream);
}

function usage(result) {
  const prompt = result.promptTokenIds?.length ?? 0;
  const completion = result.tokenIds?.length ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function openaiFinish(reason) {
  if (reason === 'length' || reason === 'context_full') return 'length';
  return reason === 'abort' || reason === 'tool_calls' ? reason : 'stop';
}

function randomId() {
  return Math.random().toString(36).slice(2, 14);
}

/** A call in OpenAI's shape; ids are unique within the completion (`id`) and stable across its chunks. */
function toolCall(completionId, { name, arguments: args }, index) {
  return { id: `call_${completionId.slice(9)}_${index}`, type: 'function', function: { name, arguments: args } };
}

async function* chatChunks(pieces, result, head) {
  const chunk = (delta, finish_reason = null) => ({
    ...head,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason }],
  });
  yield chunk({ role: 'assistant', content: '' });
  let calls = 0;
  for await (const piece of pieces) {
    if (piece.text) yield chunk({ content: piece.text });
    // A call comes whole in one chunk (OpenAI's may split its arguments; a client
    // that joins the pieces reads one as well).
    for (const call of piece.toolCalls ?? []) {
      yield chunk({ tool_calls: [{ index: calls, ...toolCall(head.id, call, calls) }] });
      calls++;
    }
  }
  yield { ...chunk({}, openaiFinish(result.finishReason)), usage: usage(result) };
}

export default Model;
