//! The real models, streamed from the local server: greedy ids equal to the native
//! engine's (tests/fixtures/browser_greedy.json, made by the CLI on the CPU backend)
//! up to the first step whose top-1/top-2 margin is below 0.1. SmolLM2 runs on WebGPU
//! (SwiftShader is slow: 3 prompts × 8 tokens) and on the CPU; Gemma 3 on the CPU path.

use serde_json::Value;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{expect_webgpu, generate, log, now_ms, obj, stream_load, webgpu_available, GEMMA3, SMOLLM2};

const FIXTURE: &str = include_str!("../../../../tests/fixtures/browser_greedy.json");
const NEAR_TIE: f64 = 0.1;

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().map(|a| a.iter().filter_map(|x| x.as_u64().map(|n| n as u32)).collect()).unwrap_or_default()
}

async fn greedy_matches_native(key: &str, path: &str, backend: &str) {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("fixture JSON");
    let model_fx = &fixture["models"][key];
    let max_tokens = fixture["max_tokens"].as_u64().unwrap_or(8);
    let (mut model, load_ms) = stream_load(path, backend, Some(256)).await;
    let info = model.info();
    log(&format!("{key} on {backend}: loaded in {load_ms:.0} ms, info {}", crate::support::json(&info)));
    let options = obj(&[("temperature", 0.into()), ("maxTokens", JsValue::from(max_tokens as u32)), ("seed", 1.into())]);
    for case in model_fx["cases"].as_array().expect("cases") {
        let name = case["name"].as_str().unwrap_or("?");
        let prompt = case["prompt"].as_str().expect("prompt");
        let want_prompt = ids(&case["prompt_token_ids"]);
        let prompt_ids = model.encode_prompt(prompt, false).expect("encodePrompt");
        assert_eq!(prompt_ids, want_prompt, "{key}/{name}: prompt tokenization differs from the native CLI");
        let start = now_ms();
        let (got, finish) = generate(&mut model, prompt_ids, &options).await;
        let ms = now_ms() - start;
        let want = ids(&case["token_ids"]);
        let margins: Vec<f64> = case["margins"].as_array().map(|m| m.iter().filter_map(Value::as_f64).collect()).unwrap_or_default();
        // Steps before the first near-tie must agree; the near-tie step itself may not.
        let checked = margins.iter().position(|&m| m < NEAR_TIE).unwrap_or(want.len());
        assert!(got.len() >= checked.min(want.len()), "{key}/{name}: only {} tokens ({finish})", got.len());
        assert_eq!(&got[..checked], &want[..checked], "{key}/{name} on {backend}: greedy ids differ from the native engine");
        log(&format!(
            "{key}/{name} on {backend}: {} tokens in {ms:.0} ms ({:.2} tok/s incl. prefill of {}), equal to native for {checked}/{} steps",
            got.len(),
            got.len() as f64 * 1e3 / ms.max(1.0),
            want_prompt.len(),
            want.len()
        ));
    }
    model.dispose();
}

#[wasm_bindgen_test]
async fn smollm2_greedy_on_webgpu_matches_native() {
    if !webgpu_available().await {
        return log("no WebGPU: SmolLM2 on WebGPU skipped");
    }
    greedy_matches_native("smollm2", SMOLLM2, "webgpu").await;
}

#[wasm_bindgen_test]
async fn smollm2_greedy_on_cpu_matches_native() {
    // 'auto': on SwiftShader and without WebGPU alike this is the CPU path.
    greedy_matches_native("smollm2", SMOLLM2, "auto").await;
}

#[wasm_bindgen_test]
async fn gemma3_greedy_on_cpu_matches_native() {
    // Gemma 3 (253 MB, 262k vocabulary) on the CPU path once: in the run without WebGPU.
    if expect_webgpu() == Some(true) {
        return log("Gemma 3 greedy runs in the CPU-fallback suite");
    }
    greedy_matches_native("gemma3", GEMMA3, "cpu").await;
}
