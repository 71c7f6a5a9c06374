// Stop on a real GPU: how soon the package's model is free for the next call after a
// generation is aborted mid-reply, on WebGPU through Dawn (Chrome's WebGPU library; see
// ../shared/dawn-node). The browser test (crates/web/tests/browser/abort.js) times the
// same on SwiftShader, where a token takes a minute; this gives real-GPU figures.
//
//   bash .dawn/run.sh .dawn bench/dawn_abort.mjs PKG_DIR FILE.gguf [LABEL]
//
// PKG_DIR holds www/'s modules and wasm/ (as bench/dawn.sh assembles it), so two builds
// can be timed side by side. For greedy (chained steps) and sampled decoding, REPS
// times: a reply of up to 2,000 tokens is aborted by a timer 100 ms after its first
// token, as a click on Stop would; then the next call's first token is timed against
// the same call's first token on an idle model. Prints one JSON line per decoding mode:
//   tokens (before the abort), stepMs (median decode step), rejectMs (abort → the
//   iterator's AbortError), idleFirstMs (first token on an idle model), nextFirstMs
//   (first token of the call made right after the abort, from the abort), waitMs
//   (nextFirstMs − idleFirstMs: what the aborted reply still cost).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [pkgDir, file, label = path.basename(pkgDir)] = process.argv.slice(2);
if (!pkgDir || !file) {
  console.error('usage: dawn_abort.mjs PKG_DIR FILE.gguf [LABEL]');
  process.exit(2);
}
const REPS = Number(process.env.REPS ?? 5);
const { Model, initEngine } = await import(pathToFileURL(path.resolve(pkgDir, 'index.js')).href);
await initEngine(fs.readFileSync(path.resolve(pkgDir, 'wasm/kindling_web_bg.wasm')));
const model = await Model.load(new Blob([fs.readFileSync(file)]), { backend: 'webgpu', contextLength: 4096 });
const vocab = model.info.vocabSize;

/** Ordinary ids; `seed` makes each prompt start differently (no cached prefix to reuse). */
const prompt = (n, seed) => Array.from({ length: n }, (_, i) => 1 + ((i * 7919 + seed * 1009) % (vocab - 1)));
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
let seed = 0;

/** Milliseconds from the call to the first token of a fresh 16-token prompt. */
async function firstTokenMs(options) {
  const start = performance.now();
  for await (const piece of model.generate(prompt(16, ++seed), { ...options, maxTokens: 1 })) {
    if (piece.tokenId !== null) return performance.now() - start;
  }
  throw new Error('no token');
}

for (const [mode, sampling] of [['greedy', { temperature: 0 }], ['sampled', { temperature: 0.8, seed: 7 }]]) {
  const options = { ...sampling, ignoreEos: true };
  await firstTokenMs(options); // warm-up: pipelines compiled, buffers made
  const runs = [];
  for (let rep = 0; rep < REPS; rep++) {
    const idleFirstMs = await firstTokenMs(options);
    const controller = new AbortController();
    const times = [];
    let abortedAt = 0;
    let rejectMs = null;
    try {
      for await (const piece of model.generate(prompt(16, ++seed), { ...options, maxTokens: 2000, signal: controller.signal })) {
        times.push(performance.now());
        if (times.length === 1) setTimeout(() => ((abortedAt = performance.now()), controller.abort()), 100);
      }
    } catch (e) {
      if (e?.name !== 'AbortError') throw e;
      rejectMs = performance.now() - abortedAt;
    }
    await firstTokenMs(options); // the next call, made at once
    const nextFirstMs = performance.now() - abortedAt;
    const stepMs = median(times.slice(1).map((t, i) => t - times[i]));
    runs.push({ tokens: times.length, stepMs, rejectMs, idleFirstMs, nextFirstMs });
  }
  const m = (k) => +median(runs.map((r) => r[k])).toFixed(3);
  const out = { label, mode, reps: REPS, tokens: m('tokens'), stepMs: m('stepMs'), rejectMs: m('rejectMs'), idleFirstMs: m('idleFirstMs'), nextFirstMs: m('nextFirstMs') };
  out.waitMs = +(out.nextFirstMs - out.idleFirstMs).toFixed(3);
  out.runs = runs.map((r) => ({ ...r, waitMs: +(r.nextFirstMs - r.idleFirstMs).toFixed(3) }));
  console.log(JSON.stringify(out));
}
await model.dispose();
