// Models split by llama.cpp's gguf-split: `name-00001-of-00003.gguf`, `...-00002-...`.
// Loading the first shard's URL loads them all, in order, as one stream of sources:
// each shard is its own download (download.js: cached, resumed and verified on its
// own), opened when the previous one is done. The engine is told where one shard ends
// (`loader.nextShard`); each shard starts with its own GGUF header.

import { modelCache, resolveSource } from './cache.js';
import { openDownload } from './download.js';

const SHARD_NAME = /^(.*-)(\d{5})-of-(\d{5})(\.gguf)(\?.*)?$/;

/**
 * The sources of every shard when `source` (a URL string, URL or hf: URL) names the
 * first of a split model; null otherwise (another shard is loaded as given: the engine
 * says which to load).
 */
export function shardSources(source) {
  const m = SHARD_NAME.exec(String(source));
  if (!m || Number(m[2]) !== 1 || Number(m[3]) < 2) return null;
  const [, head, , count, ext, query = ''] = m;
  return Array.from({ length: Number(count) }, (_, i) => `${head}${String(i + 1).padStart(5, '0')}-of-${count}${ext}${query}`);
}

/** The integrity of each shard: `integrity` must be an array with one per shard (or absent). */
function integrities(integrity, n) {
  if (integrity == null) return Array(n).fill(undefined);
  if (!Array.isArray(integrity) || integrity.length !== n) {
    throw new TypeError(`the model is split in ${n} files: integrity must be an array of ${n} 'sha256-…' values, one per shard`);
  }
  return integrity;
}

/** Each shard's size, when known without reading it: a complete cache entry's, else a HEAD request's. */
async function shardSizes(sources, options) {
  const cached = options.cache === 'off' || options.cache === false ? [] : await modelCache.list().catch(() => []);
  return Promise.all(
    sources.map(async (s) => {
      const { url, key } = resolveSource(s, { hubUrl: options.hubUrl });
      const entry = cached.find((e) => e.key === key && e.complete);
      if (entry) return entry.total;
      if (options.cache === 'no-validate') return null;
      try {
        const r = await fetch(url, { method: 'HEAD', cache: 'no-store', signal: options.signal });
        const n = Number(r.headers.get('content-length'));
        return r.ok && r.headers.get('content-length') && !r.headers.get('content-encoding') ? n : null;
      } catch {
        return null; // the download itself will say what is wrong
      }
    }),
  );
}

/**
 * Opens the first shard of `sources`; the result reads as a single source (source.js)
 * plus `shardCount`, `hasNextShard`, `nextShard()` (ends the current shard: reads what
 * is left of it, verifies it, opens the next; returns its size when known).
 */
export async function openSharded(sources, options, deps) {
  const checks = integrities(options.integrity, sources.length);
  const sizes = await shardSizes(sources, options);
  const open = (i) => openDownload(sources[i], { ...options, integrity: checks[i], cacheKey: undefined }, deps);
  return new Sharded(sources, sizes, await open(0), open);
}

class Sharded {
  #sources;
  #sizes;
  #open;
  #index = 0;
  #current;
  /** Shards read and verified, committed with the last one once the model is built. */
  #finished = [];
  #base = 0;

  constructor(sources, sizes, first, open) {
    this.#sources = sources;
    this.#sizes = sizes;
    this.#current = first;
    this.#open = open;
    if (first.total != null) this.#sizes[0] = first.total;
  }

  get shardCount() {
    return this.#sources.length;
  }

  get hasNextShard() {
    return this.#index + 1 < this.#sources.length;
  }

  /** The size of the first shard (the engine checks the first header against it). */
  get firstTotal() {
    return this.#sizes[0];
  }

  /** All shards together, when every size is known. */
  get total() {
    return this.#sizes.every((n) => n != null) ? this.#sizes.reduce((a, b) => a + b, 0) : null;
  }

  get label() {
    return `${this.#current.label} (shard ${this.#index + 1} of ${this.#sources.length})`;
  }

  get offset() {
    return this.#base + this.#current.offset;
  }

  get source() {
    return this.#current.source;
  }

  get cachedBytes() {
    return this.#finished.reduce((a, d) => a + d.cachedBytes, this.#current.cachedBytes);
  }

  get networkBytes() {
    return this.#finished.reduce((a, d) => a + d.networkBytes, this.#current.networkBytes);
  }

  read() {
    return this.#current.read();
  }

  async nextShard() {
    const done = this.#current;
    await done.drain();
    await done.verify();
    this.#finished.push(done);
    this.#base += done.offset;
    this.#index++;
    this.#current = await this.#open(this.#index);
    if (this.#current.total != null) this.#sizes[this.#index] = this.#current.total;
    return this.#current.total;
  }

  drain() {
    return this.#current.drain();
  }

  verify() {
    return this.#current.verify();
  }

  async commit() {
    for (const d of [...this.#finished, this.#current]) await d.commit();
  }

  /** The shards read before stay (each was verified on its own); the current one fails. */
  async fail(error) {
    for (const d of this.#finished) await d.commit();
    await this.#current.fail(error);
  }

  cancel(reason) {
    this.#current.cancel(reason);
  }
}
