// The engine inside a module Web Worker, driven by WorkerModel (worker-model.js), so
// loading and generating never block the page's main thread. One worker holds one
// model.
//
// Protocol (structured-clone messages):
//   in:  { id, op, args }            a call; op is one of HANDLERS below
//        { op: 'abort', target }     abort call `target` (its signal fires)
//   out: { id, event }               a progress event, piece or chunk of call `id`
//        { id, done: true, value }   call `id` returned (an embeddings reply moves its vectors' buffers)
//        { id, done: true, error: { name, message, details } }   details: url, status, needed, ...

import { Model } from './index.js';
import { ERROR_DETAILS } from './errors.js';

let model = null;
/** The AbortController of each call still running, by id. */
const running = new Map();
/** What a handler's reply moves to the page rather than copies (by reply). */
const transfers = new WeakMap();

function live() {
  if (!model) throw new Error('no model is loaded in this worker (load failed, or it was disposed)');
  return model;
}

const HANDLERS = {
  async load({ source, options }, signal, emit) {
    if (model) throw new Error('this worker already holds a model; use one WorkerModel per model');
    model = await Model.load(source, { ...options, signal, onProgress: (progress) => emit({ progress }) });
    return model.info;
  },
  inspect: ({ source, options }, signal) => Model.inspect(source, { ...options, signal }),
  tokenize: ({ text, options }) => live().tokenize(text, options),
  detokenize: ({ ids, options }) => live().detokenize(ids, options),
  applyChatTemplate: ({ messages, options }) => live().applyChatTemplate(messages, options),
  async generate({ prompt, options }, signal, emit) {
    for await (const piece of live().generate(prompt, { ...options, signal })) emit({ piece });
  },
  complete: ({ prompt, options }, signal) => live().complete(prompt, { ...options, signal }),
  async chat({ request }, signal, emit) {
    const reply = await live().chat.completions.create({ ...request, signal });
    if (!request.stream) return reply;
    for await (const chunk of reply) emit({ chunk });
    return undefined;
  },
  async embeddings({ request, options }, signal, emit) {
    const onProgress = (progress) => emit({ progress });
    const reply = await live().embeddings.create(request, { ...options, signal, onProgress });
    // The vectors' buffers move to the page (each Float32Array has its own).
    transfers.set(reply, reply.data.map((d) => d.embedding.buffer));
    return reply;
  },
  async dispose() {
    const m = model;
    model = null;
    await m?.dispose();
  },
};

self.onmessage = async ({ data }) => {
  const { id, op, args } = data ?? {};
  if (op === 'abort') {
    running.get(data.target)?.abort(new DOMException(data.reason ?? 'aborted', 'AbortError'));
    return;
  }
  const handler = Object.hasOwn(HANDLERS, op) ? HANDLERS[op] : null;
  if (!handler) {
    self.postMessage({ id, done: true, error: { name: 'Error', message: `unknown worker call '${op}'` } });
    return;
  }
  const controller = new AbortController();
  running.set(id, controller);
  try {
    const value = await handler(args ?? {}, controller.signal, (event) => self.postMessage({ id, event }));
    const transfer = value && typeof value === 'object' ? transfers.get(value) ?? [] : [];
    self.postMessage({ id, done: true, value }, transfer);
  } catch (e) {
    const details = {};
    for (const k of ERROR_DETAILS) if (e?.[k] !== undefined) details[k] = e[k];
    self.postMessage({ id, done: true, error: { name: e?.name ?? 'Error', message: e?.message ?? String(e), details } });
  } finally {
    running.delete(id);
  }
};
