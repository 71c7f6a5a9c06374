// Types of `kindling/worker` (www/worker-model.js). WorkerModel is declared here, not in
// index.d.ts: only this entry exports it at run time (the main entry stays free of the
// worker, so a bundler that sees `import { Model } from 'kindling'` emits no worker chunk).

import type {
  ChatApi, ChatMessage, Completion, EmbeddingsApi, GenerateOptions, InspectOptions, ModelCache, ModelInfo, ModelInspection,
  ModelSource, Piece, WorkerLoadOptions,
} from './index.js';

export type {
  WorkerLoadOptions, InspectOptions, ModelInspection, FitLimits, LoadOptions, LoadProgress, ModelInfo, ModelSource,
  GenerateOptions, Piece, Completion, ChatMessage, ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ModelCache,
  CacheEntry, Backend, KvCacheType, FinishReason, JsonSchema, ResponseFormat, ChatCompletionMessageParam, ChatContentPartText, ChatToolCall,
  ChatToolCallDelta, ChatCompletionTool, ChatCompletionToolChoice, ChatCompletionMessage, ChatCompletionUsage, ChatFinishReason,
  ModelKind, EmbeddingsApi, EmbeddingRequest, EmbeddingRequestOptions, Embedding, EmbeddingResponse,
} from './index.js';
export {
  AbortError, DeviceLostError, InvalidModelError, InvalidRequestError, OutOfMemoryError, UnsupportedModelError, WebGPUUnavailableError,
  DownloadError, IntegrityError, QuotaExceededError, modelCache,
} from './index.js';

/**
 * `Model` with the engine in a module Web Worker (`import { WorkerModel } from 'kindling/worker'`).
 * The same calls, except that tokenize, detokenize and applyChatTemplate return promises.
 * Signals and breaking out of an iterator stop the work in the worker.
 */
export declare class WorkerModel {
  private constructor();
  static load(source: ModelSource, options?: WorkerLoadOptions): Promise<WorkerModel>;
  /** As Model.inspect, in a worker (a new one, ended afterwards, or `worker`, left running). */
  static inspect(source: string | URL, options?: InspectOptions & { worker?: Worker }): Promise<ModelInspection>;
  /** The persistent model cache of this origin (the worker shares it). */
  static readonly cache: ModelCache;
  readonly info: ModelInfo;
  tokenize(text: string, options?: { addSpecial?: boolean; parseSpecial?: boolean }): Promise<number[]>;
  detokenize(ids: ArrayLike<number>, options?: { renderSpecial?: boolean }): Promise<string>;
  applyChatTemplate(messages: ChatMessage[], options?: { addGenerationPrompt?: boolean }): Promise<string>;
  generate(prompt: string | ArrayLike<number>, options?: GenerateOptions): AsyncGenerator<Piece, void, undefined>;
  complete(prompt: string | ArrayLike<number>, options?: GenerateOptions): Promise<Completion>;
  readonly chat: ChatApi;
  /** As Model.embeddings; the vectors' buffers are moved from the worker. */
  readonly embeddings: EmbeddingsApi;
  /** Frees the model and terminates the worker. */
  dispose(): Promise<void>;
}

export default WorkerModel;
