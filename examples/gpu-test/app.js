// The GPU test bench: wires the four sections. It uses the package's public API
// (www/index.js) and, for the kernel tests and kernel benchmarks, the engine's
// diagnostics exports (crates/web/src/diagnostics.rs) from a second build of the wasm
// with its `harness` feature (`npm run build:harness`, into ./wasm/): the package's own
// wasm leaves them out. Both builds compile the same kernels.

import { Model, initEngine } from '../../www/index.js';
import { Bench } from './bench.js';
import { adapterName, isSoftware, showCapabilities } from './detect.js';
import { KernelRunner } from './kernels.js';
import { Runner } from './runner.js';

const $ = (id) => document.getElementById(id);

const engine = await import('./wasm/kindling_web.js').catch((e) => {
  const note = document.createElement('p');
  note.className = 'summary bad';
  note.textContent = `The test bench's wasm is not built here (${e.message}): run npm run build:harness`;
  document.querySelector('main')?.prepend(note);
  throw e;
});
await Promise.all([initEngine(), engine.default()]);
const caps = await Model.capabilities();
showCapabilities(caps, $);

const kernels = new KernelRunner(engine, $);
kernels.init(caps.webgpu, caps.reason ?? 'no WebGPU adapter', caps.adapter && adapterName(caps.adapter));
window.kindlingKernelResults = () => kernels.json();

const bench = new Bench(engine, $);
bench.init(caps.webgpu);

const runner = new Runner($, {
  onModel: (model) => ($('mbench-run').disabled = !model),
  software: caps.webgpu ? isSoftware(caps.adapter) : null,
  measuredRate: (type) => bench.webgpuRate(type),
});
$('mbench-run').onclick = () => runner.model && bench.runModel(runner.model, runner.label);

document.body.dataset.ready = 'true';
