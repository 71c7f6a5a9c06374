//! Every GPU kernel path in the browser against the CPU backend: the synthetic models
//! put every weight type through a matmul (tiny-llama) and every gemma3 op (q/k norms,
//! sliding window, post norms, softcap-free gelu) through the forward pass. Prefill
//! (tiled matmul, batched attention) and decode steps (matvec, split attention) both
//! run; one case splits every weight across buffers, one prefills 256 rows (the large
//! batches' dequantized panels). Tolerance as tests/gpu_e2e.rs.

use kindling_cpu::CpuBackend;
use kindling_gpu::{GpuBackend, GpuOptions, GpuStats};
use kindling_model::{Backend, EvalOutput, Evaluated, Model, ModelOptions};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::attention_o;
use crate::support::{fetch_bytes, log, webgpu_available, TINY_GEMMA3, TINY_LLAMA, TINY_LLAMA3};

const LOGIT_TOLERANCE: f32 = 2e-3;
/// With the KV cache in f16, as tests/gpu_e2e.rs's KV_F16_TOLERANCE.
const KV_F16_TOLERANCE: f32 = 0.05;

/// Logits of a prefill of `ids[..prefill]` (every position, which the engine evaluates
/// in batches of 32; or the last, for a prefill in one batch as long as max_batch) and
/// then of each later token fed one by one (last position).
async fn run<B: Backend>(model: &mut Model<B>, ids: &[u32], prefill: usize) -> Vec<Vec<f32>> {
    let vocab = model.config().vocab_size;
    let mut session = model.new_session(ids.len()).expect("session");
    let mut rows = Vec::new();
    let output = if prefill > 32 { EvalOutput::LastLogits } else { EvalOutput::AllLogits };
    match model.eval(&mut session, &ids[..prefill], output).await.expect("prefill") {
        Evaluated::Logits(all) => rows.extend(all.chunks(vocab).map(<[f32]>::to_vec)),
        other => panic!("prefill gave {other:?}"),
    }
    for &id in &ids[prefill..] {
        match model.eval(&mut session, &[id], EvalOutput::LastLogits).await.expect("decode") {
            Evaluated::Logits(row) => rows.push(row),
            other => panic!("decode gave {other:?}"),
        }
    }
    rows
}

/// Logits on WebGPU against the CPU over `tokens` ids, the first `prefill` of them as one
/// batch; returns the GPU backend's stats.
async fn compare_tokens(path: &str, options: GpuOptions, tokens: u32, prefill: usize) -> GpuStats {
    let bytes = fetch_bytes(path).await;
    let tolerance = if options.kv_f16 { KV_F16_TOLERANCE } else { LOGIT_TOLERANCE };
    let gpu = GpuBackend::new(options).await.expect("WebGPU device");
    // The prefill in one batch (the default holds batches to 64 rows).
    let mo = ModelOptions { max_batch: prefill.max(ModelOptions::default().max_batch) };
    let mut gpu = Model::load_from_bytes(gpu, &bytes, mo).expect("load on WebGPU");
    let mut cpu = Model::load_from_bytes(CpuBackend::new(), &bytes, mo).expect("load on CPU");
    let vocab = cpu.config().vocab_size as u32;
    let ids: Vec<u32> = (0..tokens).map(|i| (i * 37 + 11) % vocab).collect();
    let g = run(&mut gpu, &ids, prefill).await;
    let c = run(&mut cpu, &ids, prefill).await;
    assert_eq!(g.len(), c.len());
    let mut worst = 0.0f32;
    for (pos, (gr, cr)) in g.iter().zip(&c).enumerate() {
        for (i, (a, b)) in gr.iter().zip(cr).enumerate() {
            let d = (a - b).abs();
            assert!(d <= tolerance, "{path} pos {pos} id {i}: webgpu {a} cpu {b}");
            worst = worst.max(d);
        }
    }
    log(&format!(
        "{path}: WebGPU vs CPU over {} positions: max |Δ logit| {worst:.2e}; {:?}",
        g.len(),
        gpu.backend().stats()
    ));
    gpu.backend().stats()
}

async fn compare(path: &str, options: GpuOptions) {
    compare_tokens(path, options, 24, 16).await;
}

#[wasm_bindgen_test]
async fn tiny_llama_every_weight_type_matches_cpu() {
    if !webgpu_available().await {
        return log("no WebGPU: kernel comparison skipped (the CPU fallback run)");
    }
    compare(TINY_LLAMA, GpuOptions::default()).await;
}

