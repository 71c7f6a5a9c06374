// WorkerModel: the Model API with the engine in a module Web Worker (worker.js), so
// downloading, uploading weights and generating leave the page's main thread free.
//
//   import { WorkerModel } from 'kindling/worker';
//   const model = await WorkerModel.load(url, { onProgress, signal });
//   for await (const { text } of model.generate('Once upon a time')) out.textContent += text;
//   await model.dispose();   // also ends the worker
//
// Same surface as Model, except that the calls Model answers at once (tokenize,
// detokenize, applyChatTemplate) return promises here. Signals and breaking out of an
// iterator reach the worker as an 'abort' message; the promise or iterator here rejects
// at once, without waiting for the worker to acknowledge.

import { abortError, throwIfAborted, toError, withSignal } from './errors.js';
import { modelCache } from './cache.js';

export {
  AbortError, DeviceLostError, DownloadError, IntegrityError, InvalidModelError, InvalidRequestError, OutOfMemoryError,
  QuotaExceededError, UnsupportedModelError, WebGPUUnavailableError,
} from './errors.js';
export { modelCache };

/** Rebuilds an error that crossed from the worker, as the package's class for its name. */
function fromWire({ name, message, details }) {
  const e = new Error(message);
  e.name = name;
  const error = toError(e);
  // The class's own fields (status, needed, ...); a plain Error keeps only its message.
  if (error !== e) Object.assign(error, details);
  return error;
}

/** worker.js's name, kept out of literals outside the Worker constructor (see startWorker). */
const WORKER_FILE = './worker.js';

/**
 * A module worker running worker.js. The constructor call is written inline, in the one
 * form Vite and webpack recognise (`new Worker(new URL('./worker.js', import.meta.url),
 * { type: 'module' })`), so a bundled app gets worker.js bundled as a worker with no
 * options. A worker's script must share the page's origin; when the package is served
 * from another origin (a CDN), a same-origin blob: worker imports it instead (an
 * ordinary CORS module fetch). That URL is built from a variable so that bundlers do not
 * also copy worker.js as a raw asset.
 */
function startWorker() {
  try {
    return new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'kindling' });
  } catch (e) {
    if (e?.name !== 'SecurityError') throw e;
    const url = new URL(WORKER_FILE, import.meta.url);
    const shim = new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' });
    const blobUrl = URL.createObjectURL(shim);
    try {
      return new Worker(blobUrl, { type: 'module', name: 'kindling' });
    } finally {
      // The worker has its script URL once constructed; the module loads from it.
      setTimeout(() => URL.revokeObjectURL(blobUrl), 60_000);
    }
  }
}

/**
 * The source as it crosses to the worker, and what to transfer with it: URLs as
 * absolute strings (the worker's base URL is not the page's), ArrayBuffers and
 * ReadableStreams moved rather than copied (the caller's buffer is detached), Blobs as
 * they are (a Blob clone shares its bytes).
 */
function wireSource(source, transfer) {
  if (typeof source === 'string' || source instanceof URL) {
    return { source: new URL(String(source), globalThis.location?.href).href, transfer: [] };
  }
  if (source instanceof ArrayBuffer) return { source, transfer: transfer ? [source] : [] };
  if (ArrayBuffer.isView(source)) {
    const whole = source.byteOffset === 0 && source.byteLength === source.buffer.byteLength;
    // A view of part of a buffer is copied: moving the buffer would take the rest too.
    const bytes = whole ? source : new Uint8Array(source.buffer, source.byteOffset, source.byteLength).slice();
    return { source: bytes, transfer: transfer || !whole ? [bytes.buffer] : [] };
  }
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) return { source, transfer: [source] };
  return { source, transfer: [] };
}

export class WorkerModel {
  #worker;
  #calls = new Map();
  #nextId = 1;
  #info;
  #failure = null;

