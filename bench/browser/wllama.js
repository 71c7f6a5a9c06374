// wllama's side of the benchmark (npm @wllama/wllama, a dev dependency): llama.cpp in
// WebAssembly, single-threaded and CPU-only, timed the same way as Kindling.
//
// Options that matter for a fair comparison (all checked against wllama 3.8.1's source):
// - n_threads: 1 for the single-threaded row. Without it wllama takes
//   hardwareConcurrency / 2 threads where SharedArrayBuffer is available (a
//   cross-origin-isolated page: run.mjs serves one when threaded rows run); the threaded
//   row (wllama-threads) asks for Kindling's count and checks it got them.
// - n_gpu_layers: 0. wllama 3.x offloads every layer to WebGPU by default; 0 also skips
//   opening a WebGPU device.
// - setCompat(null): its "compat" build (for browsers without JSPI or Memory64) comes
//   from a CDN; Chromium needs none, and this way nothing is fetched from the internet.
// - per request: temperature 0 (llama.cpp's greedy), ignore_eos (run to max_tokens) and
//   cache_prompt false (llama-server would otherwise reuse a cached prefix). The prompt
//   is text: wllama 3.8.1 rejects token ids ("type must be string, but is array"), so
//   llama.cpp tokenizes it, and the run fails unless its prompt_n is Kindling's count.

import { Wllama } from '/node_modules/@wllama/wllama/esm/index.js';

const WASM = '/node_modules/@wllama/wllama/esm/wasm/wllama.wasm';

/** Library and llama.cpp build versions, for the report. */
export function wllamaVersion() {
  return { libllama: Wllama.getLibllamaVersion?.() ?? null };
}

/** Same contract as `runKindling` (kindling.js), with `prompts` ({ text, ids }) made. */
export async function runWllama({ url, prompts, genTokens, warmup, log, threads = 1 }) {
  // Only warnings and errors reach the driver; wllama's debug chatter stays out.
  const logger = { debug() {}, log() {}, warn: (...a) => log(`wllama warn: ${a.join(' ')}`), error: (...a) => log(`wllama error: ${a.join(' ')}`) };
  const wllama = new Wllama({ default: WASM }, { logger });
  wllama.setCompat(null);
  const nCtx = Math.max(1024, Math.max(...prompts.map((p) => p.ids.length)) + genTokens + 16);
  const t0 = performance.now();
  await wllama.loadModelFromUrl(url, { n_threads: threads, n_gpu_layers: 0, n_ctx: nCtx, useCache: false, log_level: 3 });
  const loadMs = performance.now() - t0;
  const info = { multithread: wllama.isMultithread(), threads: wllama.getNumThreads(), nCtx };
  log(`wllama: loaded in ${loadMs.toFixed(0)} ms (threads ${info.threads}, multithread ${info.multithread})`);
  if (info.threads !== threads || (threads > 1 && !info.multithread)) throw new Error(`wllama did not take ${threads} thread(s): ${JSON.stringify(info)}`);
  const runs = [];
  try {
    for (const [i, { text, ids }] of prompts.entries()) {
      let firstAt = null;
      let last = null;
      let output = '';
      const start = performance.now();
      await wllama.createCompletion({
        prompt: text,
        max_tokens: genTokens,
        temperature: 0,
        ignore_eos: true,
        cache_prompt: false,
        stream: true,
        onData: (chunk) => {
          firstAt ??= performance.now();
          last = chunk;
          output += chunk.choices?.[0]?.text ?? '';
        },
      });
      const end = performance.now();
      const t = last?.timings;
      if (!t) throw new Error('wllama returned no timings in its last chunk');
      firstAt ??= end;
      const prefillMs = firstAt - start;
      const decodeMs = end - firstAt;
      const run = {
        promptTokens: t.prompt_n + t.cache_n,
        cachedTokens: t.cache_n,
        genTokens: t.predicted_n,
        prefillMs,
        decodeMs,
        // The same definitions as Kindling's timings (www/index.js), from JS wall clock.
        prefillTokS: t.prompt_n / Math.max(prefillMs / 1e3, 1e-9),
        decodeTokS: Math.max(t.predicted_n - 1, 0) / Math.max(decodeMs / 1e3, 1e-9),
        finishReason: last.choices?.[0]?.finish_reason ?? null,
        // The start of the greedy continuation: the same as Kindling's when both run the
        // same prompt through the same weights (a check that the work is the same).
        text: output.slice(0, 80),
        // llama.cpp's own clock inside the worker, for reference.
        internal: { ...t },
      };
      if (t.cache_n !== 0) throw new Error(`wllama reused ${t.cache_n} cached prompt tokens; prefill would be overstated`);
      if (t.prompt_n !== ids.length) throw new Error(`wllama tokenized the prompt to ${t.prompt_n} tokens, Kindling to ${ids.length}`);
      runs.push(run);
      log(`wllama: ${i < warmup ? 'warm-up' : `rep ${i - warmup + 1}`}: prefill ${run.prefillTokS.toFixed(1)} tok/s, decode ${run.decodeTokS.toFixed(1)} tok/s (${run.genTokens} tokens; llama.cpp's clock: ${t.prompt_per_second.toFixed(1)} / ${t.predicted_per_second.toFixed(1)})`);
    }
  } finally {
    await wllama.exit();
  }
  return { loadMs, info, runs, prompts };
}
