// GPU time per kernel under Dawn, for bench/dawn.mjs (TRACE_GPU=1): where the browser
// build's time goes on the GPU, kernel by kernel, to set beside the native op timings.
//
// The engine records a token's work into one compute pass. While profiling is on, each
// pass is held back and replayed as one pass per dispatch with timestamp writes at its
// start and end (WebGPU's only timestamps), resolved into a buffer that is read after
// the submission. So a kernel's figure is its own GPU time without the overlap of
// neighbouring dispatches that a single pass allows.
//
// Install before the engine requests its device: it adds 'timestamp-query' to the
// device's features and wraps the prototypes of Dawn's objects.

export async function installGpuProfiler() {
  const probeAdapter = await navigator.gpu.requestAdapter();
  if (!probeAdapter?.features.has('timestamp-query')) throw new Error('TRACE_GPU: the adapter has no timestamp-query');
  const probe = await probeAdapter.requestDevice({ requiredFeatures: ['timestamp-query'] });
  const probeEncoder = probe.createCommandEncoder();
  const probePass = probeEncoder.beginComputePass();
  const proto = {
    adapter: Object.getPrototypeOf(probeAdapter),
    device: Object.getPrototypeOf(probe),
    encoder: Object.getPrototypeOf(probeEncoder),
    queue: Object.getPrototypeOf(probe.queue),
  };
  probePass.end();
  probe.destroy();

  const real = {
    requestDevice: proto.adapter.requestDevice,
    createComputePipeline: proto.device.createComputePipeline,
    createCommandEncoder: proto.device.createCommandEncoder,
    beginComputePass: proto.encoder.beginComputePass,
    finish: proto.encoder.finish,
    submit: proto.queue.submit,
  };
  const labels = new WeakMap(); // pipeline -> its label (wgpu passes the kernel's name)
  const deviceOf = new WeakMap(); // encoder -> device
  const timedIn = new WeakMap(); // encoder, then command buffer -> [{ labels, read }]
  const reads = []; // promises of [label, ns][] per replayed pass
  let enabled = false;

  proto.adapter.requestDevice = function (desc = {}) {
    const requiredFeatures = [...new Set([...(desc.requiredFeatures ?? []), 'timestamp-query'])];
    return real.requestDevice.call(this, { ...desc, requiredFeatures });
  };
  proto.device.createComputePipeline = function (desc) {
    const pipeline = real.createComputePipeline.call(this, desc);
    labels.set(pipeline, desc.label ?? '?');
    return pipeline;
  };
  proto.device.createCommandEncoder = function (desc) {
    const encoder = real.createCommandEncoder.call(this, desc);
    deviceOf.set(encoder, this);
    return encoder;
  };

  /** Replays `commands` one dispatch per pass, with timestamps, into `encoder`. */
  function replay(encoder, commands) {
    const device = deviceOf.get(encoder);
    const n = commands.filter(([kind]) => kind === 'dispatch').length;
    if (n === 0) return;
    const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * n });
    const resolved = device.createBuffer({ size: 16 * n, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    const read = device.createBuffer({ size: 16 * n, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const names = [];
    let pipeline = null;
    const groups = [];
    for (const [kind, args] of commands) {
      if (kind === 'pipeline') pipeline = args[0];
      else if (kind === 'group') groups[args[0]] = args;
      else {
        const i = names.length;
        names.push(labels.get(pipeline) ?? '?');
        const pass = real.beginComputePass.call(encoder, {
          timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 },
        });
        pass.setPipeline(pipeline);
        for (const g of groups) if (g) pass.setBindGroup(...g);
        pass.dispatchWorkgroups(...args);
        pass.end();
      }
    }
    encoder.resolveQuerySet(querySet, 0, 2 * n, resolved, 0);
    encoder.copyBufferToBuffer(resolved, 0, read, 0, 16 * n);
    const list = timedIn.get(encoder) ?? [];
    list.push({ names, read, querySet, resolved });
    timedIn.set(encoder, list);
  }

  proto.encoder.beginComputePass = function (desc) {
    if (!enabled) return real.beginComputePass.call(this, desc);
    const encoder = this;
    const commands = [];
    return {
      setPipeline: (...args) => commands.push(['pipeline', args]),
      // The dynamic offsets may be a view of the wasm memory, reused by the time the
      // pass ends: keep a copy of the ones this call names.
      setBindGroup: (index, group, offsets = [], start = 0, length = offsets.length) =>
        commands.push(['group', [index, group, Array.from(offsets).slice(start, start + length)]]),
      dispatchWorkgroups: (...args) => commands.push(['dispatch', args]),
      end: () => replay(encoder, commands),
    };
  };
  proto.encoder.finish = function (desc) {
    const buffer = real.finish.call(this, desc);
    const list = timedIn.get(this);
    if (list) timedIn.set(buffer, list);
    return buffer;
  };
  proto.queue.submit = function (buffers) {
    real.submit.call(this, buffers);
    for (const b of buffers) {
      for (const { names, read, querySet, resolved } of timedIn.get(b) ?? []) {
        reads.push(
          read.mapAsync(GPUMapMode.READ).then(() => {
            const t = new BigInt64Array(read.getMappedRange().slice(0));
            read.unmap();
            for (const x of [read, querySet, resolved]) x.destroy();
            return names.map((name, i) => [name, Number(t[2 * i + 1] - t[2 * i])]);
          }),
        );
      }
    }
  };

  return {
    /** Profiles the passes begun from now on (true) or stops (false). */
    enable(on) {
      enabled = on;
    },
    /** Per kernel label over what was profiled: { label: { calls, us } }, and clears. */
    async report(perTokens = 1) {
      const all = (await Promise.all(reads.splice(0))).flat();
      const out = {};
      let total = 0;
      for (const [name, ns] of all) {
        const s = (out[name] ??= { calls: 0, us: 0 });
        s.calls += 1 / perTokens;
        s.us += ns / 1e3 / perTokens;
        total += ns / 1e3 / perTokens;
      }
      const sorted = Object.entries(out).sort((a, b) => b[1].us - a[1].us);
      return {
        total_us: +total.toFixed(1),
        kernels: Object.fromEntries(sorted.map(([k, v]) => [k, { calls: +v.calls.toFixed(2), us: +v.us.toFixed(1) }])),
      };
    },
  };
}
