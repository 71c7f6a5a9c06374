//! The real models, streamed from the local server: greedy ids equal to the native
//! engine's (tests/fixtures/browser_greedy.json, made by the CLI on the CPU backend)
//! up to the first step whose top-1/top-2 margin is below 0.1. SmolLM2 (3 prompts × 8
//! tokens), Gemma 3 (2 × 8) and Qwen2.5-Coder-0.5B (2 × 8) run on the CPU, and all three
//! on WebGPU (Qwen2.5-0.5B on SwiftShader only with its weights split, in large_models.rs:
//! see `qwen05_greedy_on_webgpu_matches_native`).
//!
//! SwiftShader's WebGPU takes about 40–90 s per SmolLM2 token on this 2-core machine
//! (`smollm2_webgpu_step_timings`, ignored by default, measures it), so the WebGPU case
//! checks the prefill and first greedy token of one prompt per model unless the build
//! sets `KINDLING_WEBGPU_TOKENS` (e.g. 8 on a machine with a real GPU); Qwen2.5-0.5B's
//! prefill of 24 tokens and first token took 63 s on a quiet machine. On a real GPU the
//! same package was checked over 14 prompts × 32 tokens of both models through Dawn,
//! Chrome's WebGPU library (bench/dawn_greedy.mjs, bench/results/dawn-h100.md).

use serde_json::Value;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{
    expect_webgpu, generate, get, log, now_ms, obj, stream_load, webgpu_available, GEMMA3, QWEN05, SMOLLM2,
};

const FIXTURE: &str = include_str!("../../../../tests/fixtures/browser_greedy.json");
const NEAR_TIE: f64 = 0.1;

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().map(|a| a.iter().filter_map(|x| x.as_u64().map(|n| n as u32)).collect()).unwrap_or_default()
}

