// The GPU test bench: wires the four sections. It uses the package's public API
// (www/index.js) and, for the kernel tests and kernel benchmarks, the engine's
// diagnostics exports (crates/web/src/diagnostics.rs) from the same wasm module.

import { Model, initEngine } from '../../www/index.js';
import * as engine from '../../www/wasm/kindling_web.js';
import { Bench } from './bench.js';
import { adapterName, isSoftware, showCapabilities } from './detect.js';
import { KernelRunner } from './kernels.js';
import { Runner } from './runner.js';

const $ = (id) => document.getElementById(id);

await initEngine();
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
