// Types of the `kindling` package (www/index.js).

export type Backend = 'auto' | 'webgpu' | 'cpu';

export interface AdapterInfo {
  vendor: string;
  architecture: string;
  description: string;
  isFallbackAdapter: boolean;
}

export interface Capabilities {
  /** An adapter was returned by navigator.gpu.requestAdapter(). */
  webgpu: boolean;
  adapter: AdapterInfo | null;
  /** WebGPU feature names, e.g. "shader-f16". */
  features: string[];
  /** WebGPU limits by their WebGPU names, e.g. maxStorageBufferBindingSize. */
  limits: Record<string, number>;
  /** The CPU backend was built with WebAssembly SIMD128 kernels. */
  simd128: boolean;
  /** Why WebGPU is unavailable (null when it is available). */
  reason: string | null;
}

/**
 * A URL (string or URL), a hub file `hf:OWNER/REPO/FILE.gguf` or `hf:OWNER/REPO@REVISION/FILE.gguf`,
 * a Blob/File, bytes, or a stream. The first shard's URL of a model split by gguf-split
 * (`…-00001-of-00003.gguf`) loads every shard.
 */
export type ModelSource = string | URL | Blob | ArrayBuffer | Uint8Array | ReadableStream<Uint8Array>;

export interface LoadProgress {
  phase: 'download' | 'upload' | 'prepare';
  /** Bytes (download, upload) or steps (prepare) done: never decreases within a phase. */
  loaded: number;
  /** The total when known (from Content-Length, the source's size or the GGUF header). */
  total: number | null;
  /** Download only: bytes per second over the last few seconds (null at first). */
  bytesPerSecond?: number | null;
  /** Download only: seconds left at that rate, when the total is known. */
  etaSeconds?: number | null;
  /** Download only: where the latest bytes came from. */
  source?: 'cache' | 'network' | 'local';
  /** Download only: bytes read from the persistent cache and from the network so far. */
  cachedBytes?: number;
  networkBytes?: number;
}

/**
 * The persistent model cache: 'default' keeps what a URL load downloads in the origin's
 * storage and reads it from there next time after a HEAD revalidation (ETag, size);
 * 'no-validate' skips the revalidation; 'off' neither reads nor writes it.
 */
export type CacheMode = 'default' | 'no-validate' | 'off';

/** How a session's keys and values are stored (`LoadOptions.kvCacheType`). */
export type KvCacheType = 'f32' | 'f16';

export interface LoadOptions {
  /** Default 'auto': WebGPU on a hardware adapter, else the CPU (see info.fallbackReason). */
  backend?: Backend;
  onProgress?: (progress: LoadProgress) => void;
  /** Stops the download and frees what was allocated; the load rejects with AbortError. */
  signal?: AbortSignal;
  /** KV cache positions (default: the model's, capped to 4096 on WebGPU and 2048 on the CPU). */
  contextLength?: number;
  /**
   * How a WebGPU session keeps its KV cache (default 'f32'): 'f16' takes half the memory
   * and half the bytes attention reads, with keys and values rounded to f16 as llama.cpp
   * keeps them. The CPU backend's cache is f32 either way (`info.kvCacheType` says).
   */
  kvCacheType?: KvCacheType;
  /**
   * CPU models: threads for the kernels (default `navigator.hardwareConcurrency` less one,
   * at most 8). More than one runs the threaded build, which needs a worker
   * (`kindling/worker`) on a cross-origin-isolated page; elsewhere one thread, and
   * `info.threads.reason` says why.
   */
  threads?: number;
  /** URL sources: the persistent cache (default 'default'; `true`/`false` mean 'default'/'off'). */
  cache?: CacheMode | boolean;
  /**
   * URL sources: the file's SHA-256 as in Subresource Integrity (`'sha256-<base64>'`),
   * checked as it streams; a mismatch rejects with IntegrityError and keeps nothing.
   * A split model takes one per shard, in order.
   */
  integrity?: string | string[];
  /** URL sources: retries of a transient failure (network error, 5xx, 408, 429), each resuming with Range. Default 3. */
  retries?: number;
  /** The first retry's delay; each next one doubles it. Default 500 ms. */
  retryDelayMs?: number;
  /** The hub `hf:` URLs resolve against. Default 'https://huggingface.co'. */
  hubUrl?: string;
  /** The cache key instead of the URL (for URLs signed afresh on every request). */
  cacheKey?: string;
  /** Ask the browser to keep this origin's storage under pressure (navigator.storage.persist()) before storing. */
  persist?: boolean;
  /**
   * Caps on what the backend allows, applied over the adapter's own limits and wasm32's
   * 4 GiB in the fits-check a load makes when the header arrives (before any weight is
   * allocated) and in `Model.inspect`: for tests, and for apps that want headroom. A
   * model that does not fit is refused with OutOfMemoryError saying what it needs.
   */
  limits?: FitLimits;
}

