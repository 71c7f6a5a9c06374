// The persistent model cache: files a page downloads with Model.load(url) are kept in
// the origin's storage and read from there on the next visit.
//
// Storage: the Origin Private File System (OPFS) where the browser offers writable
// files in it (`FileSystemFileHandle.createWritable`), else the Cache API. OPFS is
// preferred because an entry can be written as the bytes arrive and read back in
// slices, so a download cut part-way keeps what arrived and a later load appends to
// it; the Cache API stores whole Responses, so this module keeps each entry as parts
// there too (a part is held in memory until it is stored). Browser HTTP caches are no
// substitute: they skip `no-store` responses, evict multi-gigabyte ones first and keep
// nothing of a cut download.
//
// An entry is a folder named by a hash of its key (the URL, or the hub file of an
// `hf:` URL) holding `meta.json` and parts `part-00000`, `part-00001`, ... of at most
// PART_BYTES each. meta.json is rewritten after every part is stored (a rewrite is
// atomic: OPFS commits a writable on close), so it never lists a part that is not
// fully there. An entry is complete when meta.json says so; it also records the
// size, the server's validators (ETag, Last-Modified) and the SHA-256 of the file,
// against which a cached load checks what it reads.
//
// This module needs no WebAssembly, so `modelCache` works in a page that only uses
// WorkerModel.

import { QuotaExceededError } from './errors.js';

/** Bytes per stored part: a cut download loses at most the part being written. */
export const PART_BYTES = 16 << 20;
const DIR = 'kindling-models-v1';
const CACHE_API_NAME = 'kindling-models-v1';
const CACHE_API_BASE = 'https://kindling-cache.invalid/';
const DEFAULT_HUB = 'https://huggingface.co';

// --- keys -----------------------------------------------------------------------------

/**
 * What a source names: `{ url, key, label }`. `hf:OWNER/REPO[@REV]/FILE` becomes the
 * hub's resolve URL (`hubUrl`, default https://huggingface.co) with the key
 * `hf:OWNER/REPO@REV/FILE`; other strings and URLs are resolved against the page and
 * are their own key. `cacheKey` overrides the key (for URLs signed per request).
 */
export function resolveSource(source, { hubUrl, cacheKey } = {}) {
  const text = String(source);
  let url;
  let key;
  if (text.startsWith('hf:')) {
    const m = /^hf:([^/@\s]+)\/([^/@\s]+)(?:@([^/\s]+))?\/(.+)$/.exec(text);
    if (!m) {
      throw new TypeError(`'${text}' is not a hub URL: expected hf:OWNER/REPO/FILE or hf:OWNER/REPO@REVISION/FILE`);
    }
    const [, owner, repo, revision = 'main', file] = m;
    const base = String(hubUrl ?? DEFAULT_HUB).replace(/\/+$/, '');
    const path = file.split('/').map(encodeURIComponent).join('/');
    url = `${base}/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/resolve/${encodeURIComponent(revision)}/${path}`;
    key = `hf:${owner}/${repo}@${revision}/${file}`;
  } else {
    url = new URL(text, globalThis.location?.href).href;
    key = url;
  }
  return { url, key: cacheKey == null ? key : String(cacheKey), label: text };
}

