//! Typed GPU failures (device_errors.js): OutOfMemoryError for a model too big for the
//! device's limits and the 'auto' CPU fallback after it; DeviceLostError once the
//! device is destroyed.

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{run_js_module, server, webgpu_available};

#[wasm_bindgen_test]
async fn out_of_memory_falls_back_and_device_lost_is_typed() {
    let _ = webgpu_available().await; // checks KINDLING_WEBGPU against the browser
    run_js_module("device error", "device_errors.js", "runDeviceErrorTests", &[server().into()]).await;
}
