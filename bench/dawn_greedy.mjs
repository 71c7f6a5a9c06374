// Greedy generation of the real models through the npm package on a real GPU (Dawn, the
// WebGPU library inside Chrome), against the native engine's ids: the check the browser
// tests make on SwiftShader, over every prompt and 32 tokens, where SwiftShader is too
// slow for more than SmolLM2's first token.
//
//   bash .dawn/run.sh .dawn bench/dawn_greedy.mjs PKG_DIR FIXTURE KEY=FILE.gguf ...
//
// FIXTURE: tests/fixtures/dawn_greedy.json (crates/web/scripts/gen_greedy_fixture.py
// --all-prompts --max-tokens 32): native CPU ids and each step's top-1/top-2 margin. Ids
// must be equal up to the first step whose margin is below 0.1 (a near-tie, where f32
// summation order may flip the choice). Prints one JSON line per case; exits 1 on a
// mismatch.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const NEAR_TIE = 0.1;
const [pkgDir, fixturePath, ...specs] = process.argv.slice(2);
if (!pkgDir || !fixturePath || specs.length === 0) {
  console.error('usage: dawn_greedy.mjs PKG_DIR FIXTURE KEY=FILE.gguf ...');
  process.exit(2);
}
const fixture = JSON.parse(fs.readFileSync(fixturePath, 'utf8'));
const { Model, initEngine } = await import(pathToFileURL(path.resolve(pkgDir, 'index.js')).href);
await initEngine(fs.readFileSync(path.resolve(pkgDir, 'wasm/kindling_web_bg.wasm')));

let failures = 0;
let compared = 0;
for (const spec of specs) {
  const [key, file] = spec.split('=');
  const cases = fixture.models[key]?.cases;
  if (!cases) throw new Error(`no cases for '${key}' in ${fixturePath}`);
  // BACKEND=cpu checks the script itself on a machine without a GPU.
  const model = await Model.load(await fs.openAsBlob(file), { backend: process.env.BACKEND ?? 'webgpu' });
  for (const c of cases) {
    const got = (await model.complete(c.prompt_token_ids, { maxTokens: fixture.max_tokens, temperature: 0 })).tokenIds;
    const upTo = c.margins.findIndex((m) => m < NEAR_TIE);
    const checked = upTo < 0 ? c.token_ids.length : upTo;
    const firstDiff = c.token_ids.findIndex((id, i) => got[i] !== id);
    const ok = firstDiff < 0 ? got.length === c.token_ids.length || checked < c.token_ids.length : firstDiff >= checked;
    compared += Math.min(checked, got.length);
    failures += ok ? 0 : 1;
    console.log(JSON.stringify({ model: key, case: c.name, ok, checked, equal_prefix: firstDiff < 0 ? got.length : firstDiff, want: c.token_ids, got }));
  }
  console.log(JSON.stringify({ model: key, backend: model.info.backend, adapter: model.info.adapter?.description }));
  await model.dispose();
}
console.log(JSON.stringify({ cases_failed: failures, tokens_compared: compared }));
process.exit(failures ? 1 : 0);
