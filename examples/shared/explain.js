// What the example pages (chat, search) tell a person about failures and about where the model runs.
// The package's errors (www/errors.js) and info.fallbackReason are written for
// developers (class names, "bad magic 0x…", "pass backend: 'webgpu'"): the page says
// what happened in plain words and keeps that text as the technical detail.

import { bytes } from './format.js';

/** Plain words for each of the package's error classes, by `error.name`. */
const PLAIN = {
  InvalidModelError: () => 'This file is not a GGUF model, or it is damaged.',
  UnsupportedModelError: () => 'This model is not supported by Kindling yet.',
  DownloadError: (e) => (e.status ? `Could not download the model (HTTP ${e.status}).` : 'Could not download the model: the network failed.'),
  IntegrityError: () => 'The downloaded file is not the one expected (its checksum differs), so it was not kept.',
  QuotaExceededError: (e) => `This browser does not have enough storage for the model` +
    (e.needed ? ` (it needs ${bytes(e.needed)}${e.available != null ? `, ${bytes(e.available)} free` : ''}).` : '.'),
  OutOfMemoryError: () => 'The model is too large for this device’s memory. Try a smaller model.',
  DeviceLostError: () => 'The GPU stopped responding. Load the model again.',
  WebGPUUnavailableError: () => 'WebGPU is not available in this browser. Choose “auto” or “cpu” as the backend in Settings.',
  AbortError: () => 'Stopped.',
  InvalidRequestError: (e) => (/chat template does not render tools/.test(e.message)
    ? 'This model was not taught to call tools. Load a Qwen2.5 Coder model for the calculator.'
    : 'The model cannot take this request as asked (the technical details say why).'),
};

/** `{ text, detail }`: a sentence for a person, and the error as the package reported it. */
export function explainError(e) {
  const plain = PLAIN[e?.name]?.(e) ?? (e instanceof TypeError && /URL/i.test(e.message)
    ? 'That is not a model address this page can open.'
    : 'Something went wrong.');
  const fields = ['status', 'url'].filter((k) => e?.[k] != null).map((k) => `${k}: ${e[k]}`);
  return { text: plain, detail: [`${e?.name ?? 'Error'}: ${e?.message ?? e}`, ...fields].join('\n') };
}

/** `{ text, detail }`: which processor runs the model and, when 'auto' passed WebGPU by, why. */
export function explainBackend(info) {
  if (info.backend === 'webgpu') {
    const gpu = info.adapter?.description || info.adapter?.vendor || 'the GPU';
    const software = info.adapter?.isFallbackAdapter ? ', a software renderer' : '';
    return { text: `Running on the GPU through WebGPU (${gpu}${software}).`, detail: null };
  }
  const reason = info.fallbackReason;
  if (!reason) return { text: 'Running on the CPU (WebAssembly), as chosen in Settings.', detail: null };
  const text = info.adapter?.isFallbackAdapter
    ? 'Running on the CPU: this browser’s WebGPU is a software renderer, slower than the CPU.'
    : info.adapter
      ? 'Running on the CPU: WebGPU could not start in this browser.'
      : 'Running on the CPU: this browser has no WebGPU.';
  return { text, detail: `backend 'auto' chose the CPU: ${reason}` };
}
