// Two builds of the npm package through Dawn in one Node process, taking turns run by run
// on the same model file: an A/B of the browser build whose runs share the process, its
// host and its GPU state. (Dawn's decode speed wanders by 10-30% from process to process
// and drifts within one: bench/results/merge-splits-h200.md, call 1. Across processes an
// A/B of a few percent is lost in that.)
//
//   bash .dawn/run.sh .dawn bench/dawn_ab.mjs PKG_A PKG_B NAME=FILE.gguf
//
// Each PKG holds www/'s modules and its wasm under wasm/ (as bench/dawn.sh assembles it).
// Both models are loaded at once; for each prompt length (PROMPTS, default "8 512 4096")
// each build warms up once, then REPS (default 6) rounds each run A and B in turn, in the
// order ABBA, BAAB, ... so that drift lands on both alike, each a greedy completion of
// GEN_TOKENS (128) tokens. Prints one JSON line per prompt length: both builds' decode
// and prefill tok/s (every run and the median) and the medians of the rounds' B/A ratios
// (decode, prefill).
// A prompt length where both builds run the same code is the check on the method: its
// ratio should be 1 within a percent or two. LOAD_A and LOAD_B (JSON) add load options to
// one side, e.g. LOAD_B='{"kvCacheType":"f16"}' with one build given twice (two copies of
// its directory, so each side has its own wasm instance).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [pkgA, pkgB, spec] = process.argv.slice(2);
if (!pkgA || !pkgB || !spec?.includes('=')) {
  console.error('usage: dawn_ab.mjs PKG_A PKG_B NAME=FILE.gguf');
  process.exit(2);
}
const REPS = Number(process.env.REPS ?? 6);
const GEN_TOKENS = Number(process.env.GEN_TOKENS ?? 128);
const PROMPTS = (process.env.PROMPTS ?? '8 512 4096').split(/\s+/).filter(Boolean).map(Number);
const [name, file] = spec.split('=');
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

/** Loads the model through one package's own module graph and wasm instance. */
async function load(pkgDir, extra) {
  const { Model, initEngine } = await import(pathToFileURL(path.resolve(pkgDir, 'index.js')).href);
  await initEngine(fs.readFileSync(path.resolve(pkgDir, 'wasm/kindling_web_bg.wasm')));
  return Model.load(await fs.openAsBlob(file), {
    backend: 'webgpu',
    contextLength: Math.max(...PROMPTS) + GEN_TOKENS + 64,
    ...JSON.parse(extra || '{}'),
  });
}

const models = { A: await load(pkgA, process.env.LOAD_A), B: await load(pkgB, process.env.LOAD_B) };
const vocab = models.A.info.vocabSize;

/** Ordinary ids spread over the vocabulary, different each run (no prefix reuse). */
function prompt(n, run) {
  return Array.from({ length: n }, (_, i) => 1 + ((i * 7919 + run * 1009) % Math.max(vocab - 1, 1)));
}

let run = 0;
async function complete(side, n) {
  const r = await models[side].complete(prompt(n, run++), { maxTokens: GEN_TOKENS, temperature: 0, ignoreEos: true });
  if (r.tokenIds.length !== GEN_TOKENS) throw new Error(`${side}: ${r.tokenIds.length} tokens (${r.finishReason})`);
  return r.timings;
}

for (const n of PROMPTS) {
  await complete('A', n); // warm-up: pipelines, bind groups
  await complete('B', n);
  const runs = { A: [], B: [] };
  const ratios = [];
  const prefillRatios = [];
  for (let rep = 0; rep < REPS; rep++) {
    const order = rep % 2 === 0 ? ['A', 'B', 'B', 'A'] : ['B', 'A', 'A', 'B'];
    const got = { A: [], B: [] };
    for (const side of order) got[side].push(await complete(side, n));
    for (const side of ['A', 'B']) runs[side].push(...got[side]);
    const mean = (ts, key) => ts.reduce((s, t) => s + t[key], 0) / ts.length;
    ratios.push(mean(got.B, 'decodeTokensPerSecond') / mean(got.A, 'decodeTokensPerSecond'));
    prefillRatios.push(mean(got.B, 'prefillTokensPerSecond') / mean(got.A, 'prefillTokensPerSecond'));
  }
  const side = (ts) => ({
    decode_tok_s: median(ts.map((t) => t.decodeTokensPerSecond)),
    prefill_tok_s: median(ts.map((t) => t.prefillTokensPerSecond)),
    decode_runs: ts.map((t) => Math.round(t.decodeTokensPerSecond)),
  });
  const row = {
    model: name, prompt: n, A: side(runs.A), B: side(runs.B), decode_ratio_b_over_a: median(ratios), ratios,
    prefill_ratio_b_over_a: median(prefillRatios),
    kv: { A: models.A.info.kvCacheType, B: models.B.info.kvCacheType },
  };
  console.log(JSON.stringify(row));
}
for (const m of Object.values(models)) await m.dispose();
