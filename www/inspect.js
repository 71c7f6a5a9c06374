// Model.inspect: what a GGUF model is and whether it fits this browser, from its header
// alone, before anything else is downloaded. The header's bytes come from a complete
// (or long enough) entry of the persistent cache (cache.js) with no network, else from
// the network with `Range` requests of growing size: the first MiB, then twice as much
// each time, until the header parses (SmolLM2's is 1.8 MB; Qwen2.5's, with a
// 151,936-token vocabulary, 6 MB). A server that ignores Range and answers 200 is read
// only until the header is complete, then the response is cancelled. The engine's
// WebInspector (crates/web/src/inspect.rs) parses the bytes and computes the need.

import { AbortError, DownloadError, InvalidModelError, abortError, throwIfAborted, toError } from './errors.js';
import { entryId, metaProblem, openStore, resolveSource, storedBytes } from './cache.js';

/** The first Range request's size; each next one is twice the previous (at least what the parser needs). */
const FIRST_BYTES = 1 << 20;
/** A header larger than this is not a model this engine would load (the parser caps arrays at 64 Mi elements). */
const MAX_HEADER_BYTES = 256 << 20;
const BACKENDS = ['auto', 'webgpu', 'cpu'];
const KV_CACHE_TYPES = ['f32', 'f16'];

/**
 * The `kvCacheType` option ('f32' | 'f16', or undefined for the default), checked before
 * anything is read: how a WebGPU session keeps its KV cache (the CPU backend's is f32).
 */
export function kvCacheTypeOption(options) {
  const t = options?.kvCacheType;
  if (t === undefined || t === null) return undefined;
  if (!KV_CACHE_TYPES.includes(t)) throw new TypeError(`kvCacheType must be one of ${KV_CACHE_TYPES.join(', ')}; got ${JSON.stringify(t)}`);
  return t;
}

/** `{ start, end, total }` of `Content-Range: bytes A-B/T` (total null for `*`). */
function contentRange(header) {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header?.trim() ?? '');
  return m ? { start: Number(m[1]), end: Number(m[2]), total: m[3] === '*' ? null : Number(m[3]) } : null;
}

