//! `kindling-web`: the wasm-bindgen layer between JavaScript and the Kindling engine.
//!
//! Thin by design: it turns JS values into Rust calls and Rust results into JS values,
//! and every Rust error into a JS `Error` with a stable `name` (`error.rs`). The model
//! logic lives in `kindling-model`; the JS API people use is `www/index.js`, which
//! drives these exports:
//!
//! - `capabilities()`: what WebGPU offers here (`caps.rs`);
//! - `createLoader(backend, fileLength, contextLength, modelLength)` → `WebLoader`: fed chunk by
//!   chunk, each chunk going straight into the backend's weight buffers; `finish()` →
//!   `WebModel` (`loader.rs`, backend choice and CPU fallback in `engine.rs`, the CPU
//!   backend's WebAssembly memory check in `memory.rs`);
//! - `WebModel`: info, tokenize/detokenize, chat template, `generate()` →
//!   `WebGeneration` with `next()`, `embed()` for encoders, `dispose()` (`model.rs`,
//!   `generation.rs`, `embeddings.rs`);
//! - `WebInspector`: the fits-check before a download, fed the header's bytes (`inspect.rs`);
//! - `Sha256`: incremental SHA-256 of streamed downloads and cache entries (`digest.rs`);
//! - `kernelChecks()`, `runKernelCheck()`, `benchMatvec()`, `benchDispatch()`: the GPU
//!   test bench's kernel checks (WebGPU against the CPU backend) and micro-benchmarks
//!   (`diagnostics.rs`; only with the `harness` feature, in the wasm examples/gpu-test
//!   loads beside the package's: the package leaves them out, 3% of its wasm).

mod caps;
#[cfg(feature = "harness")]
mod diagnostics;
mod digest;
mod embeddings;
mod engine;
mod error;
mod generation;
mod inspect;
mod loader;
mod memory;
mod model;
mod options;

pub use caps::capabilities;
#[cfg(feature = "harness")]
pub use diagnostics::{bench_dispatch, bench_matvec, kernel_checks, run_kernel_check};
pub use digest::Sha256;
pub use engine::BackendKind;
pub use error::{ErrorName, JsResult};
pub use generation::WebGeneration;
pub use inspect::WebInspector;
pub use loader::{create_loader, WebLoader};
pub use model::WebModel;

/// The threaded build's pool of Web Workers for the CPU kernels (JS:
/// `initThreadPool(n)` → Promise), started by www/index.js before the build's first
/// load; the plain build has no pool and runs the kernels on its one thread.
#[cfg(target_feature = "atomics")]
pub use wasm_bindgen_rayon::init_thread_pool;

use std::sync::Once;

use wasm_bindgen::prelude::*;

/// Bytes of WebAssembly memory the engine has (it only grows: after a load this is
/// the load's peak). For diagnostics and the memory test.
#[wasm_bindgen(js_name = memoryBytes)]
pub fn memory_bytes() -> f64 {
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map_or(0.0, |m| m.buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length() as f64)
}

/// Threads the CPU kernels split their work over: the pool's size, or 1 in the plain
/// build.
#[wasm_bindgen(js_name = cpuThreads)]
pub fn cpu_threads() -> usize {
    kindling_cpu::threads()
}

/// What `createLoader('auto')` would pick, without opening a device or reserving memory:
/// `{ backend: 'webgpu' | 'cpu', adapter, fallbackReason }` (`engine::auto_preference`).
/// www/threads.js asks first, so that a model bound for the CPU goes straight to the
/// threaded build rather than through a plain loader (which reserves the weights' memory).
#[wasm_bindgen(js_name = autoBackend)]
pub async fn auto_backend() -> JsValue {
    init();
    let pick = engine::auto_preference().await;
    let out = js_sys::Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&out, &JsValue::from_str(k), &v);
    };
    set("backend", JsValue::from_str(if pick.gpu { "webgpu" } else { "cpu" }));
    set("adapter", pick.adapter);
    set("fallbackReason", pick.fallback_reason.map_or(JsValue::NULL, JsValue::from));
    out.into()
}

/// Caps the CPU kernels' threads at `n`; in the threaded build, called once its pool
/// has started (before, the kernels keep to one thread).
#[wasm_bindgen(js_name = setCpuThreads)]
pub fn set_cpu_threads(n: usize) {
    kindling_cpu::set_max_threads(n);
}

/// Installs the panic hook once, so a panic we failed to prevent shows its message in
/// the console instead of a bare "unreachable executed".
pub(crate) fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(console_error_panic_hook::set_once);
}
