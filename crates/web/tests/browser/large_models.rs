//! Qwen2.5-Coder 0.5B (491 MB) and 1.5B (1.1 GB) through the JS API, each scenario in a
//! module worker with a fresh WebAssembly instance (large_models.js):
//! - the 1.5B streams from its URL onto WebGPU with peak wasm memory within 64 MiB plus
//!   the tokenizer;
//! - the 1.5B loads on the CPU backend (WebAssembly memory holds its weights) and its
//!   greedy ids equal the native engine's;
//! - models that cannot fit WebAssembly memory are refused with an OutOfMemoryError
//!   naming their need before their weights download;
//! - the 0.5B on a device whose storage bindings hold 64 MiB: its 138 MiB output.weight
//!   is split across buffers and the first greedy token equals native.

use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{expect_webgpu, log, run_js_module, server, webgpu_available};

const FIXTURE: &str = include_str!("../../../../tests/fixtures/browser_greedy.json");

/// Runs `large_models.js`'s scenario `name` in its own worker.
async fn scenario(name: &str, args: &[JsValue]) {
    let args: js_sys::Array = args.iter().collect();
    run_js_module(name, "large_models.js", "inWorker", &[server().into(), name.into(), args.into()]).await;
}

#[wasm_bindgen_test]
async fn qwen15_streams_onto_webgpu_within_wasm_memory_budget() {
    if !webgpu_available().await {
        return log("no WebGPU: the 1.5B WebGPU load is skipped");
    }
    scenario("qwen15WebgpuLoad", &[]).await;
}

#[wasm_bindgen_test]
async fn qwen05_split_weights_on_webgpu_match_native() {
    if !webgpu_available().await {
        return log("no WebGPU: the split-weight test is skipped");
    }
    scenario("qwen05SplitOnWebgpu", &[FIXTURE.into()]).await;
}

#[wasm_bindgen_test]
async fn qwen15_on_cpu_loads_and_matches_native() {
    // 1.1 GB on the CPU once: in the run without WebGPU.
    if expect_webgpu() == Some(true) {
        return log("the 1.5B CPU load runs in the CPU-fallback suite");
    }
    scenario("qwen15Cpu", &[FIXTURE.into()]).await;
}

#[wasm_bindgen_test]
async fn cpu_refuses_models_too_large_for_wasm_memory_before_download() {
    scenario("cpuRefusals", &[]).await;
}