  /** Use `WorkerModel.load`. */
  constructor(worker) {
    if (!(worker instanceof Worker)) throw new TypeError('use WorkerModel.load(source, options) to create a WorkerModel');
    this.#worker = worker;
    worker.onmessage = ({ data }) => this.#receive(data);
    const fail = (what) => (event) => {
      this.#failure = new Error(`the kindling worker failed: ${event?.message || what}`);
      for (const call of this.#calls.values()) call.settle(this.#failure);
      this.#calls.clear();
    };
    worker.onerror = fail('its script could not run (see the console)');
    worker.onmessageerror = fail('a message could not be read');
    // `create(request, { signal })` as OpenAI's SDK takes it, or the signal in the request.
    this.chat = { completions: { create: (request, options) => this.#chatCreate(withSignal(request, options)) } };
    // As Model.embeddings.create; the vectors' buffers are moved from the worker, not copied.
    this.embeddings = { create: (request, options) => this.#embeddingsCreate(request, options) };
  }

  /**
   * The persistent model cache (as Model.cache): the worker and the page share the
   * origin's storage, so this works without starting a worker.
   */
  static cache = modelCache;

  /**
   * Loads a GGUF model in a new worker. `source` and options as `Model.load`, plus
   * `worker`: a Worker already running `worker.js` (e.g. built by a bundler; it is
   * terminated by `dispose`), and `transfer` (default true): move an ArrayBuffer or
   * Uint8Array source to the worker instead of copying it (the caller's buffer is
   * detached).
   */
  static async load(source, options = {}) {
    const { signal, onProgress, worker, transfer = true, ...rest } = options;
    throwIfAborted(signal, 'the model load');
    const model = new WorkerModel(worker ?? startWorker());
    const events = (e) => e.progress && onProgress?.(e.progress);
    const load = (wire) => model.#call('load', { source: wire.source, options: rest }, { signal, onEvent: events, transfer: wire.transfer });
    try {
      const wire = wireSource(source, transfer);
      let loading;
      try {
        loading = load(wire);
      } catch (e) {
        // A browser that cannot transfer streams: hand over the stream's bytes as a Blob
        // (a failed postMessage transfers nothing, so the stream is still ours).
        if (e?.name !== 'DataCloneError' || !(source instanceof ReadableStream)) throw e;
        loading = load({ source: await new Response(source).blob(), transfer: [] });
      }
      model.#info = await loading;
      return model;
    } catch (e) {
      model.#worker.terminate();
      throw e;
    }
  }

  /**
   * As `Model.inspect`, run in a worker (a new one, ended afterwards, or `options.worker`,
   * left running): the page needs no WebAssembly for it, and the WebGPU limits are the
   * worker's, where a WorkerModel's load runs.
   */
  static async inspect(source, options = {}) {
    const { signal, worker, ...rest } = options;
    throwIfAborted(signal, 'the model inspection');
    const probe = new WorkerModel(worker ?? startWorker());
    try {
      const url = source instanceof URL || (typeof source === 'string' && !source.startsWith('hf:'))
        ? new URL(String(source), globalThis.location?.href).href
        : source;
      return await probe.#call('inspect', { source: url, options: rest }, { signal });
    } finally {
      if (!worker) probe.#worker.terminate();
    }
  }

  #receive(data) {
    const call = this.#calls.get(data?.id);
    if (!call) return; // a call already settled here (aborted, or broken out of)
    if (!data.done) return call.onEvent?.(data.event);
    this.#calls.delete(data.id);
    call.settle(data.error ? fromWire(data.error) : null, data.value);
  }

  /**
   * Starts call `op`; returns `{ id, promise }`. `onEvent` gets its events; `signal`
   * rejects the promise at once and tells the worker to abort.
   */
  #start(op, args, { signal, onEvent, transfer = [] } = {}) {
    if (this.#failure) throw this.#failure;
    if (!this.#worker) throw new Error('this model has been disposed; load it again to use it');
    const id = this.#nextId++;
    let onAbort = null;
    const promise = new Promise((resolve, reject) => {
      const settle = (error, value) => {
        signal?.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve(value);
      };
      this.#calls.set(id, { onEvent, settle });
      if (signal) {
        onAbort = () => {
          this.#abort(id, 'aborted');
          settle(abortError(signal, `the worker call '${op}'`));
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    try {
      this.#worker.postMessage({ id, op, args }, transfer);
    } catch (e) {
      this.#calls.delete(id);
      throw e;
    }
    return { id, promise };
  }

  #call(op, args, options) {
    return this.#start(op, args, options).promise;
  }

  /** Tells the worker to abort call `id` and forgets it here. */
  #abort(id, reason) {
    if (this.#calls.delete(id)) this.#worker?.postMessage({ op: 'abort', target: id, reason });
  }

  /** Streams the events of call `op` as an async iterator of `pick(event)`. */
  async *#stream(op, args, signal, pick) {
    throwIfAborted(signal, 'the generation');
    const queue = [];
    let wake = null;
    const { id, promise } = this.#start(op, args, {
      signal,
      onEvent: (event) => {
        queue.push(pick(event));
        wake?.();
      },
    });
    let ended = false;
    const end = promise.then(
      () => { ended = true; wake?.(); },
      (e) => { ended = true; wake?.(); throw e; },
    );
    end.catch(() => {}); // rethrown below, once the queue is drained
    try {
      for (;;) {
        // An abort ends the stream at once, pieces already here or not.
        throwIfAborted(signal, 'the generation');
        if (queue.length) {
          yield queue.shift();
        } else if (ended) {
          await end;
          return;
        } else {
          await new Promise((resolve) => (wake = resolve));
          wake = null;
        }
      }
    } finally {
      // Broken out of (or thrown into): the worker's generation ends too.
      if (!ended) this.#abort(id, 'the iterator was closed');
    }
  }

  /** `{ architecture, name, parameters, quantization, contextLength, backend, ... }` (as Model.info). */
  get info() {
    return { ...this.#info };
  }

  /** Token ids of `text` (a promise; see Model.tokenize). */
  tokenize(text, options = {}) {
    return this.#call('tokenize', { text: String(text), options });
  }

  /** Text of token ids (a promise). */
  detokenize(ids, options = {}) {
    return this.#call('detokenize', { ids: Array.from(ids), options });
  }

  /** `messages` rendered with the model's chat template (a promise). */
  applyChatTemplate(messages, options = {}) {
    return this.#call('applyChatTemplate', { messages, options });
  }

  /** As Model.generate: `for await (const { text, tokenId } of model.generate(prompt, options))`. */
  generate(prompt, options = {}) {
    const { signal, ...rest } = options;
    const wirePrompt = typeof prompt === 'string' ? prompt : Array.from(prompt);
    return this.#stream('generate', { prompt: wirePrompt, options: rest }, signal, (e) => e.piece);
  }

  /** As Model.complete. */
  complete(prompt, options = {}) {
    const { signal, ...rest } = options;
    throwIfAborted(signal, 'the generation');
    const wirePrompt = typeof prompt === 'string' ? prompt : Array.from(prompt);
    return this.#call('complete', { prompt: wirePrompt, options: rest }, { signal });
  }

  async #chatCreate(request = {}) {
    const { signal, ...rest } = request;
    if (rest.stream) return this.#stream('chat', { request: rest }, signal, (e) => e.chunk);
    throwIfAborted(signal, 'the generation');
    return this.#call('chat', { request: rest }, { signal });
  }

  async #embeddingsCreate(request = {}, options = {}) {
    const { signal, ...body } = withSignal(request, options);
    const onProgress = options?.onProgress;
    throwIfAborted(signal, 'the embeddings request');
    const onEvent = (e) => e.progress && onProgress?.(e.progress);
    return this.#call('embeddings', { request: body, options: {} }, { signal, onEvent });
  }

  /** Frees the model and ends the worker; later calls reject. */
  async dispose() {
    const worker = this.#worker;
    if (!worker) return;
    try {
      if (!this.#failure) await this.#call('dispose', {});
    } finally {
      this.#worker = null;
      worker.terminate();
      const gone = new Error('this model has been disposed; load it again to use it');
      for (const call of this.#calls.values()) call.settle(gone);
      this.#calls.clear();
    }
  }
}

export default WorkerModel;
