//! Stop that stops (abort.js): a generation aborted mid-reply in `WorkerModel` on a
//! model (Qwen2.5-Coder-0.5B on the CPU; on WebGPU the synthetic tiny-llama, as SwiftShader
//! takes seconds a token) ends at once, the worker sends nothing more of it, and the
//! next call's first token comes within its own time plus the steps already on their
//! way; on the CPU also an abort during a long prefill and the page's own `Model`. The
//! CPU path runs in the run without WebGPU, the WebGPU path in the run with it.

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{run_js_module, server, webgpu_available};

#[wasm_bindgen_test]
async fn abort_mid_reply_frees_the_model_for_the_next_call() {
    let backend = if webgpu_available().await { "webgpu" } else { "cpu" };
    run_js_module(&format!("abort ({backend})"), "abort.js", "runAbortTests", &[server().into(), backend.into()]).await;
}
