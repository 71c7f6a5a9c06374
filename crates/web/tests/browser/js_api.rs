//! The npm package's JS API (www/index.js) in the same browser: imported from the model
//! server (it needs `npm run build` to have put the wasm in www/wasm/), it runs with its
//! own WebAssembly instance, so its memory figure is that of a fresh engine.

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{run_js_module, server, webgpu_available};

#[wasm_bindgen_test]
async fn js_api_load_generate_abort_errors() {
    let _ = webgpu_available().await; // checks KINDLING_WEBGPU against the browser
    let fixture = include_str!("../../../../tests/fixtures/browser_greedy.json");
    run_js_module("JS API", "js_api.js", "runApiTests", &[server().into(), fixture.into()]).await;
}
