//! The persistent model cache and the download path (www/cache.js, www/download.js):
//! second loads from the cache, resumed downloads, corrupted entries, integrity, quota,
//! hub URLs, the management API and WorkerModel, against tests/scripts/serve.py
//! (cache_api.js). The download path does not depend on the backend, so the suite runs
//! once, in the run without WebGPU (scripts/test_browser.sh runs the browser tests with
//! WebGPU and without).
//!
//! The restart test is two ignored tests, run by scripts/test_browser.sh in two browser
//! sessions on one profile directory and one page origin: `cache_restart_visit_1`, then
//! `cache_restart_visit_2` after the browser has been closed and started again.

use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{expect_webgpu, log, run_js_suite, server};

#[wasm_bindgen(module = "/tests/browser/cache_api.js")]
extern "C" {
    #[wasm_bindgen(js_name = runCacheTests)]
    fn run_cache_tests(base: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = runCachedGpuMemory)]
    fn run_cached_gpu_memory(base: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = runVisit)]
    fn run_visit(base: &str, visit: u32) -> js_sys::Promise;
}

#[wasm_bindgen_test]
async fn model_cache_and_downloads() {
    if expect_webgpu() == Some(true) {
        return log("the cache tests run in the run without WebGPU");
    }
    run_js_suite("model cache", run_cache_tests(server())).await;
}

/// On WebGPU a load from the cache streams into GPU buffers as a network load does:
/// WebAssembly memory does not grow for it and stays far below the model's size.
#[wasm_bindgen_test]
async fn a_cached_load_onto_webgpu_keeps_wasm_memory_flat() {
    if expect_webgpu() != Some(true) {
        return log("needs WebGPU: runs in the run with WebGPU");
    }
    run_js_suite("cached load memory", run_cached_gpu_memory(server())).await;
}

#[wasm_bindgen_test]
#[ignore = "the first of two browser sessions on one profile: scripts/test_browser.sh runs it"]
async fn cache_restart_visit_1() {
    run_js_suite("restart, visit 1", run_visit(server(), 1)).await;
}

#[wasm_bindgen_test]
#[ignore = "the second of two browser sessions on one profile: scripts/test_browser.sh runs it"]
async fn cache_restart_visit_2() {
    run_js_suite("restart, visit 2", run_visit(server(), 2)).await;
}
