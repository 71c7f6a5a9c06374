// Kindling's side of the benchmark: load a model from its URL on one backend, then time
// greedy completions of the shared prompts through the public API (www/index.js),
// imported as a plain ES module from the static server: no bundler.

import { Model } from '/www/index.js';
import { WorkerModel } from '/www/worker-model.js';
import { commonPrefix } from './prompt.js';

/** `Model.capabilities()`, and whether its adapter is a CPU emulation (SwiftShader). */
export async function webgpuAdapter() {
  const caps = await Model.capabilities();
  const a = caps.adapter;
  const words = a ? `${a.vendor} ${a.architecture} ${a.description}` : '';
  const software = !!a && (a.isFallbackAdapter === true || /swiftshader|llvmpipe|lavapipe|software/i.test(words));
  return { caps, software, label: a ? words.trim() || '(unnamed adapter)' : null };
}

/** The model's tokenizer as `text → ids`, special tokens (BOS) added as the model asks. */
const tokenizerOf = (model) => (text) => model.tokenize(text, { addSpecial: true });

/** `promptsFor(tokenize)` with this model's tokenizer, for when no Kindling row runs. */
export async function promptsWithTokenizer(url, promptsFor) {
  const model = await Model.load(url, { backend: 'cpu' });
  try {
    return promptsFor(tokenizerOf(model));
  } finally {
    await model.dispose();
  }
}

/**
 * Loads `url` on `backend` and runs one completion per prompt (the first is the
 * warm-up); `promptsFor(tokenize)` makes the prompts once the model is loaded. Timings
 * are the engine's own, taken in JS: prefill = call → first token, decode = first token
 * → last over (tokens − 1). Prefill counts only the tokens evaluated: the engine reuses
 * the prefix a prompt shares with the previous request (at most a BOS token here).
 */
export async function runKindling({ url, backend, promptsFor, prompts, threads, genTokens, warmup, log }) {
  const t0 = performance.now();
  // `threads`: the threaded build, which runs in a worker (kindling/worker) of this
  // cross-origin-isolated page; its prompts come made (a worker's tokenize is async).
  const model = threads ? await WorkerModel.load(url, { backend, threads }) : await Model.load(url, { backend });
  const loadMs = performance.now() - t0;
  const info = model.info;
  const name = threads ? `kindling ${backend} ${threads}t` : `kindling ${backend}`;
  log(`${name}: loaded in ${loadMs.toFixed(0)} ms (${info.architecture}, ${info.quantization}, backend ${info.backend}, threads ${info.threads.count}: ${info.threads.reason})`);
  if (info.backend !== backend) throw new Error(`asked for backend ${backend}, got ${info.backend}`);
  if (threads && info.threads.count !== threads) throw new Error(`asked for ${threads} threads, got ${info.threads.count}: ${info.threads.reason}`);
  const runs = [];
  try {
    prompts ??= promptsFor(tokenizerOf(model));
    let session = [];
    for (const [i, { ids }] of prompts.entries()) {
      const out = await model.complete(ids, { maxTokens: genTokens, temperature: 0, ignoreEos: true });
      const t = out.timings;
      // The engine keeps one token to evaluate even when the whole prompt is cached.
      const cached = Math.min(commonPrefix(session, ids), ids.length - 1);
      session = [...out.promptTokenIds, ...out.tokenIds];
      const run = {
        promptTokens: out.promptTokenIds.length,
        cachedTokens: cached,
        genTokens: out.tokenIds.length,
        prefillMs: t.prefillMs,
        decodeMs: t.decodeMs,
        prefillTokS: (ids.length - cached) / Math.max(t.prefillMs / 1e3, 1e-9),
        decodeTokS: t.decodeTokensPerSecond,
        finishReason: out.finishReason,
        text: out.text.slice(0, 80),
      };
      runs.push(run);
      log(`${name}: ${i < warmup ? 'warm-up' : `rep ${i - warmup + 1}`}: prefill ${run.prefillTokS.toFixed(1)} tok/s, decode ${run.decodeTokS.toFixed(1)} tok/s (${run.promptTokens} prompt tokens, ${cached} cached; ${run.genTokens} generated)`);
    }
  } finally {
    await model.dispose();
  }
  return {
    loadMs,
    prompts,
    info: { backend: info.backend, adapter: info.adapter ?? null, quantization: info.quantization, architecture: info.architecture, threads: info.threads },
    runs,
  };
}
