// Aborted loads and disposed models leave no WebGPU buffers or devices behind, counted
// by wrapping the browser's own WebGPU methods (gpu_watch.js), not by the engine's
// bookkeeping. Run by gpu_leaks.rs through the JS API (www/index.js), whose abort path
// is what a page uses.

const SMOLLM2 = '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf';
const TINY = '.cache/synthetic/tiny-llama.gguf';

export async function runGpuLeakTests(base) {
  const log = [];
  const failures = [];
  const check = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const url = (p) => `${base}/${p}`;
  const { Model, AbortError } = await import(url('www/index.js'));
  const { watchGpu, waitFor } = await import(url('crates/web/tests/browser/gpu_watch.js'));
  const caps = await Model.capabilities();
  if (!caps.webgpu) return { log: ['no WebGPU: GPU leak tests skipped'], failures };

  // Runs `body(watch)` with a fresh watch and checks that nothing it created lives on.
  const watched = async (what, body, options) => {
    const watch = watchGpu(options);
    try {
      await body(watch);
      // An abort rejects at once; a device still being opened must be let go as soon
      // as it arrives. The grace is short so that the garbage collector (which frees
      // an orphaned engine object some seconds later) cannot pass for a cleanup.
      await waitFor(() => watch.pendingDevices() === 0, 10000);
      const clean = await waitFor(() => watch.liveBuffers() === 0 && watch.liveDevices() === 0, 250);
      check(clean, `${what}: ${watch.liveBuffers()} buffers (${watch.liveLabels().join(', ')}) and ` +
        `${watch.liveDevices()} devices still alive`);
      check(watch.stats.devicesRequested > 0, `${what}: no WebGPU device was requested (the watch saw nothing)`);
      log.push(`${what}: ${JSON.stringify(watch.stats)}, all destroyed: ${clean}`);
    } catch (e) {
      failures.push(`${what}: threw ${e?.name}: ${e?.message}`);
    } finally {
      watch.restore();
    }
  };
  const rejectsWithAbort = async (promise, what) => {
    try {
      await promise;
      failures.push(`${what}: resolved, expected AbortError`);
    } catch (e) {
      check(e instanceof AbortError, `${what}: got ${e?.name}: ${e?.message}, expected AbortError`);
    }
  };

  // 1. Abort mid-download of SmolLM2 on WebGPU, after weights were uploaded (slow
  //    server: 5 ms per 64 KiB): AbortError within 100 ms, every buffer destroyed.
  await watched('abort mid-download (webgpu)', async (watch) => {
    const controller = new AbortController();
    let abortedAt = 0;
    let liveAtAbort = 0;
    const load = Model.load(url(`${SMOLLM2}?delay_ms=5`), {
      backend: 'webgpu',
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === 'upload' && p.loaded > 12 << 20 && !abortedAt) {
          liveAtAbort = watch.liveBuffers();
          abortedAt = performance.now();
          controller.abort();
        }
      },
    });
    await rejectsWithAbort(load, 'abort mid-download');
    const ms = performance.now() - abortedAt;
    // The engine's fixed buffers are 7; more means weight buffers were allocated.
    check(liveAtAbort > 20, `abort mid-download: only ${liveAtAbort} buffers alive at abort(): no weights uploaded yet`);
    check(abortedAt > 0 && ms < 100, `abort mid-download: rejected ${ms.toFixed(1)} ms after abort()`);
    check(watch.liveBuffers() === 0, `abort mid-download: ${watch.liveBuffers()} buffers alive right after the rejection`);
    log.push(`abort mid-download: ${liveAtAbort} buffers alive at abort(), rejected after ${ms.toFixed(1)} ms`);
  });

  // 2. Abort while the WebGPU device is being opened: the device (and the buffers the
  //    backend makes at once) must go when the open finishes, though nobody awaits it.
  {
    const controller = new AbortController();
    await watched('abort while opening the device', async () => {
      await rejectsWithAbort(Model.load(url(TINY), { backend: 'webgpu', signal: controller.signal }), 'abort while opening');
    }, { onRequestDevice: () => controller.abort() });
  }

  // 3. dispose() after a load frees everything; so does dispose() during a step.
  await watched('dispose after load', async (watch) => {
    const m = await Model.load(url(TINY), { backend: 'webgpu' });
    check(watch.liveBuffers() > 0 && watch.liveDevices() === 1, `loaded: ${watch.liveBuffers()} buffers, ${watch.liveDevices()} devices`);
    await m.complete('hello', { maxTokens: 3, temperature: 0 });
    await m.dispose();
    check(watch.liveBuffers() === 0, `dispose: ${watch.liveBuffers()} buffers alive right after dispose()`);
  });
  await watched('dispose during a generation', async () => {
    const m = await Model.load(url(TINY), { backend: 'webgpu' });
    const it = m.generate('hello', { maxTokens: 8, temperature: 0, ignoreEos: true });
    await it.next();
    const step = it.next();
    // Let the step reach the GPU before disposing.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await m.dispose();
    await step.catch(() => {});
    await it.return();
  });

  return { log, failures };
}