function lengthOf(response) {
  if (response.headers.get('content-encoding')) return null;
  const text = response.headers.get('content-length');
  const n = Number(text);
  return text && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** The header's bytes from the cache entry of `key`, fed to a new inspector; null when the entry cannot give them. */
async function fromCache(key, Inspector, signal) {
  const store = await openStore();
  if (!store) return null;
  const id = entryId(key);
  const meta = await store.readMeta(id);
  if (!meta || metaProblem(meta, key) || storedBytes(meta) === 0) return null;
  const inspector = new Inspector(meta.size ?? undefined);
  try {
    let read = 0;
    for (let i = 0; i < meta.parts.length; i++) {
      const part = await store.readPart(id, i);
      if (!part || part.size !== meta.parts[i]) break;
      for (let at = 0; at < part.size; at += FIRST_BYTES) {
        throwIfAborted(signal, 'the model inspection');
        const bytes = new Uint8Array(await part.slice(at, Math.min(at + FIRST_BYTES, part.size)).arrayBuffer());
        read += bytes.byteLength;
        if (inspector.feed(bytes)) return { inspector, fileSize: meta.size ?? null, cacheBytes: read };
      }
    }
    // A complete entry always holds the header: it ended inside it, so the file is not a model.
    if (meta.complete) inspector.finish();
  } catch (e) {
    inspector.free();
    throw e;
  }
  inspector.free();
  return null;
}

/**
 * Reads the header of `url` over the network: Range requests of growing size, or one
 * response read until the header is complete when the server ignores Range.
 * Returns `{ inspector, fileSize, networkBytes, requests }`.
 */
async function fromNetwork(url, label, Inspector, signal) {
  let inspector = null;
  let fileSize = null;
  let networkBytes = 0;
  let requests = 0;
  let size = FIRST_BYTES;
  const fail = (message, extra = {}) => Object.assign(new DownloadError(`cannot inspect the model at ${label}: ${message}`), { url }, extra);
  try {
    for (;;) {
      const from = inspector ? inspector.received : 0;
      const to = Math.max(from + size, from + (inspector?.needed ?? 0)) - 1;
      let response;
      try {
        requests++;
        response = await fetch(url, { headers: { Range: `bytes=${from}-${to}` }, cache: 'no-store', signal });
      } catch (e) {
        if (signal?.aborted) throw abortError(signal, 'the model inspection');
        throw fail(`${e?.message ?? e} (network error, or the server does not allow cross-origin requests)`, { cause: e });
      }
      if (response.status === 416 && from === 0) {
        response.body?.cancel().catch(() => {});
        throw new InvalidModelError(`the file at ${label} is empty: not a GGUF model`);
      }
      if (!response.ok) {
        response.body?.cancel().catch(() => {});
        throw fail(`HTTP ${response.status}${response.statusText ? ' ' + response.statusText : ''}`, { status: response.status });
      }
      if (!response.body) throw fail('the response has no body');
      // 206: the range asked for; 200: the whole file (the server ignores Range), of
      // which the first `from` bytes were read already.
      let skip = 0;
      let total;
      if (response.status === 206) {
        const range = contentRange(response.headers.get('content-range'));
        if (!range || range.start !== from) {
          response.body.cancel().catch(() => {});
          throw fail(`the server answered the range ${from}-${to} with ${response.headers.get('content-range')}`);
        }
        total = range.total;
      } else {
        total = lengthOf(response);
        skip = from;
      }
      if (fileSize != null && total != null && total !== fileSize) {
        response.body.cancel().catch(() => {});
        throw fail(`the file changed between two requests (${fileSize}, then ${total} bytes)`);
      }
      fileSize ??= total;
      inspector ??= new Inspector(fileSize ?? undefined);
      const reader = response.body.getReader();
      let done = false;
      try {
        for (;;) {
          const step = await reader.read();
          if (step.done) break;
          let bytes = step.value;
          networkBytes += bytes.byteLength;
          if (skip) {
            const n = Math.min(skip, bytes.byteLength);
            skip -= n;
            bytes = bytes.subarray(n);
            if (!bytes.byteLength) continue;
          }
          if (inspector.feed(bytes)) {
            done = true;
            break;
          }
          if (inspector.received > MAX_HEADER_BYTES) {
            throw new InvalidModelError(`the header of ${label} is larger than ${MAX_HEADER_BYTES >> 20} MiB: not a model this engine loads`);
          }
        }
      } catch (e) {
        if (signal?.aborted) throw abortError(signal, 'the model inspection');
        if (e instanceof TypeError) throw fail(`the response broke off (${e.message})`, { cause: e });
        throw e;
      } finally {
        // The rest of a whole-file answer is not needed.
        reader.cancel().catch(() => {});
      }
      if (done) return { inspector, fileSize, networkBytes, requests };
      // The file ended before the header did (or the server sent less than the range
      // and the file's size is unknown): the parser says where it was cut.
      const atEnd = response.status === 200 || (fileSize != null && inspector.received >= fileSize);
      if (atEnd || inspector.received === from) {
        inspector.finish(); // throws where the header was cut
        return { inspector, fileSize, networkBytes, requests };
      }
      size *= 2;
    }
  } catch (e) {
    inspector?.free();
    throw e;
  }
}

/** What the adapter allows, capped by `limits`; null without a usable WebGPU adapter. */
function gpuLimits(caps, limits = {}) {
  if (!caps?.webgpu) return null;
  const min = (a, b) => (b == null ? a : a == null ? b : Math.min(a, b));
  return {
    maxBufferSize: min(caps.limits?.maxBufferSize, limits.maxBufferSize),
    maxStorageBufferBindingSize: min(caps.limits?.maxStorageBufferBindingSize, limits.maxStorageBufferBindingSize),
  };
}

/**
 * Inspects `source` (a URL string, URL or `hf:` URL): `{ architecture, name,
 * parameters, tensorCount, quantization, fileType, bytesByType, fileSize, headerBytes,
 * ..., backend, contextLength, kvCacheType, memory: { weights, kvCache, activations, other,
 * total }, allowed, largestWeight, largestBuffer, fits, reasons, checked, source, bytesRead }`.
 * `engine`: the wasm engine's exports (WebInspector, capabilities).
 */
export async function inspectSource(source, options = {}, engine) {
  const { signal, contextLength, limits = {} } = options;
  const backend = options.backend ?? 'auto';
  if (!BACKENDS.includes(backend)) throw new TypeError(`backend must be one of ${BACKENDS.join(', ')}; got ${JSON.stringify(backend)}`);
  const kvCacheType = kvCacheTypeOption(options);
  if (!(typeof source === 'string' || source instanceof URL)) {
    throw new TypeError('Model.inspect reads a URL (or hf: URL); for a Blob or buffer, Model.load makes the same check when the header arrives');
  }
  throwIfAborted(signal, 'the model inspection');
  const target = resolveSource(source, options);
  let read = null;
  let where = 'network';
  try {
    if (options.cache !== 'off' && options.cache !== false) read = await fromCache(target.key, engine.WebInspector, signal);
    if (read) where = 'cache';
    else read = await fromNetwork(target.url, target.label, engine.WebInspector, signal);
  } catch (e) {
    throw signal?.aborted && !(e instanceof AbortError) ? abortError(signal, 'the model inspection') : toError(e);
  }
  const { inspector } = read;
  try {
    const report = (kind, allowed) => inspector.report(kind, contextLength ?? undefined, allowed, kvCacheType);
    const caps = backend === 'cpu' ? null : await engine.capabilities();
    const gpu = gpuLimits(caps, limits);
    const cpuAllowed = { wasmMemoryBytes: limits.wasmMemoryBytes };
    let result;
    const checked = {};
    if (backend === 'webgpu') {
      result = report('webgpu', gpu ?? {});
      if (!gpu) {
        result.fits = false;
        result.reasons = [`WebGPU is not available here: ${caps?.reason ?? 'no adapter'}`];
      }
      checked.webgpu = { fits: result.fits, reasons: result.reasons };
    } else if (backend === 'cpu') {
      result = report('cpu', cpuAllowed);
      checked.cpu = { fits: result.fits, reasons: result.reasons };
    } else {
      // As a load with 'auto': WebGPU on a hardware adapter, the CPU otherwise or when
      // the model does not fit the GPU.
      const software = caps?.adapter?.isFallbackAdapter;
      if (gpu && !software) {
        const onGpu = report('webgpu', gpu);
        checked.webgpu = { fits: onGpu.fits, reasons: onGpu.reasons };
        if (onGpu.fits) result = onGpu;
      } else {
        checked.webgpu = { fits: false, reasons: [gpu ? 'the only WebGPU adapter is a software renderer: \'auto\' uses the CPU' : `WebGPU is not available here: ${caps?.reason ?? 'no adapter'}`] };
      }
      if (!result) {
        result = report('cpu', cpuAllowed);
        checked.cpu = { fits: result.fits, reasons: result.reasons };
        if (!result.fits) result.reasons = [...checked.webgpu.reasons.map((r) => `webgpu: ${r}`), ...result.reasons.map((r) => `cpu: ${r}`)];
      }
    }
    if (read.fileSize != null) result.fileSize = read.fileSize;
    return {
      ...result,
      url: target.url,
      checked,
      source: where,
      bytesRead: where === 'cache' ? read.cacheBytes : read.networkBytes,
      requests: read.requests ?? 0,
    };
  } catch (e) {
    throw toError(e);
  } finally {
    inspector.free();
  }
}
