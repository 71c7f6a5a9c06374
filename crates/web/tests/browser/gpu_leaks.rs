//! Aborted loads and disposed models leave no WebGPU buffers or devices behind
//! (gpu_leaks.js, counted by wrapping the browser's WebGPU methods).

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{run_js_module, server, webgpu_available};

#[wasm_bindgen_test]
async fn abort_and_dispose_leave_no_gpu_buffers() {
    let _ = webgpu_available().await; // checks KINDLING_WEBGPU against the browser
    run_js_module("GPU leak", "gpu_leaks.js", "runGpuLeakTests", &[server().into()]).await;
}
