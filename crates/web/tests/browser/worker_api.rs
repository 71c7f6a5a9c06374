//! `WorkerModel` (www/worker-model.js + www/worker.js) in the browser: the engine in a
//! module worker gives the main thread's greedy ids; break, abort, chat, sources,
//! errors and dispose cross the worker boundary (worker_api.js).

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{run_js_module, server, webgpu_available};

#[wasm_bindgen_test]
async fn worker_model_matches_main_thread() {
    let _ = webgpu_available().await; // checks KINDLING_WEBGPU against the browser
    run_js_module("WorkerModel", "worker_api.js", "runWorkerTests", &[server().into()]).await;
}