/** A file-name-safe id for a key: 64 bits of two FNV-1a lanes (meta.json holds the key itself). */
export function entryId(key) {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
    b ^= b >>> 15;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

const partName = (i) => `part-${String(i).padStart(5, '0')}`;

const isNotFound = (e) => e?.name === 'NotFoundError' || e?.name === 'TypeMismatchError';

// --- storage backends ---------------------------------------------------------------

/** Entries in the Origin Private File System. */
class OpfsStore {
  kind = 'opfs';
  #dir;

  constructor(dir) {
    this.#dir = dir;
  }

  static async open() {
    const root = await navigator.storage.getDirectory();
    return new OpfsStore(await root.getDirectoryHandle(DIR, { create: true }));
  }

  async #entry(id, create = false) {
    try {
      return await this.#dir.getDirectoryHandle(id, { create });
    } catch (e) {
      if (!create && isNotFound(e)) return null;
      throw e;
    }
  }

  async readMeta(id) {
    const dir = await this.#entry(id);
    if (!dir) return null;
    try {
      const file = await (await dir.getFileHandle('meta.json')).getFile();
      return JSON.parse(await file.text());
    } catch (e) {
      if (isNotFound(e) || e instanceof SyntaxError) return { broken: `meta.json: ${e.message}` };
      throw e;
    }
  }

  async writeMeta(id, meta) {
    const dir = await this.#entry(id, true);
    const writable = await (await dir.getFileHandle('meta.json', { create: true })).createWritable();
    try {
      await writable.write(JSON.stringify(meta));
      await writable.close();
    } catch (e) {
      await writable.abort().catch(() => {});
      throw e;
    }
  }

  /** A writer of part `index` (replacing any file of that name): write(bytes), close(), abort(). */
  async openPart(id, index) {
    const dir = await this.#entry(id, true);
    const writable = await (await dir.getFileHandle(partName(index), { create: true })).createWritable();
    return {
      write: (bytes) => writable.write(bytes),
      close: () => writable.close(),
      abort: () => writable.abort().catch(() => {}),
    };
  }

  /** Part `index` as a Blob, or null when it is missing. */
  async readPart(id, index) {
    const dir = await this.#entry(id);
    if (!dir) return null;
    try {
      return await (await dir.getFileHandle(partName(index))).getFile();
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  async remove(id) {
    try {
      await this.#dir.removeEntry(id, { recursive: true });
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  async ids() {
    const ids = [];
    for await (const [name, handle] of this.#dir.entries()) if (handle.kind === 'directory') ids.push(name);
    return ids;
  }
}

/** Entries in the Cache API, one Response per part (a part is held in memory until stored). */
class CacheApiStore {
  kind = 'cache-api';
  #cache;

  constructor(cache) {
    this.#cache = cache;
  }

  static async open() {
    return new CacheApiStore(await caches.open(CACHE_API_NAME));
  }

  #url = (id, name) => `${CACHE_API_BASE}${id}/${name}`;

  async readMeta(id) {
    const response = await this.#cache.match(this.#url(id, 'meta.json'));
    if (!response) return (await this.#names(id)).length ? { broken: 'meta.json is missing' } : null;
    try {
      return JSON.parse(await response.text());
    } catch (e) {
      return { broken: `meta.json: ${e.message}` };
    }
  }

  async writeMeta(id, meta) {
    await this.#cache.put(this.#url(id, 'meta.json'), new Response(JSON.stringify(meta), { headers: { 'Content-Type': 'application/json' } }));
  }

  async openPart(id, index) {
    let chunks = [];
    return {
      write: async (bytes) => {
        chunks.push(bytes.slice());
      },
      close: async () => {
        const body = new Blob(chunks);
        chunks = [];
        await this.#cache.put(this.#url(id, partName(index)), new Response(body));
      },
      abort: async () => {
        chunks = [];
      },
    };
  }

  async readPart(id, index) {
    const response = await this.#cache.match(this.#url(id, partName(index)));
    return response ? response.blob() : null;
  }

  async #names(id) {
    const prefix = `${CACHE_API_BASE}${id}/`;
    return (await this.#cache.keys()).map((r) => r.url).filter((u) => u.startsWith(prefix));
  }

  async remove(id) {
    const names = await this.#names(id);
    await Promise.all(names.map((u) => this.#cache.delete(u)));
    return names.length > 0;
  }

  async ids() {
    const ids = new Set();
    for (const r of await this.#cache.keys()) {
      if (r.url.startsWith(CACHE_API_BASE)) ids.add(r.url.slice(CACHE_API_BASE.length).split('/')[0]);
    }
    return [...ids];
  }
}

let storePromise = null;

/** The storage backend of this browser (OPFS, else the Cache API), or null when there is none. */
export function openStore() {
  storePromise ??= (async () => {
    const opfs = typeof navigator !== 'undefined' && navigator.storage?.getDirectory &&
      typeof FileSystemFileHandle !== 'undefined' && 'createWritable' in FileSystemFileHandle.prototype;
    if (opfs) {
      try {
        return await OpfsStore.open();
      } catch (e) {
        console.warn('kindling: the origin private file system is not usable; trying the Cache API', e);
      }
    }
    if (typeof caches !== 'undefined') {
      try {
        return await CacheApiStore.open();
      } catch (e) {
        console.warn('kindling: the Cache API is not usable; models will not be cached', e);
      }
    }
    return null;
  })();
  return storePromise;
}

// --- entries ------------------------------------------------------------------------

/** Bytes stored in an entry's parts (by its meta.json). */
export const storedBytes = (meta) => (meta?.parts ?? []).reduce((a, b) => a + b, 0);

/**
 * Why an entry's meta.json does not describe a usable entry (null when it does):
 * parts of impossible sizes, more bytes than the file, a complete entry whose parts do
 * not add up to its size or that has no hash.
 */
export function metaProblem(meta, key) {
  if (!meta || meta.broken) return meta?.broken ?? 'no meta.json';
  if (meta.v !== 1) return `unknown cache entry version ${meta.v}`;
  if (meta.key !== key) return `the entry is of another key (${meta.key})`;
  if (!Array.isArray(meta.parts) || meta.parts.some((n) => !Number.isSafeInteger(n) || n <= 0 || n > PART_BYTES)) {
    return 'its part sizes are not valid';
  }
  const stored = storedBytes(meta);
  if (meta.size != null && stored > meta.size) return `it holds ${stored} bytes of a ${meta.size}-byte file`;
  if (meta.complete && (stored !== meta.size || !/^[0-9a-f]{64}$/.test(meta.sha256 ?? ''))) {
    return `it says it is complete with ${stored} of ${meta.size} bytes and hash ${meta.sha256}`;
  }
  return null;
}

/**
 * Holds the lock of entry `id` (Web Locks, shared by every tab and worker of the
 * origin) until `release()`; waits up to `waitMs` for another holder (a load still
 * cleaning up after an abort), then gives null. Without Web Locks, a no-op lock.
 */
export function tryLock(id, waitMs = 3000) {
  if (typeof navigator === 'undefined' || !navigator.locks?.request) return Promise.resolve(() => {});
  return new Promise((resolve, reject) => {
    const hold = (lock) => (lock ? new Promise((release) => resolve(release)) : resolve(null));
    const name = `kindling-cache:${id}`;
    const wait = typeof AbortSignal.timeout === 'function' ? AbortSignal.timeout(waitMs) : undefined;
    navigator.locks.request(name, wait ? { signal: wait } : { ifAvailable: true }, hold).catch((e) => {
      if (e?.name === 'AbortError' || e?.name === 'TimeoutError') resolve(null);
      else reject(e);
    });
  });
}

/** Waits for the lock of entry `id`, runs `f`, releases. */
function withLock(id, f) {
  if (typeof navigator === 'undefined' || !navigator.locks?.request) return f();
  return navigator.locks.request(`kindling-cache:${id}`, f);
}

/** `{ usage, quota }` of the origin (navigator.storage.estimate()), nulls where unknown. */
export async function estimate() {
  try {
    const { usage = null, quota = null } = (await navigator.storage?.estimate?.()) ?? {};
    return { usage, quota };
  } catch {
    return { usage: null, quota: null };
  }
}

/**
 * A QuotaExceededError saying what was needed and what was free. `accepted`: bytes the
 * browser stored before it refused a write (null when the load was refused up front);
 * then that is what was free, whatever estimate() says (it reports the origin's usual
 * quota, e.g. where a lower one is imposed through DevTools).
 */
export async function quotaError(needed, url, cause, accepted = null) {
  const { usage, quota } = await estimate();
  const estimated = usage != null && quota != null ? Math.max(0, quota - usage) : null;
  const refusedMidway = accepted != null && (estimated == null || needed == null || estimated >= needed);
  const free = refusedMidway ? accepted : estimated;
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  const where = refusedMidway
    ? `, the browser refused to store more after ${mb(accepted)}` +
      `${estimated != null ? ` (navigator.storage.estimate() reports ${mb(estimated)} free of ${mb(quota)})` : ''}`
    : estimated != null ? `, the origin has ${mb(estimated)} free of its ${mb(quota)} quota` : '';
  const e = new QuotaExceededError(
    `not enough storage to keep the model from ${url}: it needs ${needed != null ? mb(needed) : 'an unknown amount'}` +
      `${where}; nothing was kept (free space with Model.cache.delete()/clear(), or load with cache: 'off')`,
    { cause },
  );
  e.needed = needed;
  e.available = free;
  return e;
}

// --- the management API ---------------------------------------------------------------

/**
 * The model cache of this origin: `Model.cache` and `WorkerModel.cache` (the same
 * storage: a worker and the page share it).
 */
export const modelCache = {
  /** `[{ key, url, size, total, complete, storedAt, etag, integrity, storage }]`, newest first. */
  async list() {
    const store = await openStore();
    if (!store) return [];
    const out = [];
    for (const id of await store.ids()) {
      const meta = await store.readMeta(id);
      if (!meta || meta.broken) continue;
      out.push({
        key: meta.key,
        url: meta.url,
        size: storedBytes(meta),
        total: meta.size ?? null,
        complete: !!meta.complete && !metaProblem(meta, meta.key),
        storedAt: new Date(meta.storedAt),
        etag: meta.etag ?? null,
        integrity: meta.sha256 ? `sha256-${hexToBase64(meta.sha256)}` : null,
        storage: store.kind,
      });
    }
    return out.sort((a, b) => b.storedAt - a.storedAt);
  },

  /** Whether a complete entry exists for `source` (a URL or hf: URL; options as Model.load's). */
  async has(source, options = {}) {
    const store = await openStore();
    if (!store) return false;
    const { key } = resolveSource(source, options);
    const meta = await store.readMeta(entryId(key));
    return !!meta?.complete && !metaProblem(meta, key);
  },

  /** Removes the entry of `source` (complete or partial); whether there was one. Waits for a load of it to end. */
  async delete(source, options = {}) {
    const store = await openStore();
    if (!store) return false;
    const id = entryId(resolveSource(source, options).key);
    return withLock(id, () => store.remove(id));
  },

  /** Removes every entry; how many there were. */
  async clear() {
    const store = await openStore();
    if (!store) return 0;
    let n = 0;
    for (const id of await store.ids()) if (await withLock(id, () => store.remove(id))) n++;
    return n;
  },

  /** `{ bytes, entries, usage, quota, persisted, storage }`: this cache's bytes, and the origin's usage and quota. */
  async usage() {
    const entries = await this.list();
    const { usage, quota } = await estimate();
    let persisted = null;
    try {
      persisted = (await navigator.storage?.persisted?.()) ?? null;
    } catch {
      // not offered here
    }
    const store = await openStore();
    return { bytes: entries.reduce((a, e) => a + e.size, 0), entries: entries.length, usage, quota, persisted, storage: store?.kind ?? null };
  },

  /** Asks the browser to keep this origin's storage under pressure (navigator.storage.persist()). */
  async persist() {
    try {
      return (await navigator.storage?.persist?.()) ?? false;
    } catch {
      return false;
    }
  },
};

export function hexToBase64(hex) {
  let bin = '';
  for (let i = 0; i < hex.length; i += 2) bin += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  return btoa(bin);
}

export function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