#[wasm_bindgen_test]
async fn tiny_llama_split_weights_match_cpu() {
    if !webgpu_available().await {
        return;
    }
    compare(TINY_LLAMA, GpuOptions { max_part_bytes: Some(16 << 10), ..GpuOptions::default() }).await;
}

/// The `kvCacheType: 'f16'` load option's cache: keys and values packed as f16 pairs,
/// through the prefill's and the decode steps' attention.
#[wasm_bindgen_test]
async fn tiny_llama_f16_kv_cache_matches_cpu() {
    if !webgpu_available().await {
        return;
    }
    compare(TINY_LLAMA, GpuOptions { kv_f16: true, ..GpuOptions::default() }).await;
}

#[wasm_bindgen_test]
async fn tiny_gemma3_matches_cpu() {
    if !webgpu_available().await {
        return;
    }
    compare(TINY_GEMMA3, GpuOptions::default()).await;
}

/// tiny-llama3's first layer has q and k in Q4_K (v in Q6_K): where the browser runs the
/// batch matmul on integer dot products, the prefill's q and k are one matmul over both
/// weights and its sums are routed to the two outputs (matmul_split_sum_multi).
#[wasm_bindgen_test]
async fn tiny_llama3_prefill_joins_q_and_k_and_matches_cpu() {
    if !webgpu_available().await {
        return;
    }
    let stats = compare_tokens(TINY_LLAMA3, GpuOptions::default(), 24, 16).await;
    if stats.int_batch_matmuls > 0 {
        assert!(stats.multi_batch_matmuls > 0, "{stats:?}");
    }
}

/// A prefill of 256 rows in one batch (tiny-llama's whole context, WIDE_MIN_ROWS) takes
/// the large batches' path, every weight dequantized into f32 panels and multiplied by
/// matmul_wide (`wide_every_weight`: these weights are small), each layer's gate and up
/// as one gated panel: 6 panel matmuls a layer, 2 layers; the last position's logits,
/// which every row's keys and values reach, against the CPU's.
#[wasm_bindgen_test]
async fn tiny_llama_long_prefill_as_dequantized_panels_matches_cpu() {
    if !webgpu_available().await {
        return;
    }
    let options = GpuOptions { wide_every_weight: true, ..GpuOptions::default() };
    let stats = compare_tokens(TINY_LLAMA, options, 256, 256).await;
    assert!(stats.wide_batch_matmuls >= 12, "{stats:?}");
}

/// A decode step whose attention splits over its 300-position context (longer than the
/// tiny models' whole context), then the o projection and its residual add, through the
/// backend itself (tests/shared/attention_o.rs, as tests/gpu_kernels.rs runs it): the
/// browser's default merges the splits in the o projection's integer-dot matvec
/// (matvec_merged) where the device has integer dot products and head_dim is a multiple
/// of 16, else attn_combine runs; both settings against the CPU.
#[wasm_bindgen_test]
async fn decode_attention_splits_merge_in_the_o_projection_and_match_cpu() {
    if !webgpu_available().await {
        return;
    }
    assert!(GpuOptions::default().merge_splits_in_matvec, "a browser merges in the matvec by default");
    for on in [false, true] {
        let options = GpuOptions { merge_splits_in_matvec: on, ..GpuOptions::default() };
        let mut b = GpuBackend::new(options).await.expect("WebGPU device");
        let int_dot = b.shader_features().int_runs > 0;
        for (i, case) in attention_o::CASES.iter().enumerate() {
            let &(ty, heads, kv, hd, merges) = case;
            let x = attention_o::inputs(case, 900 + i as u64);
            let want = attention_o::run(&mut CpuBackend::new(), ty, &x).await;
            let before = b.stats().merged_matvecs;
            let got = attention_o::run(&mut b, ty, &x).await;
            let what = format!("{ty:?} o after attention heads {heads}/{kv} × {hd} (merge option {on})");
            let merged = on && merges && int_dot;
            assert_eq!(b.stats().merged_matvecs - before, merged as u64, "{what}: matvecs that merged");
            let mut wf = vec![0.0; attention_o::O_ROWS * heads * hd];
            kindling_gguf::dequantize(ty, &x.w, &mut wf).expect("dequantize");
            let da = attention_o::check(&what, &got, &want, &wf, 2e-5, 1e-5);
            log(&format!("{what}: attention max |Δ| {da:.2e}, merged: {merged}"));
        }
    }
}
