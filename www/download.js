// A model download as one ordered stream of the file's bytes, wherever they come from:
// the persistent cache (cache.js) first, then the network from the first byte the
// cache does not hold. Along the way it
//   - keeps what arrives in the cache, part by part, so a cut download resumes;
//   - retries transient failures (network errors, 5xx, 408, 429) with backoff, each
//     retry continuing with `Range` + `If-Range` from the byte it stopped at;
//   - hashes the bytes (SHA-256, in the engine's WebAssembly: `Sha256`) to check
//     `integrity` and, on a cached load, the hash the entry was stored with.
//
// The consumer (index.js `loadOnce`) calls read() until done (or drain() once the
// model has every tensor), then verify() before building the model, then commit()
// after it is built, or fail(error) on any failure: commit marks the entry complete;
// fail keeps a partial entry when the failure says nothing against its bytes (abort,
// network, a device that could not hold the model) and removes it otherwise.

import { AbortError, DownloadError, IntegrityError, InvalidModelError, QuotaExceededError, abortError } from './errors.js';
import {
  PART_BYTES, bytesToHex, entryId, estimate, metaProblem, modelCache, openStore, quotaError, resolveSource, storedBytes, tryLock,
} from './cache.js';

/**
 * Bytes per read from storage, and at most per hasher update: each crosses into
 * WebAssembly memory as a copy, so this bounds what a cached load adds to the engine's
 * peak memory (index.js feeds the engine in pieces of the same size).
 */
const READ_CHUNK = 1 << 20;
/** Once the model has every tensor, at most this many bytes more are read to complete a cache entry. */
const DRAIN_LIMIT = 64 << 20;
const CACHE_MODES = ['default', 'no-validate', 'off'];
const TRANSIENT_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

/** The load must start again from the network: a cached copy turned out corrupt, or the file changed mid-download. */
export class RestartLoad extends Error {
  name = 'RestartLoad';
}

/** The 32 bytes of a Subresource-Integrity-style `sha256-<base64>` (the first sha256 token), or null. */
export function parseIntegrity(integrity) {
  if (integrity == null || integrity === '') return null;
  for (const token of String(integrity).trim().split(/\s+/)) {
    const m = /^sha256-([A-Za-z0-9+/_-]+={0,2})$/.exec(token);
    if (!m) continue;
    try {
      const bin = atob(m[1].replace(/-/g, '+').replace(/_/g, '/'));
      if (bin.length === 32) return Uint8Array.from(bin, (c) => c.charCodeAt(0));
    } catch {
      // not base64: fall through to the error
    }
  }
  throw new TypeError(`integrity must be 'sha256-<base64 of the 32-byte SHA-256>' (as in Subresource Integrity), got '${integrity}'`);
}

function transient(error) {
  error.transient = true;
  return error;
}

const isQuota = (e) => e?.name === 'QuotaExceededError' || e instanceof QuotaExceededError;

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal, 'the model download'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `{ start, end, total }` of a `Content-Range: bytes A-B/T` header (total null for `*`). */
function contentRange(header) {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header?.trim() ?? '');
  return m ? { start: Number(m[1]), end: Number(m[2]), total: m[3] === '*' ? null : Number(m[3]) } : null;
}

