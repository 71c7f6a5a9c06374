//! Structured output through the npm package (structured_output.js): JSON schemas, OpenAI's
//! `response_format` and a regex on the CPU backend, on the page and in a WorkerModel;
//! bad constraints reject with InvalidRequestError.

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{run_js_module, server, webgpu_available};

#[wasm_bindgen_test]
async fn structured_output_json_schema_and_response_format() {
    let _ = webgpu_available().await; // checks KINDLING_WEBGPU against the browser
    run_js_module("structured output", "structured_output.js", "runStructuredOutputTests", &[server().into()]).await;
}