export interface FitLimits {
  maxBufferSize?: number;
  maxStorageBufferBindingSize?: number;
  /** WebAssembly memory the CPU backend may use (at most 4 GiB). */
  wasmMemoryBytes?: number;
}

export interface InspectOptions {
  /** The backend to check for (default 'auto': WebGPU on a hardware adapter when the model fits it, else the CPU). */
  backend?: Backend;
  /** KV cache positions to size (default: what a load would use). */
  contextLength?: number;
  /** The KV cache's type to size, as `LoadOptions.kvCacheType` (WebGPU only). */
  kvCacheType?: KvCacheType;
  limits?: FitLimits;
  signal?: AbortSignal;
  hubUrl?: string;
  cacheKey?: string;
  /** 'off': do not read the header from the persistent cache. */
  cache?: CacheMode | boolean;
}

/** What `Model.inspect` reads from a model's header; byte counts are numbers. */
export interface ModelInspection {
  url: string;
  architecture: string;
  /** 'encoder': an embedding model (its memory includes the KV cache and activations of an input as long as its context). */
  kind: ModelKind;
  name: string;
  parameters: number;
  tensorCount: number;
  /** `general.file_type`'s name (e.g. 'Q4_K_M'), else the dominant weight type. */
  quantization: string;
  fileType: number | null;
  /** Tensor data bytes per ggml type, e.g. `{ Q4_K: 756781056, Q6_K: 354009600, F32: 579584 }`. */
  bytesByType: Record<string, number>;
  fileSize: number;
  /** Where the tensor data starts (the header's size, padded). */
  headerBytes: number;
  dataBytes: number;
  /** Files the model is split in (sizes and memory then cover the first). */
  shards: number;
  trainedContextLength: number;
  vocabSize: number;
  blockCount: number;
  embeddingLength: number;
  /** The backend checked (for 'auto': the one a load would use). */
  backend: 'webgpu' | 'cpu';
  /** The KV cache positions sized. */
  contextLength: number;
  /** The KV cache's type sized (always 'f32' for the CPU backend). */
  kvCacheType: KvCacheType;
  memory: { weights: number; kvCache: number; activations: number; other: number; total: number };
  allowed: { maxBufferSize: number | null; maxStorageBufferBindingSize: number | null; wasmMemoryBytes: number };
  /** The largest weight as stored, and the buffers it is split into (by rows, each within the binding limit). */
  largestWeight: { name: string; bytes: number; rowBytes: number; buffers: number } | null;
  largestBuffer: { name: string; bytes: number };
  fits: boolean;
  /** Why it does not fit (empty when it does). */
  reasons: string[];
  checked: { webgpu?: { fits: boolean; reasons: string[] }; cpu?: { fits: boolean; reasons: string[] } };
  /** Where the header came from, and its bytes read. */
  source: 'cache' | 'network';
  bytesRead: number;
  requests: number;
}

export interface CacheEntry {
  /** The URL, or for hf: URLs `hf:OWNER/REPO@REVISION/FILE`. */
  key: string;
  url: string;
  /** Bytes stored. */
  size: number;
  /** The file's size, when known. */
  total: number | null;
  /** Whether the whole file is stored and its SHA-256 recorded (a partial entry is resumed by the next load). */
  complete: boolean;
  storedAt: Date;
  etag: string | null;
  /** `sha256-<base64>` of a complete entry. */
  integrity: string | null;
  storage: 'opfs' | 'cache-api';
}

/** `Model.cache` and `WorkerModel.cache`: the same origin storage. */
export interface ModelCache {
  /** Entries, newest first. */
  list(): Promise<CacheEntry[]>;
  /** Whether a complete entry exists for the source (options: hubUrl, cacheKey). */
  has(source: string | URL, options?: Pick<LoadOptions, 'hubUrl' | 'cacheKey'>): Promise<boolean>;
  /** Removes the source's entry, complete or partial; whether there was one. */
  delete(source: string | URL, options?: Pick<LoadOptions, 'hubUrl' | 'cacheKey'>): Promise<boolean>;
  /** Removes every entry; how many there were. */
  clear(): Promise<number>;
  /** This cache's bytes and entries, and the origin's usage and quota (navigator.storage.estimate()). */
  usage(): Promise<{ bytes: number; entries: number; usage: number | null; quota: number | null; persisted: boolean | null; storage: 'opfs' | 'cache-api' | null }>;
  /** navigator.storage.persist(): whether the browser agreed. */
  persist(): Promise<boolean>;
}

