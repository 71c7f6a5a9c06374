//! The npm package's JS API (www/index.js) in the same browser: imported from the model
//! server (it needs `npm run build` to have put the wasm in www/wasm/), it runs with its
//! own WebAssembly instance, so its memory figure is that of a fresh engine.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{get, log, server, webgpu_available};

#[wasm_bindgen(module = "/tests/browser/js_api.js")]
extern "C" {
    #[wasm_bindgen(js_name = runApiTests)]
    fn run_api_tests(base: &str, fixture: &str) -> js_sys::Promise;
}

#[wasm_bindgen_test]
async fn js_api_load_generate_abort_errors() {
    let _ = webgpu_available().await; // checks KINDLING_WEBGPU against the browser
    let fixture = include_str!("../../../../tests/fixtures/browser_greedy.json");
    let report = JsFuture::from(run_api_tests(server(), fixture)).await.unwrap_or_else(|e| {
        panic!("the JS API tests threw: {}", crate::support::json(&e));
    });
    for line in js_sys::Array::from(&get(&report, "log")).iter() {
        log(&format!("[js] {}", line.as_string().unwrap_or_default()));
    }
    let failures: Vec<String> = js_sys::Array::from(&get(&report, "failures")).iter().filter_map(|v| v.as_string()).collect();
    assert!(failures.is_empty(), "JS API failures:\n{}", failures.join("\n"));
}
