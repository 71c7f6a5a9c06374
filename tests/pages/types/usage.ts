// A typed app using the package as its users do, by its package name (resolved through
// package.json "exports", as a bundler would): `tsc` fails when the .d.ts files and this
// usage disagree. Never run; only type-checked (tests/pages/types/check.mjs).

import Model, {
  AbortError, InvalidRequestError, DownloadError, IntegrityError, OutOfMemoryError, QuotaExceededError, initEngine, modelCache,
  type Capabilities, type JsonSchema, type ResponseFormat, type ChatCompletion, type ChatCompletionChunk, type LoadProgress, type ModelInfo,
  type EmbeddingResponse, type ModelKind,
} from 'kindling';
import { WorkerModel, type WorkerLoadOptions } from 'kindling/worker';
import DefaultWorkerModel from 'kindling/worker';

export async function app(out: { textContent: string | null }): Promise<void> {
  await initEngine();
  const caps: Capabilities = await Model.capabilities();
  const backend = caps.webgpu ? 'webgpu' : 'cpu';
  const controller = new AbortController();
  const onProgress = (p: LoadProgress): void => {
    const eta: number | null | undefined = p.etaSeconds;
    out.textContent = `${p.phase} ${p.loaded}/${p.total ?? '?'} ${p.source ?? ''} ${eta ?? ''}`;
  };

  const model = await Model.load('/model.gguf', { backend, onProgress, signal: controller.signal, cache: 'no-validate' });
  const info: ModelInfo = model.info;
  const reason: string | null = info.fallbackReason;
  for await (const { text, tokenId } of model.generate('Once upon a time', { maxTokens: 8, temperature: 0, stop: ['\n'] })) {
    out.textContent += text + (tokenId ?? '') + (reason ?? '');
  }
  const ids: number[] = model.tokenize('hi');
  const text: string = model.detokenize(ids);
  const done = await model.complete(text, { maxTokens: 4 });
  const rate: number = done.timings.decodeTokensPerSecond;
  const reply: ChatCompletion = await model.chat.completions.create({ messages: [{ role: 'user', content: 'Hi' }] });
  const stream = await model.chat.completions.create({ messages: [{ role: 'user', content: 'Hi' }], stream: true });
  for await (const chunk of stream) {
    const c: ChatCompletionChunk = chunk;
    out.textContent += c.choices[0].delta.content ?? '';
  }
  out.textContent += `${rate} ${reply.choices[0].message.content}`;
  // Structured output: a schema object or its JSON text, a regex, a Lark grammar; OpenAI's response_format.
  const schema: JsonSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
  for await (const { text } of model.generate('A person:', { jsonSchema: schema, maxTokens: 32 })) out.textContent += text;
  await model.complete('Time:', { regex: '[0-2][0-9]:[0-5][0-9]' });
  await model.complete('Sum:', { grammar: 'start: /[0-9]+/ "+" /[0-9]+/', jsonSchema: undefined });
  const format: ResponseFormat = { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } };
  const json: ChatCompletion = await model.chat.completions.create({ messages: [{ role: 'user', content: 'Hi' }], response_format: format });
  await model.chat.completions.create({ messages: [{ role: 'user', content: 'Hi' }], response_format: { type: 'json_object' } });
  try {
    await model.complete('x', { jsonSchema: '{"type": "object", "not": {}}' });
  } catch (e) {
    if (e instanceof InvalidRequestError) out.textContent += e.name + (json.choices[0].message.content ?? '');
  }
  await model.dispose();

  // Embeddings (an encoder): OpenAI's shape, each vector a Float32Array.
  const embedder = await Model.load('/nomic-embed.gguf');
  if (embedder.info.kind === 'encoder') {
    const list: EmbeddingResponse = await embedder.embeddings.create(
      { input: ['search_query: hi', 'search_document: hello'], truncate: true },
      { signal: controller.signal, onProgress: ({ done, total }) => (out.textContent = `${done}/${total}`) },
    );
    const first: Float32Array = list.data[0].embedding;
    out.textContent += `${first.length} ${list.data[1].index} ${list.usage.prompt_tokens} ${list.model}`;
  }
  const kind: ModelKind = embedder.info.kind;
  out.textContent += kind;
  await embedder.dispose();

  const options: WorkerLoadOptions = { backend: 'auto', transfer: false, onProgress };
  const inWorker: WorkerModel = await WorkerModel.load(new URL('/model.gguf', 'https://example.com/'), options);
  const workerIds: number[] = await inWorker.tokenize('hi');
  const vectors: Float32Array[] = (await inWorker.embeddings.create({ input: 'hi' })).data.map((d) => d.embedding);
  out.textContent += String(vectors.length);
  const chunks = await inWorker.chat.completions.create({ messages: [{ role: 'user', content: 'Hi' }], stream: true });
  for await (const chunk of chunks) out.textContent += chunk.choices[0].delta.content ?? '';
  out.textContent += String(workerIds.length) + inWorker.info.backend;
  await inWorker.dispose();
  const same: typeof WorkerModel = DefaultWorkerModel;
  const cached: boolean = await same.cache.has('/model.gguf');
  const usage = await modelCache.usage();
  out.textContent += `${cached} ${usage.bytes}`;

  try {
    await Model.load(new Uint8Array(16));
  } catch (e) {
    if (e instanceof QuotaExceededError) out.textContent = `${e.needed} ${e.available}`;
    else if (e instanceof IntegrityError) out.textContent = e.expected + e.actual;
    else if (e instanceof DownloadError) out.textContent = String(e.status);
    else if (e instanceof OutOfMemoryError || e instanceof AbortError) out.textContent = e.name;
  }
}