export declare const modelCache: ModelCache;

/** 'decoder': generates text; 'encoder': makes embeddings (`model.embeddings.create`). */
export type ModelKind = 'decoder' | 'encoder';

export interface ModelInfo {
  architecture: string;
  /** Which API the model answers: generate/complete/chat (decoder) or embeddings (encoder). */
  kind: ModelKind;
  name: string;
  parameters: number;
  quantization: string;
  /** Positions this model's session holds (an encoder: the longest input it embeds). */
  contextLength: number;
  trainedContextLength: number;
  dataBytes: number;
  vocabSize: number;
  bosTokenId: number | null;
  eosTokenId: number | null;
  hasChatTemplate: boolean;
  backend: 'webgpu' | 'cpu';
  /** How the session's KV cache is kept ('f32' on the CPU backend). */
  kvCacheType: KvCacheType;
  adapter: AdapterInfo | null;
  /** Why 'auto' did not choose WebGPU (null when it did, or when a backend was named). */
  fallbackReason: string | null;
  /** The CPU kernels' threads (1 on WebGPU) and why that many (the threaded build or not). */
  threads: { count: number; reason: string };
}

export interface GenerateOptions {
  /** Default 256. */
  maxTokens?: number;
  /** 0 is greedy. Default 0.8. */
  temperature?: number;
  /** Default 40 (0: off). */
  topK?: number;
  /** Default 0.95. */
  topP?: number;
  /** Default 0.05. */
  minP?: number;
  /** Default 1 (off). */
  repetitionPenalty?: number;
  /** Same seed, same tokens. Default: random. */
  seed?: number;
  /** Generation ends before the first of these strings. */
  stop?: string | string[];
  /** Keep going through end-of-generation tokens until maxTokens (for benchmarks). Default false. */
  ignoreEos?: boolean;
  /**
   * The output is JSON valid under this JSON Schema (an object or its JSON text). At most one of
   * jsonSchema, regex and grammar; a bad or unsupported one rejects with InvalidRequestError.
   */
  jsonSchema?: JsonSchema | string;
  /** The whole output matches this regex (Rust `regex` syntax). */
  regex?: string;
  /** The output parses under this Lark grammar (llguidance's dialect; rule `start`). */
  grammar?: string;
  /**
   * Ends the generation: the iterator rejects with AbortError at once, and the model is
   * free for the next call after the step in progress (about one token's time).
   */
  signal?: AbortSignal;
}

export interface Piece {
  text: string;
  /** null for text released when generation ends (held back until it could not start a stop string). */
  tokenId: number | null;
}

/** Why a generation ended; 'tool_calls' only where tool calls were asked for (the chat API). */
export type FinishReason = 'eos' | 'stop' | 'length' | 'context_full' | 'abort' | 'tool_calls';

export interface Completion {
  text: string;
  tokenIds: number[];
  promptTokenIds: number[];
  finishReason: FinishReason;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  timings: {
    prefillMs: number;
    decodeMs: number;
    prefillTokensPerSecond: number;
    decodeTokensPerSecond: number;
    /** Host time spent in a constraint (its masks, taking its tokens; 0 without one); on WebGPU the masks overlap the GPU's work. */
    constraintMs: number;
  };
}

/** A JSON Schema (draft 2020-12 keywords; an unsupported one is named in an InvalidRequestError). */
export type JsonSchema = { [keyword: string]: unknown } | boolean;

/**
 * OpenAI's `response_format`: free text, any JSON object, or JSON under a schema (a schema-less
 * `json_schema` means any JSON object; the engine also reads `schema` given as its JSON text).
 */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: { [keyword: string]: unknown }; strict?: boolean | null } };

/** `model.applyChatTemplate`'s messages: any role the template knows, text content. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | string;
  content: string;
}

/** A text part of a message's content (the only kind read: parts are joined into one string). */
export interface ChatContentPartText {
  type: 'text';
  text: string;
}

/** A call the model made, as the reply gives it and as it goes back in an assistant message. */
export interface ChatToolCall {
  /** Unique within its completion; a `role: 'tool'` message answers it by this id. */
  id: string;
  type: 'function';
  /** `arguments`: the call's JSON text (valid under the tool's `parameters`). */
  function: { name: string; arguments: string };
}

