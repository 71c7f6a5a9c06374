// Types of `kindling/worker` (www/worker-model.js); declared with the rest in index.d.ts.

export {
  WorkerModel, WorkerLoadOptions, AbortError, DeviceLostError, InvalidModelError, OutOfMemoryError,
  UnsupportedModelError, WebGPUUnavailableError, DownloadError, IntegrityError, QuotaExceededError, modelCache,
} from './index.js';
export { WorkerModel as default } from './index.js';
