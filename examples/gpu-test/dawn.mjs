// The test bench's kernel tests and kernel benchmarks without a browser: the same wasm
// diagnostics exports the page calls (crates/web/src/diagnostics.rs; the wasm built with
// its `harness` feature by `npm run build:harness` into examples/gpu-test/wasm), run in Node with
// Dawn — Chrome's WebGPU library — as navigator.gpu (../shared/dawn-node's shim), so a
// GPU machine where no browser starts shows what the page would show there.
//
//   bash .dawn/run.sh .dawn examples/gpu-test/dawn.mjs examples/gpu-test/wasm [ROWSxCOLS] [REPS]
//
// Prints one JSON line per result: capabilities, each kernel check, each matvec
// benchmark (WebGPU, default 4096x4096; pick one larger than the GPU's L2 cache to
// measure memory rather than cache bandwidth), the dispatch cost.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [wasmDir = 'examples/gpu-test/wasm', size = '4096x4096', reps = '50'] = process.argv.slice(2);
const [rows, cols = rows] = size.split('x').map(Number);
const engine = await import(pathToFileURL(path.resolve(wasmDir, 'kindling_web.js')).href);
await engine.default({ module_or_path: fs.readFileSync(path.resolve(wasmDir, 'kindling_web_bg.wasm')) });
const print = (o) => console.log(JSON.stringify(o));

const caps = await engine.capabilities();
print({ capabilities: { adapter: caps.adapter, features: caps.features, limits: caps.limits, reason: caps.reason } });
if (!caps.webgpu) process.exit(1);

let failed = 0;
const start = performance.now();
for (const name of engine.kernelChecks()) {
  const r = await engine.runKernelCheck(name);
  failed += !r.pass;
  print({ check: r });
}
print({ checks: engine.kernelChecks().length, failed, seconds: (performance.now() - start) / 1e3 });
for (const type of ['F16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q4_K', 'Q5_K', 'Q6_K']) {
  print({ matvec: { rows, cols, ...(await engine.benchMatvec('webgpu', type, rows, cols, Number(reps))) } });
}
print({ dispatch: await engine.benchDispatch('webgpu', 1000) });
process.exit(failed ? 1 : 0);