/**
 * A message of a chat request, as OpenAI's (`developer`, `function`, non-text parts and
 * custom tool calls are not taken). Each goes through the chat template as given, `name` too.
 */
export type ChatCompletionMessageParam =
  | { role: 'system'; content: string | ChatContentPartText[]; name?: string }
  | { role: 'user'; content: string | ChatContentPartText[]; name?: string }
  /** A reply earlier in the conversation: text, or the calls it made (content then null). */
  | { role: 'assistant'; content?: string | ChatContentPartText[] | null; tool_calls?: ChatToolCall[]; name?: string }
  /** A tool's result, answering the call `tool_call_id`. */
  | { role: 'tool'; content: string | ChatContentPartText[]; tool_call_id: string };

/** A function the model may call (OpenAI's function tool; custom tools are not taken). */
export interface ChatCompletionTool {
  type: 'function';
  function: {
    /** 1 to 64 letters, digits, `_` or `-`; unique within `tools`. */
    name: string;
    description?: string;
    /** A JSON Schema the arguments are constrained to (default: any object). */
    parameters?: { [keyword: string]: unknown };
    strict?: boolean | null;
  };
}

/**
 * Whether the model may call: 'auto' (its choice; the default with tools), 'none' (tools not
 * shown), 'required' (at least one call), or one named function.
 */
export type ChatCompletionToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/** OpenAI's chat request as Kindling reads it (null means not given); other OpenAI fields are ignored. */
export interface ChatCompletionRequest {
  messages: ChatCompletionMessageParam[];
  /** Ignored: the loaded model answers (accepted so OpenAI requests pass as they are). */
  model?: string;
  /** Chunks (an async iterable) instead of one completion. */
  stream?: boolean | null;
  /** Functions the model may call; the model's chat template must render `tools` (or pass `chat_template`). */
  tools?: ChatCompletionTool[];
  tool_choice?: ChatCompletionToolChoice;
  /** Default true: several calls in one reply. */
  parallel_tool_calls?: boolean;
  /** Tokens to generate at most (`max_completion_tokens` wins over `max_tokens`). */
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  /** Kindling's sampling settings beyond OpenAI's (GenerateOptions has their defaults). */
  top_k?: number | null;
  min_p?: number | null;
  repetition_penalty?: number | null;
  seed?: number | null;
  stop?: string | string[] | null;
  /** The reply is JSON: any object (`json_object`) or valid under a schema (`json_schema`). Not with tools (unless tool_choice 'none'). */
  response_format?: ResponseFormat;
  /** Kindling's: a Jinja chat template to render with instead of the model's. */
  chat_template?: string | null;
  /** Ends the generation: the call (or the stream) rejects with AbortError. */
  signal?: AbortSignal;
}

export interface ChatCompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * Why a reply ended: 'stop' (by itself or at a stop string), 'length' (max_tokens or the
 * context), 'tool_calls' (it called tools). An abort rejects with AbortError instead.
 */
export type ChatFinishReason = 'stop' | 'length' | 'tool_calls';

/** The reply: text, or tool calls (content then null unless the model also wrote text). */
export interface ChatCompletionMessage {
  role: 'assistant';
  content: string | null;
  /** Always null (as OpenAI's when nothing was refused). */
  refusal: null;
  tool_calls?: ChatToolCall[];
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: number; message: ChatCompletionMessage; finish_reason: ChatFinishReason; logprobs: null }[];
  usage: ChatCompletionUsage;
}

/** A call in a chunk: it comes whole, in one chunk (`index`: its place among the reply's calls). */
export interface ChatToolCallDelta extends ChatToolCall {
  index: number;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  /** The first chunk has `role`, then each has text (`content`) or calls; the last has finish_reason. */
  choices: { index: number; delta: { role?: 'assistant'; content?: string; tool_calls?: ChatToolCallDelta[] }; finish_reason: ChatFinishReason | null }[];
  /** On the last chunk only. */
  usage?: ChatCompletionUsage;
}

