// Which WebAssembly build runs a CPU model, and on how many threads.
//
// The threaded build (www/wasm-threads/, scripts/build_threads.sh) splits the CPU kernels
// over a rayon pool of Web Workers that share the engine's memory. It runs only where
//  - the model is loaded in a worker (kindling/worker): the thread that asks for work waits
//    on the pool with Atomics.wait, which a page's main thread may not call;
//  - the page is cross-origin isolated (COOP and COEP headers), without which browsers
//    offer no SharedArrayBuffer;
//  - more than one thread is wanted.
// Everywhere else, and if the pool cannot start, the plain build runs the model on one
// thread. Either way `model.info.threads` is `{ count, reason }`: how many and why.

import { InvalidRequestError } from './errors.js';

/** The default pool leaves one core to the page and the browser, and stops at this many. */
const MAX_DEFAULT_THREADS = 8;

function cores() {
  return globalThis.navigator?.hardwareConcurrency ?? 1;
}

/** The `threads` load option's default: hardwareConcurrency less one, at least 1, at most 8. */
export function defaultThreads() {
  return Math.max(1, Math.min(MAX_DEFAULT_THREADS, cores() - 1));
}

/** `options.threads`, checked; undefined when not given. */
export function threadsOption(options) {
  const t = options?.threads;
  if (t === undefined || t === null) return undefined;
  if (!Number.isInteger(t) || t < 1) {
    throw new InvalidRequestError(`threads must be a whole number of at least 1, got ${JSON.stringify(t)}`);
  }
  return t;
}

function inWorker() {
  return typeof globalThis.WorkerGlobalScope === 'function' && globalThis instanceof globalThis.WorkerGlobalScope;
}

/** Why a CPU model here gets one thread, or null when the threaded build may run with `want`. */
export function whyOneThread(want, asked) {
  if (want <= 1) {
    return asked
      ? 'one thread was asked for (threads: 1)'
      : `this device reports ${cores()} core${cores() === 1 ? '' : 's'}; the default leaves one to the page (pass threads to use more)`;
  }
  if (!inWorker()) {
    return "the model runs on the page's main thread, which may not wait for other threads; load it in a worker (import { WorkerModel } from 'kindling/worker') to use more";
  }
  if (!globalThis.crossOriginIsolated || typeof globalThis.SharedArrayBuffer !== 'function') {
    return 'the page is not cross-origin isolated, so the browser offers no shared memory (serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)';
  }
  if (typeof globalThis.Worker !== 'function') return 'this browser cannot start workers from a worker';
  return null;
}

/** Why a CPU load with these options gets one thread here, or null when it may have more. */
export function oneThreadReason(options) {
  const asked = threadsOption(options);
  return whyOneThread(asked ?? defaultThreads(), asked !== undefined);
}

/** The threaded engine with its pool, started once per JS realm (a pool cannot be resized). */
let threaded = null;

function startThreaded(size) {
  threaded ??= (async () => {
    const engine = await import('./wasm-threads/kindling_web.js');
    await engine.default();
    await engine.initThreadPool(size);
    return { engine, size };
  })();
  return threaded;
}

/**
 * The engine a CPU load runs on here: `{ engine, threads: { count, reason } }`, the
 * threaded one when it may run (its pool started on first use), else `plain`.
 */
export async function cpuEngine(plain, options) {
  const why = oneThreadReason(options);
  if (why) return { engine: plain, threads: { count: 1, reason: why } };
  const want = threadsOption(options) ?? defaultThreads();
  let pool;
  try {
    pool = await startThreaded(want);
  } catch (e) {
    console.warn('kindling: the threaded build did not start; the CPU runs on one thread', e);
    return { engine: plain, threads: { count: 1, reason: `the threaded build did not start (${e?.message ?? e})` } };
  }
  const count = Math.min(want, pool.size);
  pool.engine.setCpuThreads(count);
  const capped = count < want ? ` (the pool started with ${pool.size} for an earlier load)` : '';
  return {
    engine: pool.engine,
    threads: { count, reason: `the threaded build on ${count} threads: the model runs in a worker of a cross-origin-isolated page${capped}` },
  };
}

/** Bytes of the threaded engine's (shared) memory; 0 before it has started. */
export async function threadedMemoryBytes() {
  const pool = await threaded?.catch(() => null);
  return pool ? pool.engine.memoryBytes() : 0;
}

/** `info.threads` of a model on WebGPU. */
export const GPU_THREADS = Object.freeze({ count: 1, reason: 'the model runs on WebGPU' });
