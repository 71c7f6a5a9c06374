// The embeddings row of the browser benchmark: an embedding model on Kindling's CPU path
// (the package with backend 'cpu', as a page without WebGPU runs it), one
// model.embeddings.create request per batch of texts of an exact token count (the texts
// bench/embed.sh gives every engine: bench/embed_inputs.js), a warm-up and `reps` timed
// requests, the median: inputs/s and tokens/s.

import { Model } from '/www/index.js';
import { embedTexts, timeEmbeddings } from '/bench/embed_inputs.js';

/** One row per batch `{ inputs, inputTokens }`; the model is loaded once. */
export async function runEmbeddings({ url, batches, reps, log }) {
  const t0 = performance.now();
  const model = await Model.load(url, { backend: 'cpu' });
  const loadMs = performance.now() - t0;
  const info = model.info;
  log(`kindling cpu embeddings: loaded in ${loadMs.toFixed(0)} ms (${info.architecture}, ${info.quantization}, kind ${info.kind}, backend ${info.backend})`);
  if (info.kind !== 'encoder') throw new Error(`${url} is a ${info.kind} model, not an embedding model`);
  if (info.backend !== 'cpu') throw new Error(`asked for the CPU backend, got ${info.backend}`);
  const out = [];
  try {
    const tokenize = (text) => model.tokenize(text, { addSpecial: true });
    for (const { inputs, inputTokens } of batches) {
      const texts = embedTexts(tokenize, inputs, inputTokens);
      const r = await timeEmbeddings((input) => model.embeddings.create({ input }), texts, inputTokens, reps);
      log(`kindling cpu embeddings ${inputs}x${inputTokens}: ${r.inputs_per_s.toFixed(2)} inputs/s, ${r.tokens_per_s.toFixed(1)} tokens/s (runs ${r.runs_s.map((s) => s.toFixed(2)).join(', ')} s)`);
      out.push({ ...r, loadMs, info: { backend: info.backend, architecture: info.architecture, quantization: info.quantization } });
    }
  } finally {
    await model.dispose();
  }
  return out;
}
