// Typed GPU failures through the JS API: a model that does not fit the device's limits
// is an OutOfMemoryError on 'webgpu' and runs on the CPU with 'auto'; a lost device
// makes every later generation a DeviceLostError. Run by device_errors.rs.

const SMOLLM2 = '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf';
const TINY = '.cache/synthetic/tiny-llama.gguf';

export async function runDeviceErrorTests(base) {
  const log = [];
  const failures = [];
  const check = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const url = (p) => `${base}/${p}`;
  const kindling = await import(url('www/index.js'));
  const { Model, OutOfMemoryError, DeviceLostError } = kindling;
  const { watchGpu, shrinkAdapter } = await import(url('crates/web/tests/browser/gpu_watch.js'));
  const caps = await Model.capabilities();
  if (!caps.webgpu) return { log: ['no WebGPU: device error tests skipped'], failures };
  const rejectsWith = async (promise, Class, what) => {
    try {
      await promise;
      failures.push(`${what}: resolved, expected ${Class.name}`);
    } catch (e) {
      if (e instanceof Class) log.push(`${what}: ${e.name}: ${e.message}`);
      else failures.push(`${what}: got ${e?.name}: ${e?.message}, expected ${Class.name}`);
    }
  };

  // 1. A device whose buffers and bindings hold 5.5 MiB (the engine's parameter blob
  //    takes 5 MiB): SmolLM2's weights split into parts that fit, but its all-logits
  //    workspace (32 rows × 49,152 × 4 bytes = 6 MiB) does not.
  const small = shrinkAdapter({ maxBufferSize: 11 << 19, maxStorageBufferBindingSize: 11 << 19 });
  const watch = watchGpu();
  try {
    await rejectsWith(Model.load(url(SMOLLM2), { backend: 'webgpu', contextLength: 64 }), OutOfMemoryError, 'too big for the device (webgpu)');
    check(watch.liveBuffers() === 0 && watch.liveDevices() === 0,
      `the failed load left ${watch.liveBuffers()} buffers and ${watch.liveDevices()} devices alive`);
    const auto = await Model.load(url(SMOLLM2), { backend: 'auto', contextLength: 64 });
    const { backend, fallbackReason } = auto.info;
    log.push(`too big for the device (auto): backend ${backend}, fallbackReason: ${fallbackReason}`);
    check(backend === 'cpu' && /does not fit/.test(fallbackReason ?? ''), `auto after OutOfMemory: ${backend}, ${fallbackReason}`);
    const r = await auto.complete('The capital of France is', { maxTokens: 2, temperature: 0 });
    check(r.tokenIds.length === 2, `auto fallback generates: ${JSON.stringify(r)}`);
    await auto.dispose();
  } finally {
    watch.restore();
    small.restore();
  }

  // 2. The device is destroyed behind the engine's back (as a GPU reset would): the
  //    next generation and every one after it reject with DeviceLostError.
  const lost = watchGpu();
  try {
    const m = await Model.load(url(TINY), { backend: 'webgpu' });
    const before = await m.complete('hello', { maxTokens: 3, temperature: 0 });
    check(before.tokenIds.length >= 1, 'generates before the device is lost');
    lost.destroyDevices();
    await rejectsWith(m.complete('hello', { maxTokens: 3, temperature: 0 }), DeviceLostError, 'after the device was destroyed');
    await rejectsWith(m.complete('hello again', { maxTokens: 3, temperature: 0 }), DeviceLostError, 'and the call after');
    check(m.tokenize('hello').length > 0, 'tokenize (no GPU) still works on a lost device');
    await m.dispose();
  } finally {
    lost.restore();
  }
  return { log, failures };
}
