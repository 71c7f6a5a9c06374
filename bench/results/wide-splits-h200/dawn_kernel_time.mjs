// Times one batch-matmul entry point of a WGSL module under Dawn (Tint's compile, as a
// browser runs it), without the engine: the matmul family's bindings made from the
// module's own declarations (a uniform Params and zero-filled storage buffers sized for
// the shape), REPS dispatches in one timestamped pass, the median of ROUNDS passes.
//   bash .dawn/run.sh .dawn dawn_kernel_time.mjs ENTRY N ROWS K SPLITS FILE.wgsl [FILE ...]
// SPLITS: the k spans (the grid's y is m_tiles × SPLITS, as wide.rs dispatches it);
// DAWN_TOGGLES="a,b" turns on Dawn toggles (e.g. disable_robustness). Prints µs a call
// per file. The grid is matmul_wide's (128 × 128 tiles) unless TILE=64 (matmul_tiled's,
// the integer-dot kernel's); ROW_WORDS: the weight's 32-bit words a row (Q4_K: k / 256 × 36).
import fs from 'node:fs';
import { createRequire } from 'node:module';

const [entry, nArg, rowsArg, kArg, splitsArg, ...files] = process.argv.slice(2);
const [n, rows, k, splits] = [nArg, rowsArg, kArg, splitsArg].map(Number);
const REPS = Number(process.env.REPS ?? 20);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const webgpu = createRequire(import.meta.url)(process.env.DAWN_WEBGPU_DIR ?? '/tmp/dawn-node/webgpu');
const toggles = process.env.DAWN_TOGGLES ? [`enable-dawn-features=${process.env.DAWN_TOGGLES}`] : [];
const gpu = webgpu.create(['disable-dawn-features=timestamp_quantization', ...toggles]);
const adapter = await gpu.requestAdapter();
const device = await adapter.requestDevice({
  requiredFeatures: ['timestamp-query'],
  requiredLimits: {
    maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage,
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
    maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize,
  },
});
device.addEventListener('uncapturederror', (e) => console.log(`error: ${e.error.message}`));

const TILE = Number(process.env.TILE ?? 128);
const kSpan = Math.ceil(Math.ceil(k / splits) / 64) * 64;
const mTiles = Math.ceil(n / TILE);
// Params in declaration order (shaders.rs MatmulParams): the fields a panel GEMM reads.
const rowWords = Number(process.env.ROW_WORDS ?? (k / 256) * 36);
const fields = { n, k, rows, row_words: rowWords, x_stride: k, out_stride: rows, splits: Math.ceil(k / kSpan), k_span: kSpan, m_tiles: mTiles, rows2: rows, res_stride: rows, qx_runs: k / 16 };
const sizes = { x: n * k, qx: n * k, w: rows * rowWords, wf: rows * k, out: n * rows, out2: splits * n * rows, res: n * rows };

function time(file) {
  const code = fs.readFileSync(file, 'utf8');
  const names = [...code.match(/struct Params \{([^}]*)\}/)[1].matchAll(/(\w+):/g)].map((m) => m[1]);
  const params = new Uint32Array(Math.ceil(names.length / 4) * 4);
  names.forEach((name, i) => { params[i] = fields[name] ?? 0; });
  const decls = [...code.matchAll(/@binding\((\d+)\) var<([^>]*)> (\w+)/g)];
  const layoutEntries = decls.map(([, b, space]) => ({
    binding: Number(b),
    visibility: GPUShaderStage.COMPUTE,
    buffer: { type: space === 'uniform' ? 'uniform' : space.includes('read_write') ? 'storage' : 'read-only-storage' },
  }));
  const entries = decls.map(([, b, space, name]) => {
    const bytes = space === 'uniform' ? params.byteLength : Math.max(16, 4 * (sizes[name] ?? 4));
    const usage = space === 'uniform' ? GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST : GPUBufferUsage.STORAGE;
    const buffer = device.createBuffer({ size: Math.ceil(bytes / 16) * 16, usage });
    if (space === 'uniform') device.queue.writeBuffer(buffer, 0, params);
    return { binding: Number(b), resource: { buffer } };
  });
  const bgl = device.createBindGroupLayout({ entries: layoutEntries });
  const pipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [bgl] }),
    compute: { module: device.createShaderModule({ code }), entryPoint: entry },
  });
  const bindGroup = device.createBindGroup({ layout: bgl, entries });
  // One query set and readback pair per file, reused by every round.
  const qs = device.createQuerySet({ type: 'timestamp', count: 2 });
  const resolve = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  return async () => {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass({ timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    for (let i = 0; i < REPS; i++) pass.dispatchWorkgroups(Math.ceil(rows / TILE), mTiles * fields.splits);
    pass.end();
    enc.resolveQuerySet(qs, 0, 2, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, read, 0, 16);
    device.queue.submit([enc.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const [t0, t1] = new BigUint64Array(read.getMappedRange());
    read.unmap();
    return Number(t1 - t0) / 1e3 / REPS;
  };
}

const runs = files.map((f) => [f, time(f)]);
const results = Object.fromEntries(files.map((f) => [f, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [f, run] of runs) results[f].push(await run());
}
for (const f of files) {
  const v = results[f].sort((a, b) => a - b);
  console.log(`${f} ${entry} n=${n} rows=${rows} k=${k} splits=${fields.splits}: ${v[v.length >> 1].toFixed(1)} µs a call (min ${v[0].toFixed(1)})`);
}
device.destroy();
