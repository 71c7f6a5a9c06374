//! The fits-check before the download (www/inspect.js, crates/web/src/inspect.rs):
//! `Model.inspect` of SmolLM2 and Qwen2.5-Coder-1.5B over the test server against the
//! PyPI `gguf` reader's facts (tests/fixtures/inspect_refs.json), the bytes it fetched,
//! the cache, hub URLs, a server ignoring Range, errors, and `Model.load` /
//! `WorkerModel.load` refusing with lowered limits when the header arrives
//! (inspect.js). Runs in both browser runs: without WebGPU the CPU checks, with WebGPU
//! also the adapter's limits (SwiftShader).

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{run_js_module, server, webgpu_available};

#[wasm_bindgen_test]
async fn inspect_and_fits_check_before_download() {
    let webgpu = webgpu_available().await;
    run_js_module("inspect", "inspect.js", "runInspectTests", &[server().into(), webgpu.into()]).await;
}
