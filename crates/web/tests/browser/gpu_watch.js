// Test instruments over the browser's own WebGPU objects, independent of the engine's
// bookkeeping. They patch prototype methods: wgpu's wasm-bindgen glue calls every
// WebGPU method by property lookup (`arg0.createBuffer(arg1)`, `arg0.destroy()`,
// `arg0.requestDevice(arg1)` in www/wasm/kindling_web.js), so it goes through them.
// Each returns a `restore()`; tests run one at a time, so a patch never overlaps
// another test.

/**
 * Counts the WebGPU buffers and devices created from now on and which of them are
 * still alive (not `destroy()`ed). `onRequestDevice` runs when a device is requested
 * (a test aborts there to hit the window while the backend is being opened).
 */
export function watchGpu({ onRequestDevice } = {}) {
  const D = GPUDevice.prototype;
  const B = GPUBuffer.prototype;
  const A = GPUAdapter.prototype;
  const original = { createBuffer: D.createBuffer, destroyBuffer: B.destroy, destroyDevice: D.destroy, requestDevice: A.requestDevice };
  const buffers = new Set();
  const devices = new Set();
  let pending = 0;
  const stats = { buffersCreated: 0, devicesCreated: 0, devicesRequested: 0 };

  D.createBuffer = function (descriptor) {
    const buffer = original.createBuffer.call(this, descriptor);
    buffers.add(buffer);
    stats.buffersCreated++;
    return buffer;
  };
  B.destroy = function () {
    buffers.delete(this);
    return original.destroyBuffer.call(this);
  };
  D.destroy = function () {
    devices.delete(this);
    return original.destroyDevice.call(this);
  };
  A.requestDevice = async function (descriptor) {
    stats.devicesRequested++;
    onRequestDevice?.();
    pending++;
    try {
      const device = await original.requestDevice.call(this, descriptor);
      devices.add(device);
      stats.devicesCreated++;
      return device;
    } finally {
      pending--;
    }
  };

  return {
    stats,
    /** Buffers created since the watch began and not destroyed. */
    liveBuffers: () => buffers.size,
    /** Their labels (what the engine named them), for failure messages. */
    liveLabels: () => [...buffers].map((b) => `${b.label || '(unlabelled)'} (${b.size} bytes)`),
    /** Devices created since the watch began and not destroyed, and those being created. */
    liveDevices: () => devices.size + pending,
    /** Devices requested and not created yet. */
    pendingDevices: () => pending,
    /** Destroys every live device (a lost device, as far as the engine can tell). */
    destroyDevices: () => [...devices].forEach((d) => d.destroy()),
    restore() {
      D.createBuffer = original.createBuffer;
      B.destroy = original.destroyBuffer;
      D.destroy = original.destroyDevice;
      A.requestDevice = original.requestDevice;
    },
  };
}

/** Resolves once `condition()` holds, or after `ms` (returns whether it held). */
export async function waitFor(condition, ms) {
  const end = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/**
 * Makes `navigator.gpu.requestAdapter()` return the adapter dressed as a hardware GPU
 * (`isFallbackAdapter: false`, so 'auto' chooses it) with `limits` lowered to `limits`:
 * a smaller device than the one present. wgpu reads both through these properties and
 * requests no more than the lowered limits.
 */
export function shrinkAdapter(limits) {
  const G = GPU.prototype;
  const original = G.requestAdapter;
  const plain = (o) => {
    const out = {};
    for (const k in o) if (typeof o[k] !== 'function') out[k] = o[k];
    return out;
  };
  G.requestAdapter = async function (options) {
    const adapter = await original.call(this, options);
    if (!adapter) return adapter;
    Object.defineProperty(adapter, 'limits', { value: { ...plain(adapter.limits), ...limits } });
    Object.defineProperty(adapter, 'info', { value: { ...plain(adapter.info), isFallbackAdapter: false } });
    Object.defineProperty(adapter, 'isFallbackAdapter', { value: false });
    return adapter;
  };
  return { restore: () => (G.requestAdapter = original) };
}
