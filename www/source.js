// Reading a model source chunk by chunk: a URL (download.js: the persistent cache, then
// fetch with a streaming body), a Blob or File (Blob.stream()), an ArrayBuffer / typed
// array, or a ReadableStream. Each chunk goes to the engine as it arrives, so the whole
// file is never held in JS memory.

import { openDownload } from './download.js';
import { openSharded, shardSources } from './shards.js';

/** Bytes handed to the engine at a time for in-memory sources. */
const MEMORY_CHUNK = 4 << 20;

/**
 * Every source reads as `{ read(): Promise<{done, value?: Uint8Array}>, drain(), verify(),
 * commit(), fail(error), cancel(), total: number | null, offset, label, source,
 * cachedBytes, networkBytes }` (see download.js for what the calls after read() do for a
 * URL; for the other sources they only end the reading). The first shard's URL of a
 * split model (`…-00001-of-0000N.gguf`) reads all its shards (shards.js), with
 * `hasNextShard`/`nextShard()` between them. `options`: Model.load's;
 * `deps.Sha256`: the engine's hasher.
 *
 * @returns {Promise<object>}
 */
export async function openSource(source, options = {}, deps = {}) {
  if (typeof source === 'string' || source instanceof URL) {
    const shards = shardSources(source);
    return shards ? openSharded(shards, options, deps) : openDownload(source, options, deps);
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    return fromStream(source.stream(), source.size, source.name ? `file ${source.name}` : 'blob');
  }
  if (source instanceof ArrayBuffer) return fromBytes(new Uint8Array(source));
  if (ArrayBuffer.isView(source)) {
    return fromBytes(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
  }
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) {
    return fromStream(source, null, 'stream');
  }
  throw new TypeError('model source must be a URL (or hf: URL), Blob/File, ArrayBuffer, Uint8Array or ReadableStream');
}

/** What a source read from the caller's memory, file or stream shares: no cache, nothing to verify. */
function local(total, label, read, cancel) {
  const src = {
    total,
    label,
    offset: 0,
    source: 'local',
    cachedBytes: 0,
    networkBytes: 0,
    async read() {
      const step = await read();
      if (!step.done) src.offset += step.value.byteLength;
      return step;
    },
    cancel,
    async drain() {
      cancel();
    },
    async verify() {},
    async commit() {},
    async fail() {
      cancel();
    },
  };
  return src;
}

function fromStream(stream, total, label) {
  const reader = stream.getReader();
  return local(total, label, () => reader.read(), (reason) => {
    reader.cancel(reason).catch(() => {});
  });
}

function fromBytes(bytes) {
  let at = 0;
  let cancelled = false;
  const read = async () => {
    // Yield to the event loop between chunks so an abort can be seen.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (cancelled || at >= bytes.byteLength) return { done: true };
    const value = bytes.subarray(at, Math.min(at + MEMORY_CHUNK, bytes.byteLength));
    at += value.byteLength;
    return { done: false, value };
  };
  return local(bytes.byteLength, 'buffer', read, () => {
    cancelled = true;
  });
}
