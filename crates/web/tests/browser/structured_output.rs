//! Structured output through the npm package (structured_output.js): JSON schemas, OpenAI's
//! `response_format` and a regex on the CPU backend, on the page and in a WorkerModel;
//! bad constraints reject with InvalidRequestError. It runs in the suite without WebGPU only:
//! the CPU path is the same in both, and the WebGPU suite is the longer of the two that
//! scripts/test_web.sh runs side by side.

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{log, run_js_module, server, webgpu_available};

#[wasm_bindgen_test]
async fn structured_output_json_schema_and_response_format() {
    if webgpu_available().await {
        return log("structured output (CPU backend) runs in the suite without WebGPU");
    }
    run_js_module("structured output", "structured_output.js", "runStructuredOutputTests", &[server().into()]).await;
}
