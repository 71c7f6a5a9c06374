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

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{expect_webgpu, log, run_js_module, server};

#[wasm_bindgen_test]
async fn model_cache_and_downloads() {
    if expect_webgpu() == Some(true) {
        return log("the cache tests run in the run without WebGPU");
    }
    run_js_module("model cache", "cache_api.js", "runCacheTests", &[server().into()]).await;
}

/// On WebGPU a load from the cache streams into GPU buffers as a network load does:
/// WebAssembly memory does not grow for it and stays far below the model's size.
#[wasm_bindgen_test]
async fn a_cached_load_onto_webgpu_keeps_wasm_memory_flat() {
    if expect_webgpu() != Some(true) {
        return log("needs WebGPU: runs in the run with WebGPU");
    }
    run_js_module("cached load memory", "cache_api.js", "runCachedGpuMemory", &[server().into()]).await;
}

#[wasm_bindgen_test]
#[ignore = "the first of two browser sessions on one profile: scripts/test_browser.sh runs it"]
async fn cache_restart_visit_1() {
    run_js_module("restart, visit 1", "cache_api.js", "runVisit", &[server().into(), 1.into()]).await;
}

#[wasm_bindgen_test]
#[ignore = "the second of two browser sessions on one profile: scripts/test_browser.sh runs it"]
async fn cache_restart_visit_2() {
    run_js_module("restart, visit 2", "cache_api.js", "runVisit", &[server().into(), 2.into()]).await;
}