/** The file's size from a response: Content-Range's total, else Content-Length (unless encoded). */
function sizeOf(response) {
  if (response.status === 206) return contentRange(response.headers.get('content-range'))?.total ?? null;
  if (response.headers.get('content-encoding')) return null;
  const n = Number(response.headers.get('content-length'));
  return response.headers.get('content-length') && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

const validatorsOf = (response) => ({
  etag: response.headers.get('etag'),
  lastModified: response.headers.get('last-modified'),
});

/**
 * Opens the download of `source` (a URL string, URL or `hf:` URL). Options as
 * Model.load: cache, integrity, retries, retryDelayMs, hubUrl, cacheKey, persist,
 * signal. `deps.Sha256`: the engine's incremental hasher class.
 */
export async function openDownload(source, options, deps) {
  const download = new Download(source, options, deps);
  try {
    await download.open();
  } catch (e) {
    await download.fail(e);
    throw e;
  }
  return download;
}

class Download {
  /** Bytes handed out so far (the file's first `offset` bytes, in order). */
  offset = 0;
  /** The file's size, when known. */
  total = null;
  /** Where the last chunk came from: 'cache' or 'network'. */
  source = 'network';
  cachedBytes = 0;
  networkBytes = 0;

  #target;
  #mode;
  #expected;
  #retries;
  #retryDelay;
  #persist;
  #Sha256;
  #signal;
  #controller = new AbortController();
  #store = null;
  #id = null;
  #release = null;
  /** The entry being read and/or written: its meta.json. */
  #meta = null;
  /** Parts of #meta read from the cache before the network. */
  #cachedParts = 0;
  /** The first network response (already checked), when the network is needed. */
  #response = null;
  #validators = { etag: null, lastModified: null };
  /** Bytes are written to the cache (meta.json and parts). */
  #writing = false;
  #checkedQuota = false;
  #part = null;
  #partBytes = 0;
  #hasher = null;
  /** The hex SHA-256 of the whole file, once read to the end. */
  #digest = null;
  /** The stream was cut short on purpose (drain): no hash to compare. */
  #incomplete = false;
  #reader = null;
  #iterator;
  /** The read in progress (fail() waits for it before touching the entry). */
  #pending = null;
  #closed = false;

  constructor(source, options, deps) {
    const mode = options.cache === true || options.cache == null ? 'default' : options.cache === false ? 'off' : options.cache;
    if (!CACHE_MODES.includes(mode)) {
      throw new TypeError(`cache must be one of ${CACHE_MODES.map((m) => `'${m}'`).join(', ')}; got ${JSON.stringify(options.cache)}`);
    }
    const retries = options.retries ?? 3;
    if (!Number.isInteger(retries) || retries < 0) throw new TypeError(`retries must be a whole number ≥ 0, got ${retries}`);
    this.#mode = mode;
    this.#target = resolveSource(source, options);
    this.#expected = parseIntegrity(options.integrity);
    this.#retries = retries;
    this.#retryDelay = options.retryDelayMs ?? 500;
    this.#persist = !!options.persist;
    this.#Sha256 = deps.Sha256;
    this.#signal = options.signal;
    if (this.#signal?.aborted) throw abortError(this.#signal, 'the model load');
    this.#signal?.addEventListener('abort', () => this.#controller.abort(this.#signal.reason), { once: true });
    this.#iterator = this.#chunks();
  }

  get label() {
    return this.#target.label;
  }

  /** What is stored: 'none' (not caching), 'reading' a complete entry, or 'writing'. */
  get cacheState() {
    return this.#writing ? 'writing' : this.#cachedParts && !this.#response ? 'reading' : 'none';
  }

  #note(message) {
    console.info(`kindling: ${message}`);
  }

  async #drop(why) {
    this.#note(`the cached copy of ${this.label} is not used: ${why}; it is removed`);
    await this.#store.remove(this.#id);
    this.#meta = null;
  }

  async open() {
    const { key } = this.#target;
    this.#id = entryId(key);
    if (this.#mode !== 'off') {
      this.#store = await openStore();
      if (this.#store) {
        this.#release = await tryLock(this.#id);
        if (!this.#release) {
          this.#note(`another load of ${this.label} is using its cache entry; this one does not use the cache`);
          this.#store = null;
        }
      }
    }
    let meta = this.#store ? await this.#store.readMeta(this.#id) : null;
    this.#meta = meta;
    if (meta) {
      const problem = metaProblem(meta, key) ?? (await this.#partsProblem(meta));
      if (problem) await this.#drop(problem);
      else if (meta.complete && this.#expected && meta.sha256 !== bytesToHex(this.#expected)) {
        await this.#drop(`its SHA-256 ${meta.sha256} is not the integrity asked for`);
      } else if (meta.complete && this.#mode === 'default' && (await this.#changedOnServer(meta))) {
        await this.#drop('the file on the server has changed');
      } else if (!meta.complete && meta.size != null && storedBytes(meta) >= meta.size) {
        await this.#drop('all of its bytes are there but it was never checked');
      }
      meta = this.#meta;
    }
    if (meta?.complete) {
      // Every byte from the cache; hashed to compare with the stored hash unless 'no-validate'.
      this.#cachedParts = meta.parts.length;
      this.total = meta.size;
      if (this.#mode === 'default' || this.#expected) this.#hasher = new this.#Sha256();
      return;
    }
    // The network: resume what is stored when the server still has the same file.
    let from = meta ? storedBytes(meta) : 0;
    if (from > 0) this.#validators = { etag: meta.etag ?? null, lastModified: meta.lastModified ?? null };
    let response = await this.#getRetrying(from);
    if (from > 0) {
      const range = response.status === 206 ? contentRange(response.headers.get('content-range')) : null;
      const etag = response.headers.get('etag');
      const same = range && range.start === from && (meta.size == null || range.total === meta.size) &&
        !(meta.etag && etag && etag !== meta.etag);
      if (same) {
        this.#note(`resuming ${this.label} at byte ${from} of ${range.total ?? '?'}`);
        this.#cachedParts = meta.parts.length;
      } else {
        await this.#drop(`the server ${response.status === 206 ? 'sent another range or version' : 'sent the whole file'} when asked to resume`);
        from = 0;
        if (response.status !== 200) {
          response.body?.cancel().catch(() => {});
          this.#validators = { etag: null, lastModified: null };
          response = await this.#getRetrying(0);
        }
      }
    }
    this.#response = response;
    this.total = sizeOf(response);
    this.#validators = validatorsOf(response);
    if (this.#store) {
      if (this.#persist) await modelCache.persist();
      const now = Date.now();
      this.#meta = this.#meta ?? { v: 1, key, url: this.#target.url, size: null, parts: [], complete: false, storedAt: now };
      Object.assign(this.#meta, {
        url: this.#target.url,
        size: this.total,
        etag: this.#validators.etag,
        lastModified: this.#validators.lastModified,
        updatedAt: now,
      });
      this.#writing = true;
      this.#hasher = new this.#Sha256();
    } else if (this.#expected) {
      this.#hasher = new this.#Sha256();
    }
  }

  /** Why the parts on disk do not match meta.json (missing or of another size), or null. */
  async #partsProblem(meta) {
    for (let i = 0; i < meta.parts.length; i++) {
      const part = await this.#store.readPart(this.#id, i);
      if (!part) return `part ${i} is missing`;
      if (part.size !== meta.parts[i]) return `part ${i} holds ${part.size} bytes, not ${meta.parts[i]}`;
    }
    return null;
  }

  /** A cheap revalidation (HEAD): whether the server's file differs from the entry. Offline: no. */
  async #changedOnServer(meta) {
    let response;
    try {
      response = await fetch(this.#target.url, { method: 'HEAD', cache: 'no-store', signal: this.#controller.signal });
    } catch (e) {
      if (this.#controller.signal.aborted) throw abortError(this.#signal, 'the model load');
      this.#note(`cannot reach ${this.label} to revalidate its cached copy (${e.message}); using the cached copy`);
      return false;
    }
    if (!response.ok) return false; // a server that does not answer HEAD: keep what we have
    const { etag, lastModified } = validatorsOf(response);
    if (meta.etag && etag) return etag !== meta.etag;
    const size = sizeOf(response);
    if (meta.size != null && size != null && size !== meta.size) return true;
    if (meta.lastModified && lastModified) return lastModified !== meta.lastModified;
    return false;
  }

  /** GET from byte `from` (Range + If-Range past 0); throws DownloadError (transient or not). */
  async #get(from) {
    const headers = {};
    if (from > 0) {
      headers.Range = `bytes=${from}-`;
      const v = this.#validators.etag ?? this.#validators.lastModified;
      if (v && !v.startsWith('W/')) headers['If-Range'] = v;
    }
    let response;
    try {
      response = await fetch(this.#target.url, { headers, cache: 'no-store', signal: this.#controller.signal });
    } catch (e) {
      if (this.#controller.signal.aborted) throw abortError(this.#signal, 'the model download');
      const error = new DownloadError(
        `cannot download the model from ${this.label}: ${e?.message ?? e} (network error, or the server does not allow ` +
          'cross-origin requests: it must send Access-Control-Allow-Origin)',
        { cause: e },
      );
      error.url = this.#target.url;
      throw transient(error);
    }
    if (!response.ok) {
      response.body?.cancel().catch(() => {});
      const error = new DownloadError(
        `cannot download the model from ${this.label}: HTTP ${response.status}${response.statusText ? ' ' + response.statusText : ''}`,
      );
      error.status = response.status;
      error.url = this.#target.url;
      throw TRANSIENT_STATUS.has(response.status) ? transient(error) : error;
    }
    if (!response.body) throw new DownloadError(`the response from ${this.label} has no body`);
    return response;
  }

  async #backoff(failures, error) {
    if (failures > this.#retries) {
      const at = this.offset ? ` at byte ${this.offset}${this.total != null ? ` of ${this.total}` : ''}` : '';
      const e = new DownloadError(
        `the download of ${this.label} failed${at} after ${this.#retries} ${this.#retries === 1 ? 'retry' : 'retries'}: ${error.message}`,
        { cause: error },
      );
      e.url = this.#target.url;
      e.status = error.status;
      throw transient(e);
    }
    const ms = this.#retryDelay * 2 ** (failures - 1);
    this.#note(`${error.message}; retry ${failures} of ${this.#retries} in ${ms} ms`);
    await sleep(ms, this.#controller.signal);
  }

  /** #get with retries of transient failures. */
  async #getRetrying(from) {
    for (let failures = 1; ; failures++) {
      try {
        return await this.#get(from);
      } catch (e) {
        if (!e.transient || this.#controller.signal.aborted) throw e;
        await this.#backoff(failures, e);
      }
    }
  }

  /** The answer to a mid-download request from `from`: how many of its bytes to skip, or RestartLoad. */
  #resumed(response, from) {
    const { etag } = validatorsOf(response);
    const changed = () => new RestartLoad(`the file at ${this.label} changed on the server during the download`);
    if (this.#validators.etag && etag && etag !== this.#validators.etag) throw changed();
    if (response.status === 206) {
      const range = contentRange(response.headers.get('content-range'));
      if (!range || range.start !== from) throw changed();
      if (this.total != null && range.total != null && range.total !== this.total) throw changed();
      return 0;
    }
    // 200: the whole file again (no range support); the same file when the validators agree.
    const size = sizeOf(response);
    if (this.total != null && size != null && size !== this.total) throw changed();
    if (!this.#validators.etag && !etag && this.total == null) throw changed();
    return from;
  }

  async *#chunks() {
    for (let i = 0; i < this.#cachedParts; i++) {
      const part = await this.#store.readPart(this.#id, i);
      if (!part || part.size !== this.#meta.parts[i]) {
        throw new RestartLoad(`part ${i} of the cached copy of ${this.label} changed while it was read`);
      }
      for (let at = 0; at < part.size; at += READ_CHUNK) {
        const bytes = new Uint8Array(await part.slice(at, Math.min(at + READ_CHUNK, part.size)).arrayBuffer());
        this.source = 'cache';
        yield bytes;
      }
    }
    if (!this.#response) return;
    let response = this.#response;
    let skip = 0;
    for (let failures = 0; ; ) {
      try {
        if (!response) {
          response = await this.#get(this.offset);
          skip = this.#resumed(response, this.offset);
        }
        this.#reader = response.body.getReader();
        for (;;) {
          const { done, value } = await this.#reader.read();
          if (done) break;
          let bytes = value;
          if (skip) {
            const n = Math.min(skip, bytes.byteLength);
            skip -= n;
            bytes = bytes.subarray(n);
            if (!bytes.byteLength) continue;
          }
          failures = 0;
          this.source = 'network';
          yield bytes;
        }
        if (this.total != null && this.offset < this.total) {
          throw transient(new Error(`the response ended at byte ${this.offset} of ${this.total}`));
        }
        return;
      } catch (e) {
        response = null;
        if (this.#controller.signal.aborted) throw abortError(this.#signal, 'the model download');
        // A body cut part-way rejects with a TypeError ("network error").
        if (!(e.transient || e instanceof TypeError)) throw e;
        failures++;
        // Keep what arrived, in case the retries fail too (or the tab closes meanwhile).
        await this.#commitPart();
        await this.#backoff(failures, e);
      }
    }
  }

  /** The next chunk of the file: `{ done, value }`. */
  read() {
    this.#pending = this.#read();
    return this.#pending;
  }

  async #read() {
    const { done, value } = await this.#iterator.next();
    if (done) return { done: true };
    this.offset += value.byteLength;
    if (this.#hasher) {
      for (let at = 0; at < value.byteLength; at += READ_CHUNK) this.#hasher.update(value.subarray(at, at + READ_CHUNK));
    }
    if (this.source === 'cache') this.cachedBytes += value.byteLength;
    else {
      this.networkBytes += value.byteLength;
      if (this.#writing) await this.#write(value);
    }
    return { done: false, value };
  }

  async #write(bytes) {
    let upFront = false;
    try {
      if (!this.#checkedQuota) {
        this.#checkedQuota = true;
        if (this.total != null) {
          const { usage, quota } = await estimate();
          const need = this.total - storedBytes(this.#meta);
          if (usage != null && quota != null && need > quota - usage) {
            upFront = true;
            throw new DOMException(`${need} bytes needed, ${quota - usage} free`, 'QuotaExceededError');
          }
        }
        await this.#store.writeMeta(this.#id, this.#meta);
      }
      for (let at = 0; at < bytes.byteLength; ) {
        if (!this.#part) {
          this.#part = await this.#store.openPart(this.#id, this.#meta.parts.length);
          this.#partBytes = 0;
        }
        const n = Math.min(bytes.byteLength - at, PART_BYTES - this.#partBytes);
        await this.#part.write(bytes.subarray(at, at + n));
        this.#partBytes += n;
        at += n;
        if (this.#partBytes === PART_BYTES) await this.#commitPart();
      }
    } catch (e) {
      // What the browser took before it refused (the entry is removed below).
      const accepted = storedBytes(this.#meta) + this.#partBytes;
      await this.#part?.abort();
      this.#part = null;
      this.#writing = false;
      await this.#store.remove(this.#id).catch(() => {});
      if (isQuota(e)) throw await quotaError(this.total, this.label, e, upFront ? null : accepted);
      // Any other storage failure: this load goes on without the cache.
      console.warn(`kindling: cannot store ${this.label} in the cache (${e?.name}: ${e?.message}); loading it without the cache`);
    }
  }

  /** Stores the part being written and lists it in meta.json. */
  async #commitPart() {
    if (!this.#part) return;
    const part = this.#part;
    this.#part = null;
    await part.close();
    if (this.#partBytes > 0) {
      this.#meta.parts.push(this.#partBytes);
      this.#meta.updatedAt = Date.now();
      await this.#store.writeMeta(this.#id, this.#meta);
    }
    this.#partBytes = 0;
  }

  /**
   * The model has every tensor: reads the rest of the file when the cache entry or the
   * integrity check needs it (and it is not large), else stops the download.
   */
  async drain() {
    const rest = this.total != null ? this.total - this.offset : Infinity;
    if ((this.#hasher || this.#writing) && (rest <= DRAIN_LIMIT || this.#expected)) {
      while (!(await this.read()).done);
      return;
    }
    this.#incomplete = true;
    if (this.#writing) {
      await this.#part?.abort();
      this.#part = null;
      this.#writing = false;
      await this.#store.remove(this.#id).catch(() => {});
    }
    this.cancel();
  }

  /** After the last byte: the hash against `integrity` and against the cached entry's. */
  async verify() {
    if (!this.#hasher || this.#incomplete) return;
    this.#digest = bytesToHex(this.#hasher.digest());
    this.#hasher.free?.();
    this.#hasher = null;
    if (this.cacheState === 'reading' && this.#digest !== this.#meta.sha256) {
      await this.#store.remove(this.#id);
      throw new RestartLoad(`the cached copy of ${this.label} is corrupt (SHA-256 ${this.#digest}, stored with ${this.#meta.sha256})`);
    }
    if (this.#expected && this.#digest !== bytesToHex(this.#expected)) {
      if (this.cachedBytes > 0) {
        // Part of it came from the cache: the stored part may be what is wrong.
        await this.#store.remove(this.#id);
        throw new RestartLoad(`the resumed download of ${this.label} does not match its integrity`);
      }
      const e = new IntegrityError(
        `the model from ${this.label} is not the file its integrity names: SHA-256 ` +
          `${this.#digest}, expected ${bytesToHex(this.#expected)}; nothing was kept`,
      );
      e.expected = `sha256-${btoa(String.fromCharCode(...this.#expected))}`;
      e.actual = `sha256-${btoa(String.fromCharCode(...this.#digest.match(/../g).map((h) => parseInt(h, 16))))}`;
      e.url = this.#target.url;
      throw e;
    }
  }

  /** The model was built: the entry, if one is being written, is complete. */
  async commit() {
    try {
      if (this.#writing && this.#digest) await this.#complete();
    } catch (e) {
      console.warn(`kindling: cannot finish the cache entry of ${this.label} (${e?.name}: ${e?.message}); it is removed`);
      await this.#store.remove(this.#id).catch(() => {});
    } finally {
      this.#close();
    }
  }

  async #complete() {
    await this.#commitPart();
    Object.assign(this.#meta, { size: this.offset, sha256: this.#digest, complete: true, updatedAt: Date.now() });
    await this.#store.writeMeta(this.#id, this.#meta);
    this.#writing = false;
  }

  /**
   * The load failed with `error`. An entry being written keeps what arrived unless the
   * error is about its bytes (invalid, integrity, quota, the file gone) or nothing is
   * stored; a complete read entry stays (RestartLoad has removed a corrupt one).
   */
  async fail(error) {
    this.cancel();
    await this.#pending?.catch(() => {});
    try {
      if (!this.#writing) return;
      const againstBytes = error instanceof InvalidModelError || error instanceof IntegrityError ||
        isQuota(error) || error instanceof RestartLoad || (error instanceof DownloadError && !error.transient) ||
        !(error instanceof Error);
      if (!againstBytes && this.#digest && this.total != null && this.offset === this.total) {
        // Every byte arrived and was hashed; the failure was the engine's (a device too small).
        await this.#complete();
        return;
      }
      await this.#commitPart().catch(() => {});
      if (againstBytes || storedBytes(this.#meta) === 0) await this.#store.remove(this.#id);
      else this.#note(`kept ${storedBytes(this.#meta)} bytes of ${this.label}; the next load resumes from there`);
    } catch (e) {
      console.warn(`kindling: cleaning up the cache entry of ${this.label} failed`, e);
    } finally {
      this.#writing = false;
      this.#close();
    }
  }

  /** Stops reading (the network request, the storage reads). */
  cancel(reason) {
    this.#controller.abort(reason);
    this.#reader?.cancel(reason).catch(() => {});
    this.#iterator.return().catch(() => {});
  }

  #close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#hasher?.free?.();
    this.#hasher = null;
    this.#release?.();
  }
}
