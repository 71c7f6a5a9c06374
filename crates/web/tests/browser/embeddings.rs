//! Embeddings through the npm package (embeddings.js): nomic-embed-text-v1.5 against
//! llama.cpp's vectors (cosine >= 0.999 per input) through `Model` and `WorkerModel`,
//! with the refusals, on WebGPU in the WebGPU run and on the CPU backend in the run
//! without it.
//!
//! The long input (2,031 tokens, near the context) and the truncated one over it run
//! only with KINDLING_EMBED_LONG=on at build time: on the CPU backend in Chromium (one
//! thread of WebAssembly, two cores shared) the suite with them ran past the runner's
//! 600 s quiet limit, which CI cannot spend.

use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{run_js_module, server, webgpu_available};

const MODEL: &str = ".cache/models/nomic-embed-text-v1.5.f16.gguf";
const REFERENCE: &str = "tests/fixtures/embed_ref_nomic.json";

#[wasm_bindgen_test]
async fn embeddings_match_llama_cpp() {
    let backend = if webgpu_available().await { "webgpu" } else { "cpu" };
    let long = option_env!("KINDLING_EMBED_LONG") == Some("on");
    let args = [server().into(), backend.into(), long.into(), MODEL.into(), REFERENCE.into()];
    run_js_module("embeddings", "embeddings.js", "runEmbeddingTests", &args).await;
}
