// Reading a model source chunk by chunk: a URL (fetch with a streaming body), a Blob or
// File (Blob.stream()), an ArrayBuffer / typed array, or a ReadableStream. Each chunk
// goes to the engine as it arrives, so the whole file is never held in JS memory.

import { InvalidModelError } from './errors.js';

/** Bytes handed to the engine at a time for in-memory sources. */
const MEMORY_CHUNK = 4 << 20;

/**
 * @returns {Promise<{ read(): Promise<{done: boolean, value?: Uint8Array}>, cancel(): void,
 *   total: number | null, label: string, rereadable: boolean }>}
 */
export async function openSource(source, signal) {
  if (typeof source === 'string' || source instanceof URL) return openUrl(String(source), signal);
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    return fromStream(source.stream(), source.size, source.name ? `file ${source.name}` : 'blob', true);
  }
  if (source instanceof ArrayBuffer) return fromBytes(new Uint8Array(source));
  if (ArrayBuffer.isView(source)) {
    return fromBytes(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
  }
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) {
    return fromStream(source, null, 'stream', false);
  }
  throw new TypeError('model source must be a URL, Blob/File, ArrayBuffer, Uint8Array or ReadableStream');
}

async function openUrl(url, signal) {
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (e) {
    if (e?.name === 'AbortError' || signal?.aborted) throw e;
    throw new InvalidModelError(
      `cannot download the model from ${url}: ${e?.message ?? e} (network error, or the server does not allow ` +
        'cross-origin requests: it must send Access-Control-Allow-Origin)',
      { cause: e },
    );
  }
  if (!response.ok) {
    throw new InvalidModelError(
      `cannot download the model from ${url}: HTTP ${response.status}${response.statusText ? ' ' + response.statusText : ''}`,
    );
  }
  if (!response.body) throw new InvalidModelError(`the response from ${url} has no body`);
  // With a content encoding, Content-Length counts compressed bytes: not a file size.
  const length = Number(response.headers.get('content-length'));
  const total = !response.headers.get('content-encoding') && Number.isFinite(length) && length > 0 ? length : null;
  return fromStream(response.body, total, url, true);
}

function fromStream(stream, total, label, rereadable) {
  const reader = stream.getReader();
  return {
    total,
    label,
    rereadable,
    read: () => reader.read(),
    cancel: (reason) => {
      reader.cancel(reason).catch(() => {});
    },
  };
}

function fromBytes(bytes) {
  let at = 0;
  let cancelled = false;
  return {
    total: bytes.byteLength,
    label: 'buffer',
    rereadable: true,
    async read() {
      // Yield to the event loop between chunks so an abort can be seen.
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (cancelled || at >= bytes.byteLength) return { done: true };
      const value = bytes.subarray(at, Math.min(at + MEMORY_CHUNK, bytes.byteLength));
      at += value.byteLength;
      return { done: false, value };
    },
    cancel() {
      cancelled = true;
    },
  };
}
