// Embedding throughput of the npm package's wasm through Dawn (bench/embed.sh), the
// counterpart of `kindling bench` on an encoder and of llama-server --embedding:
//
//   bash .dawn/run.sh .dawn bench/dawn_embed.mjs PKG_DIR NAME=FILE.gguf
//
// PKG_DIR is assembled as bench/dawn.sh does (www/'s modules, the wasm under wasm/).
// BATCHES (default "32x16 4x2000"): INPUTSxTOKENS, each one model.embeddings.create
// request of that many texts of exactly that many tokens (bench/embed_inputs.js; the
// reply's usage.prompt_tokens is checked); a warm-up and REPS (3) timed requests, the
// median. BACKEND=cpu runs it without a GPU (plain Node, to check the script).
// One JSON line per batch on stdout.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { embedTexts, parseBatches, timeEmbeddings } from './embed_inputs.js';

const [pkgDir, spec] = process.argv.slice(2);
if (!pkgDir || !spec?.includes('=')) {
  console.error('usage: dawn_embed.mjs PKG_DIR NAME=FILE.gguf');
  process.exit(2);
}
const REPS = Number(process.env.REPS ?? 3);
const BATCHES = parseBatches(process.env.BATCHES ?? '32x16 4x2000');
const BACKEND = process.env.BACKEND ?? 'webgpu';

const { Model, initEngine } = await import(pathToFileURL(path.resolve(pkgDir, 'index.js')).href);
await initEngine(fs.readFileSync(path.resolve(pkgDir, 'wasm/kindling_web_bg.wasm')));
const [name, file] = spec.split('=');
const blob = await fs.openAsBlob(file);
const t0 = performance.now();
const model = await Model.load(blob, { backend: BACKEND });
const loadMs = performance.now() - t0;
const info = model.info;
if (info.kind !== 'encoder') throw new Error(`${file} is a ${info.kind}, not an embedding model`);
if (info.backend !== BACKEND) throw new Error(`asked for backend ${BACKEND}, got ${info.backend}`);
const tokenize = (text) => model.tokenize(text, { addSpecial: true });
for (const { inputs, inputTokens } of BATCHES) {
  const texts = embedTexts(tokenize, inputs, inputTokens);
  const r = await timeEmbeddings((input) => model.embeddings.create({ input }), texts, inputTokens, REPS);
  console.log(JSON.stringify({ engine: 'dawn', model: name, backend: info.backend, adapter: info.adapter ?? null, load_ms: loadMs, ...r }));
}
await model.dispose();
