//! Every browser kernel variant's shader module compiles in this browser's own WebGPU:
//! Chromium's WGSL compiler (tint), each module inside its own error scopes
//! (`GpuBackend::check_shader_modules`: in a browser these errors arrive asynchronously).
//! Pipelines are not created here (on SwiftShader each is a ~1.3 s machine-code compile:
//! 309 s for all of them); the kernels the models use are run by the other tests.
//! The variants are those `tests/gpu_kernels.rs` validates with naga: every kernel of
//! every weight type (`KernelKey::all`), plain and with an f16 KV cache.

use kindling_gguf::GgmlType;
use kindling_gpu::{GpuBackend, GpuOptions, KernelKey, ShaderFeatures};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{log, now_ms, webgpu_available};

#[wasm_bindgen_test]
async fn every_browser_kernel_variant_compiles_in_chromium() {
    if !webgpu_available().await {
        return log("no WebGPU: the browser's shader compilation is not checked (the CPU fallback run)");
    }
    let start = now_ms();
    let plain = KernelKey::all(&GgmlType::ALL);
    // The kv_f16 device recompiles only the kernels that have an f16-KV form.
    let f16_kv = ShaderFeatures { kv_f16: true, ..ShaderFeatures::default() };
    let kv_keys: Vec<KernelKey> = plain.iter().copied().filter(|k| k.with_features(f16_kv).features.kv_f16).collect();
    let mut total = 0;
    for (kv_f16, keys) in [(false, &plain), (true, &kv_keys)] {
        let mut gpu = GpuBackend::new(GpuOptions { kv_f16, ..GpuOptions::default() }).await.expect("WebGPU device");
        let n = gpu.check_shader_modules(keys).await.unwrap_or_else(|e| panic!("kv_f16={kv_f16}: {e}"));
        log(&format!("kv_f16={kv_f16}: {n} shader modules compiled ({:?})", gpu.shader_features()));
        total += n;
    }
    assert!(total > 50, "only {total} shader modules for {} kernels", plain.len());
    log(&format!("{total} browser kernel variants compiled in {:.1} s", (now_ms() - start) / 1000.0));
}