export declare class Model {
  private constructor();
  static capabilities(): Promise<Capabilities>;
  /** Bytes of WebAssembly memory the engine holds (it only grows: after a load, the peak). */
  static memoryBytes(): Promise<number>;
  static load(source: ModelSource, options?: LoadOptions): Promise<Model>;
  /** What a model at a URL is and whether it fits, from its header alone (Range requests, or the cache). */
  static inspect(source: string | URL, options?: InspectOptions): Promise<ModelInspection>;
  /** The persistent model cache of this origin. */
  static readonly cache: ModelCache;
  readonly info: ModelInfo;
  tokenize(text: string, options?: { addSpecial?: boolean; parseSpecial?: boolean }): number[];
  detokenize(ids: ArrayLike<number>, options?: { renderSpecial?: boolean }): string;
  applyChatTemplate(messages: ChatMessage[], options?: { addGenerationPrompt?: boolean }): string;
  generate(prompt: string | ArrayLike<number>, options?: GenerateOptions): AsyncGenerator<Piece, void, undefined>;
  complete(prompt: string | ArrayLike<number>, options?: GenerateOptions): Promise<Completion>;
  readonly chat: ChatApi;
  /** OpenAI-shaped embeddings, for an embedding model (`info.kind === 'encoder'`). */
  readonly embeddings: EmbeddingsApi;
  dispose(): Promise<void>;
}

/** OpenAI's embeddings request; `dimensions` and an `encoding_format` other than 'float' are refused. */
export interface EmbeddingRequest {
  input: string | string[];
  /** Cut an input longer than the model's context to it (keeping its closing [SEP]) instead of refusing it. */
  truncate?: boolean;
  model?: string;
  encoding_format?: 'float';
  user?: string;
  signal?: AbortSignal;
}

export interface EmbeddingRequestOptions {
  /**
   * Heard between forward passes (an AbortError); a pass already running finishes first.
   * Inputs share a pass as far as the model's context holds them.
   */
  signal?: AbortSignal;
  /** Called after each forward pass: `done` of `total` inputs embedded. */
  onProgress?: (progress: { done: number; total: number }) => void;
}

export interface Embedding {
  object: 'embedding';
  /** L2-normalised, pooled as the model says. */
  embedding: Float32Array;
  index: number;
}

export interface EmbeddingResponse {
  object: 'list';
  data: Embedding[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** `model.embeddings`: OpenAI's shape, the inputs embedded one after another. */
export interface EmbeddingsApi {
  create(request: EmbeddingRequest, options?: EmbeddingRequestOptions): Promise<EmbeddingResponse>;
}

/** `create`'s second argument, as OpenAI's SDK takes it (`signal` in the request works too). */
export interface ChatRequestOptions {
  signal?: AbortSignal;
}

/** `model.chat`: OpenAI-shaped chat completions rendered with the model's own template. */
export interface ChatApi {
  completions: {
    create(request: ChatCompletionRequest & { stream?: false | null }, options?: ChatRequestOptions): Promise<ChatCompletion>;
    create(request: ChatCompletionRequest & { stream: true }, options?: ChatRequestOptions): Promise<AsyncIterable<ChatCompletionChunk>>;
    create(request: ChatCompletionRequest, options?: ChatRequestOptions): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>>;
  };
}

export interface WorkerLoadOptions extends LoadOptions {
  /** A Worker already running the package's `worker.js` (e.g. made by a bundler); `dispose()` terminates it. */
  worker?: Worker;
  /** Move an ArrayBuffer / whole-buffer Uint8Array source to the worker instead of copying it (detaches it here). Default true. */
  transfer?: boolean;
}

/** Loads the WebAssembly engine (done by every entry point; call it to pass another .wasm location). */
export declare function initEngine(moduleOrPath?: string | URL | Response | WebAssembly.Module): Promise<unknown>;

export declare class WebGPUUnavailableError extends Error { name: 'WebGPUUnavailableError'; }
export declare class InvalidModelError extends Error { name: 'InvalidModelError'; }
export declare class UnsupportedModelError extends Error { name: 'UnsupportedModelError'; }
export declare class OutOfMemoryError extends Error { name: 'OutOfMemoryError'; }
export declare class DeviceLostError extends Error { name: 'DeviceLostError'; }
export declare class AbortError extends Error { name: 'AbortError'; }
/**
 * The request cannot be done as asked: an invalid or unsupported JSON schema, regex or grammar, a bad
 * `response_format`; embeddings of a generative model, text from an embedding model, an input too long.
 */
export declare class InvalidRequestError extends Error { name: 'InvalidRequestError'; }
/** The download failed: an HTTP error (`status`), or the network after the retries. */
export declare class DownloadError extends Error { name: 'DownloadError'; url?: string; status?: number; }
/** The file's SHA-256 is not the `integrity` asked for; nothing was kept. */
export declare class IntegrityError extends Error { name: 'IntegrityError'; url?: string; expected: string; actual: string; }
/** The origin's storage cannot hold the model: bytes `needed` and `available` (null when unknown); nothing was kept. */
export declare class QuotaExceededError extends Error { name: 'QuotaExceededError'; needed: number | null; available: number | null; }

export default Model;
