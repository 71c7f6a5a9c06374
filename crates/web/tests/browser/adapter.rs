//! The adapter through wgpu's BROWSER_WEBGPU backend, and `capabilities()`.

use kindling_gpu::{GpuBackend, GpuOptions};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{get, json, log, webgpu_available};

#[wasm_bindgen_test]
async fn capabilities_and_adapter_through_browser_webgpu() {
    let caps = kindling_web::capabilities().await.expect("capabilities");
    log(&format!("capabilities: {}", json(&caps)));
    assert_eq!(get(&caps, "simd128").as_bool(), Some(true), "the test build has +simd128 (.cargo/config.toml)");
    let have = webgpu_available().await;
    let gpu = GpuBackend::new(GpuOptions::default()).await;
    if have {
        let gpu = gpu.unwrap_or_else(|e| panic!("WebGPU adapter present but the device failed: {e}"));
        let a = gpu.adapter();
        log(&format!("wgpu adapter: {a}"));
        assert_eq!(a.backend, "BrowserWebGpu");
        assert!(a.max_storage_buffer_binding_size >= 128 << 20);
        assert!(get(&caps, "limits").is_object());
        assert!(js_sys::Array::is_array(&get(&caps, "features")));
    } else {
        let e = gpu.err().expect("no adapter: GpuBackend::new must fail (without panicking)");
        log(&format!("without WebGPU, GpuBackend::new fails cleanly: {e}"));
        assert!(get(&caps, "reason").as_string().is_some_and(|r| !r.is_empty()));
    }
}
