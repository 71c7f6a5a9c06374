// The error classes of the package. Every failure of the engine reaches JS as an Error
// whose `name` is one of these; `toError` turns it into an instance of the class, so
// both `e.name === 'InvalidModelError'` and `e instanceof InvalidModelError` work.

class KindlingError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = new.target.errorName;
  }
}

export class WebGPUUnavailableError extends KindlingError { static errorName = 'WebGPUUnavailableError'; }
export class InvalidModelError extends KindlingError { static errorName = 'InvalidModelError'; }
export class UnsupportedModelError extends KindlingError { static errorName = 'UnsupportedModelError'; }
export class OutOfMemoryError extends KindlingError { static errorName = 'OutOfMemoryError'; }
export class DeviceLostError extends KindlingError { static errorName = 'DeviceLostError'; }
export class AbortError extends KindlingError { static errorName = 'AbortError'; }
/** The request cannot be done as asked: an invalid or unsupported JSON schema, regex or grammar, a bad `response_format`. */
export class InvalidRequestError extends KindlingError { static errorName = 'InvalidRequestError'; }
/** The download failed: an HTTP error (`status`), or the network, after the retries (`url`). */
export class DownloadError extends KindlingError { static errorName = 'DownloadError'; }
/** The file's SHA-256 is not the `integrity` asked for (`expected`, `actual`); nothing was kept. */
export class IntegrityError extends KindlingError { static errorName = 'IntegrityError'; }
/** The origin's storage cannot hold the model (`needed`, `available` bytes); nothing was kept. */
export class QuotaExceededError extends KindlingError { static errorName = 'QuotaExceededError'; }

const CLASSES = {
  WebGPUUnavailableError, InvalidModelError, UnsupportedModelError, OutOfMemoryError, DeviceLostError, AbortError,
  InvalidRequestError, DownloadError, IntegrityError, QuotaExceededError,
};

/** The fields an error of ours carries besides name and message (they cross from the worker). */
export const ERROR_DETAILS = ['url', 'status', 'expected', 'actual', 'needed', 'available'];

/** The package's error for anything thrown by the engine, fetch or the browser. */
export function toError(e) {
  if (e instanceof KindlingError) return e;
  if (e && typeof e === 'object') {
    const Class = CLASSES[e.name];
    if (Class) return new Class(e.message, { cause: e });
    // A DOMException from an AbortSignal or a cancelled fetch.
    if (e.name === 'TimeoutError') return new AbortError(e.message || 'timed out', { cause: e });
    // wasm traps (a panic we missed, memory exhausted) are not ours to rename, but say so.
    if (e instanceof WebAssembly.RuntimeError) {
      return new Error(`the WebAssembly engine crashed (${e.message}); reload the model`, { cause: e });
    }
    if (e instanceof Error) return e;
  }
  return new Error(String(e));
}

/** The message of the reason `abort()` gives without one ("signal is aborted without reason" in Chrome). */
const DEFAULT_ABORT_MESSAGE = (() => {
  const controller = new AbortController();
  controller.abort();
  return controller.signal.reason?.message;
})();

/** An AbortError for `signal`, keeping its reason as the cause (and in the message, when one was given). */
export function abortError(signal, what = 'the operation') {
  const reason = signal?.reason;
  const given = reason && typeof reason === 'object' && reason.message && reason.message !== DEFAULT_ABORT_MESSAGE;
  const why = given ? `: ${reason.message}` : '';
  return new AbortError(`${what} was aborted${why}`, { cause: reason });
}

export function throwIfAborted(signal, what) {
  if (signal?.aborted) throw abortError(signal, what);
}

/**
 * `promise`, or an AbortError as soon as `signal` aborts (the promise keeps running;
 * callers clean up after it).
 */
export function raceAbort(promise, signal, what) {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal, what));
  let onAbort;
  const aborted = new Promise((_, reject) => {
    onAbort = () => reject(abortError(signal, what));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

/** A request with `options.signal` (the second argument of OpenAI's `create`) in it. */
export function withSignal(request = {}, options = {}) {
  return options?.signal ? { ...request, signal: options.signal } : request;
}