/// Greedy ids of the first `cases` fixture prompts, `max_tokens` each (at most the
/// fixture's), against the native engine's.
async fn greedy_matches_native(key: &str, path: &str, backend: &str, cases: usize, max_tokens: usize) {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("fixture JSON");
    let model_fx = &fixture["models"][key];
    let max_tokens = fixture["max_tokens"].as_u64().map_or(max_tokens, |n| (n as usize).min(max_tokens));
    let (mut model, load_ms) = stream_load(path, backend, Some(256)).await;
    let info = model.info();
    log(&format!("{key} on {backend}: loaded in {load_ms:.0} ms, info {}", crate::support::json(&info)));
    if key == "qwen2.5-0.5b" {
        check_qwen05_info(&info, 256);
    }
    let options =
        obj(&[("temperature", 0.into()), ("maxTokens", JsValue::from(max_tokens as u32)), ("seed", 1.into())]);
    for case in model_fx["cases"].as_array().expect("cases").iter().take(cases) {
        let name = case["name"].as_str().unwrap_or("?");
        let prompt = case["prompt"].as_str().expect("prompt");
        let want_prompt = ids(&case["prompt_token_ids"]);
        let prompt_ids = model.encode_prompt(prompt, false).expect("encodePrompt");
        assert_eq!(prompt_ids, want_prompt, "{key}/{name}: prompt tokenization differs from the native CLI");
        let start = now_ms();
        let (got, finish) = generate(&mut model, prompt_ids, &options).await;
        let ms = now_ms() - start;
        let mut want = ids(&case["token_ids"]);
        want.truncate(max_tokens);
        let margins: Vec<f64> =
            case["margins"].as_array().map(|m| m.iter().filter_map(Value::as_f64).collect()).unwrap_or_default();
        // Steps before the first near-tie must agree; the near-tie step itself may not.
        let checked = margins.iter().position(|&m| m < NEAR_TIE).unwrap_or(want.len()).min(want.len());
        assert!(got.len() >= checked, "{key}/{name}: only {} tokens ({finish})", got.len());
        assert_eq!(
            &got[..checked],
            &want[..checked],
            "{key}/{name} on {backend}: greedy ids differ from the native engine"
        );
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

/// Greedy tokens a WebGPU case checks: 1 (SwiftShader, above) unless the build sets
/// `KINDLING_WEBGPU_TOKENS`.
fn webgpu_tokens() -> usize {
    option_env!("KINDLING_WEBGPU_TOKENS").and_then(|n| n.parse().ok()).unwrap_or(1)
}

/// `cases` prompts on WebGPU: on SwiftShader only the prefill and first token of the
/// first (minutes, above), unless the build sets `KINDLING_WEBGPU_TOKENS`.
async fn greedy_on_webgpu(key: &str, path: &str, cases: usize) {
    if !webgpu_available().await {
        return log(&format!("no WebGPU: {key} on WebGPU skipped"));
    }
    let tokens = webgpu_tokens();
    greedy_matches_native(key, path, "webgpu", if tokens > 1 { cases } else { 1 }, tokens).await;
}

#[wasm_bindgen_test]
async fn smollm2_greedy_on_webgpu_matches_native() {
    greedy_on_webgpu("smollm2", SMOLLM2, 3).await;
}

#[wasm_bindgen_test]
async fn gemma3_greedy_on_webgpu_matches_native() {
    greedy_on_webgpu("gemma3", GEMMA3, 2).await;
}

#[wasm_bindgen_test]
async fn smollm2_greedy_on_cpu_matches_native() {
    // 'auto': on SwiftShader and without WebGPU alike this is the CPU path.
    greedy_matches_native("smollm2", SMOLLM2, "auto", 3, 8).await;
}

#[wasm_bindgen_test]
async fn gemma3_greedy_on_cpu_matches_native() {
    // Gemma 3 (253 MB, 262k vocabulary) on the CPU path once: in the run without WebGPU.
    if expect_webgpu() == Some(true) {
        return log("Gemma 3 greedy runs in the CPU-fallback suite");
    }
    greedy_matches_native("gemma3", GEMMA3, "cpu", 2, 8).await;
}

/// Where the time of one SmolLM2 token goes on WebGPU (diagnostics; prints only).
/// Measured on SwiftShader here: load 2.4 s, then ~85–98 s per single-token eval
/// (245 dispatches, one submit, 4 bytes read back) and 113 s for a 4-token batch.
#[wasm_bindgen_test]
#[ignore = "minutes on SwiftShader: run with --include-ignored"]
async fn smollm2_webgpu_step_timings() {
    use kindling_gpu::{GpuBackend, GpuOptions};
    use kindling_model::{EvalOutput, Loader, Model, ModelOptions};
    if !webgpu_available().await {
        return;
    }
    let t = now_ms();
    let bytes = crate::support::fetch_bytes(SMOLLM2).await;
    let mut backend = GpuBackend::new(GpuOptions::default()).await.expect("gpu");
    let mut loader = Loader::new(Some(bytes.len() as u64));
    for c in bytes.chunks(1 << 20) {
        loader.feed(&mut backend, c).expect("feed");
    }
    drop(bytes);
    let mut model = Model::new(backend, loader.finish().expect("finish"), ModelOptions::default()).expect("model");
    log(&format!("smollm2 webgpu: load {:.0} ms", now_ms() - t));
    let mut session = model.new_session(64).expect("session");
    for (what, ids) in
        [("1 token", vec![1u32]), ("1 token", vec![2]), ("4 tokens", vec![3, 4, 5, 6]), ("1 token", vec![7])]
    {
        let t = now_ms();
        let r = model.eval(&mut session, &ids, EvalOutput::LastArgmax).await.expect("eval");
        log(&format!("smollm2 webgpu: eval {what}: {:.0} ms → {r:?}; {:?}", now_ms() - t, model.backend().stats()));
    }
}

/// `model.info` of Qwen2.5-Coder-0.5B: `parameters` counts every weight value in the
/// file, as llama.cpp does (this file stores output.weight apart from token_embd, so
/// 630M rather than the 494M of the tied HF model).
fn check_qwen05_info(info: &JsValue, context: u32) {
    let want: [(&str, JsValue); 10] = [
        ("architecture", "qwen2".into()),
        ("name", "Qwen2.5 Coder 0.5B Instruct AWQ".into()),
        ("parameters", 630_167_424.into()),
        ("quantization", "Q4_K_M".into()),
        ("contextLength", context.into()),
        ("trainedContextLength", 32768.into()),
        ("dataBytes", 485_452_288.into()),
        ("vocabSize", 151_936.into()),
        ("eosTokenId", 151_645.into()),
        ("hasChatTemplate", true.into()),
    ];
    for (key, value) in want {
        let got = get(info, key);
        assert!(js_sys::Object::is(&got, &value), "qwen2.5-0.5b info.{key}: {got:?}, expected {value:?}");
    }
}

#[wasm_bindgen_test]
async fn qwen05_greedy_on_cpu_matches_native() {
    // Qwen2.5-Coder-0.5B (491 MB, 151,936-token vocabulary) on the CPU once: in the run
    // without WebGPU.
    if expect_webgpu() == Some(true) {
        return log("Qwen2.5-0.5B greedy on the CPU runs in the CPU-fallback suite");
    }
    greedy_matches_native("qwen2.5-0.5b", QWEN05, "cpu", 2, 8).await;
}

/// The 0.5B's greedy tokens on WebGPU with the device's own limits (no split), where
/// the build sets `KINDLING_WEBGPU_TOKENS` (2 prompts, a real GPU). On SwiftShader (one
/// token, ~100 s) it would check what `large_models::qwen05_split_weights_on_webgpu_match_native`
/// checks: the same prompt's prefill and first token on WebGPU, there with the 138 MiB
/// output.weight and the token embedding split across 64 MiB bindings; a tensor over
/// 128 MiB in one binding is Gemma 3's tied 178 MB embedding (`gemma3_greedy_on_webgpu_matches_native`).
#[wasm_bindgen_test]
async fn qwen05_greedy_on_webgpu_matches_native() {
    if webgpu_tokens() == 1 {
        return log("Qwen2.5-0.5B's first token on WebGPU: large_models::qwen05_split_weights_on_webgpu_match_native");
    }
    greedy_on_webgpu("qwen2.5-0.5b", QWEN05, 2).await;
}
