//! Browser tests of the web crate, run by `wasm-pack test --headless --chrome crates/web`
//! (scripts/test_browser.sh starts the model server they fetch from and runs them twice:
//! with WebGPU, then with WebGPU disabled to exercise the CPU fallback).
//!
//! Compile-time settings (environment variables of the build):
//! - `KINDLING_MODEL_SERVER`: base URL of `tests/scripts/serve.py` (default
//!   http://127.0.0.1:8631), which serves the repository (models under `.cache/`).
//! - `KINDLING_WEBGPU`: `on` (WebGPU must work: GPU tests run and fail if it does
//!   not) or `off` (WebGPU must be unavailable: fallback tests). Unset: whatever the
//!   browser offers.

#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "browser/support.rs"]
mod support;
// A backend script shared with the native kernel tests.
#[path = "../../../tests/shared/attention_o.rs"]
mod attention_o;

#[path = "browser/abort.rs"]
mod abort;
#[path = "browser/adapter.rs"]
mod adapter;
#[path = "browser/cache_api.rs"]
mod cache_api;
#[path = "browser/device_errors.rs"]
mod device_errors;
#[path = "browser/embeddings.rs"]
mod embeddings;
#[path = "browser/errors.rs"]
mod errors;
#[path = "browser/gpu_leaks.rs"]
mod gpu_leaks;
#[path = "browser/inspect.rs"]
mod inspect;
#[path = "browser/js_api.rs"]
mod js_api;
#[path = "browser/kernels.rs"]
mod kernels;
#[path = "browser/large_models.rs"]
mod large_models;
#[path = "browser/real_models.rs"]
mod real_models;
#[path = "browser/shaders.rs"]
mod shaders;
#[path = "browser/structured_output.rs"]
mod structured_output;
#[path = "browser/tool_calls.rs"]
mod tool_calls;
#[path = "browser/worker_api.rs"]
mod worker_api;
