//! Aborted loads and disposed models leave no WebGPU buffers or devices behind
//! (gpu_leaks.js, counted by wrapping the browser's WebGPU methods).

use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{run_js_suite, server, webgpu_available};

#[wasm_bindgen(module = "/tests/browser/gpu_leaks.js")]
extern "C" {
    #[wasm_bindgen(js_name = runGpuLeakTests)]
    fn run_gpu_leak_tests(base: &str) -> js_sys::Promise;
}

#[wasm_bindgen_test]
async fn abort_and_dispose_leave_no_gpu_buffers() {
    let _ = webgpu_available().await; // checks KINDLING_WEBGPU against the browser
    run_js_suite("GPU leak", run_gpu_leak_tests(server())).await;
}
