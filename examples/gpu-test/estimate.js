// How long a model takes on a software WebGPU adapter (SwiftShader: the GPU's work done
// by the CPU), said before it runs. A decode step reads every weight once, so its time is
// about the weights' bytes over the rate the adapter reads them at: the rate this page's
// matvec benchmark measured here when it has run (for the model's main weight type when
// it measured that), else one measured once elsewhere. Attention, norms, the many
// dispatches of a token and the benchmark's matrix size all move the real figure: an
// estimate only, and the page says so.

import { bytes, duration } from '../shared/format.js';
import { sig } from '../shared/bench-format.js';

/**
 * SwiftShader in headless Chromium on a 2-core x86 machine: SmolLM2-135M Q4_1 (98 MB of
 * weights) decoded at about 37 s per token, its 5-token prompt took 55 s; i.e. ~2.7 MB of
 * weights a second. Another CPU will differ, by several times either way.
 */
export const REFERENCE = { bytesPerSecond: 98e6 / 37, what: 'what SwiftShader gave SmolLM2-135M on a 2-core machine' };

/**
 * `modelBytes` (null when unknown), `measured` (Bench.webgpuRate()'s answer or null) and
 * `maxTokens` → `{ secondsPerToken, text }`: the estimate and what it rests on. The
 * prompt's prefill counts as about 1.5 tokens more, as in the reference run.
 */
export function softwareEstimate(modelBytes, measured, maxTokens) {
  const rate = measured ? measured.gbPerSecond * 1e9 : REFERENCE.bytesPerSecond;
  const basis = measured
    ? `the ${measured.type ? `${measured.type} matvec rate` : 'median matvec rate'} this page's benchmark measured on this adapter (${measured.size}×${measured.size})`
    : `${REFERENCE.what}; run the benchmarks above for a rate measured here`;
  const rough = 'A rough guess: attention, dispatches and the matrix size move real runs, by several times either way.';
  if (!(modelBytes > 0)) {
    return { secondsPerToken: null, text: `Estimate: about ${sig(1e6 / rate)} s per token for every MB of weights, at ${sig(rate / 1e6)} MB/s (${basis}). ${rough}` };
  }
  const secondsPerToken = modelBytes / rate;
  return {
    secondsPerToken,
    text: `Estimate: about ${duration(secondsPerToken)} per token, so ${maxTokens} tokens and the prompt take about ` +
      `${duration(secondsPerToken * (maxTokens + 1.5))} (${bytes(modelBytes)} of weights read per token at ${sig(rate / 1e6)} MB/s, ${basis}). ${rough}`,
  };
}
