//! OpenAI tool calls through the npm package (tool_calls.js): `chat.completions.create`
//! with `tools` on the real Qwen2.5-Coder-0.5B, greedy, on the CPU backend: a required
//! call whose arguments fit the tool's schema, the same request streamed as
//! `delta.tool_calls`, a tool result going back for a text answer, and a bad
//! `tool_choice` rejected with InvalidRequestError before any token (on the page and in
//! a WorkerModel).
//!
//! Only in the run without WebGPU: the calls are the host's work (template, grammar,
//! parsing), the same on either backend, and on SwiftShader one token of this model takes
//! about 90 s.

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{expect_webgpu, log, run_js_module, server, webgpu_available};

#[wasm_bindgen_test]
async fn tool_calls_through_chat_completions_on_cpu() {
    if expect_webgpu() == Some(true) {
        log("tool calls: skipped in the WebGPU run (the CPU run covers them)");
        return;
    }
    let _ = webgpu_available().await; // checks KINDLING_WEBGPU against the browser
    run_js_module("tool calls", "tool_calls.js", "runToolCallTests", &[server().into()]).await;
}
