//! Fusion as a tested contract: the exact dispatches the GPU backend records for a
//! decoded token and for a prefill of `PROMPT` tokens, for every architecture (the tiny
//! synthetic models and the four real ones), written as a formula of the layer count.
//! The backend fuses by recognising the op order the forward pass emits (documented on
//! `kindling_model::Backend`); a change to either that breaks a fusion adds dispatches
//! and fails here, not only in a benchmark.
//!
//! Options are pinned (`pinned`) so the figures do not depend on the adapter or the
//! shapes: no cooperative matrices (they fuse a prefill's gate/up/activation), no split
//! dot products in batch matmuls (`allow_split_k`: whether a matmul splits depends on
//! its shape, and each that does adds a dispatch summing its spans), no integer-dot batch
//! matmul (it adds a quantize_runs dispatch per input, where its weight type takes it;
//! tests/gpu_kernels.rs counts those), no dequantized panels (`allow_wide_batch`: a panel
//! adds a dequant_rows dispatch, by shape; PROMPT is below their WIDE_MIN_ROWS anyway),
//! weights split into parts of at most 128 MiB
//! (lavapipe's binding limit, so Gemma 3's and Qwen2.5-0.5B's vocabulary-sized tables are
//! two parts everywhere), f32 KV cache. Subgroups, f16 and the integer-dot decode matvecs
//! choose among variants of the same dispatches and do not change the counts. The fused
//! decode kernels need 9 and 10 storage buffers per stage (lavapipe, and desktop GPUs,
//! have more).
//!
//! Decode, per layer (one row; q and k of one type, gate and up of one type, as in
//! the real models; the tiny ones mix types, see below):
//!   1 matvec_multi_normed  attention norm + q/k/v projections
//!   1 attention_rope       q/k biases or norms, rotation, KV store and attention
//!                          (past SPLIT_MIN_SPAN positions it splits, and the o
//!                          projection's matvec merges the splits, matvec_merged; +1
//!                          attn_combine where it cannot: not here, see
//!                          tests/gpu_kernels.rs)
//!   1 matvec + add         output projection with its residual add
//!   1 matvec_gated_normed  FFN norm + gate/up + activation
//!   1 matvec + add         down projection with its residual add
//! = 5; Gemma's post-norms take the projection's add into rms_norm_add: 2 more (7).
//! Around the layers: embed (one per part of the table), the output norm (fused into
//! the output matvec below NORM_FUSE_MAX_ROWS rows, else on its own), the output matvec
//! (one per part), Gemma 2's soft cap, and the argmax (one dispatch; top_k_chunks +
//! top_k_merge past TOP_K_CHUNK values).
//!
//! Prefill of PROMPT > MATVEC_MAX_ROWS rows, per layer:
//!   1 rms_norm, 3 matmul_tiled (q, k, v: batch matmuls do not group), 1 qk_rope (with
//!   the KV store), 1 attention_tiled (attention where head_dim > 128: Gemma 3), 1
//!   matmul_tiled + add (o), 1 rms_norm, 2 matmul_tiled (gate, up), 1 gated, 1
//!   matmul_tiled + add (down) = 12; Gemma's post-norms: 2 more (14). Around them: embed,
//!   select_row of the last position, and the same head as decode. With split dot
//!   products (one test), each split matmul adds the dispatch summing its spans, and
//!   where it adds into the residual stream (o, down) that dispatch takes the norm of
//!   the stream after it in.
//!
//! Encoders (`Model::embed`, one input of PROMPT tokens, forward/encoder.rs), per layer:
//!   nomic-bert: 3 matmul_tiled (q, k, v), 1 qk_rope (with the KV store), 1
//!   attention_tiled (not causal), 1 matmul_tiled + add (o), 1 layer_norm, 2
//!   matmul_tiled (gate, up), 1 gated, 1 matmul_tiled + add (down), 1 layer_norm = 12;
//!   bert: the projections' biases stand between each matmul and what follows, so
//!   nothing fuses: 3 matmul_tiled + 3 add (q/k/v biases), 1 kv_store, 1
//!   attention_tiled, o: matmul_tiled, add (bias), add (residual), 1 layer_norm, up:
//!   matmul_tiled, add (bias), activation (GELU), down: matmul_tiled, add (bias), add
//!   (residual), 1 layer_norm = 19. Around them: embed, the token type's add, the
//!   learned positions (bert), layer_norm; pooling is on the host.

#[path = "gpu_common.rs"]
mod gpu_common;

use std::path::Path;

use gpu_common::load_gpu;
use kindling_e2e::fixture_model;
use kindling_gpu::GpuOptions;
use kindling_model::{Backend, EvalOutput, Evaluated, Model};

/// Prompt tokens of the prefill measured: past MATVEC_MAX_ROWS (8), so the batch
/// kernels run, and below SPLIT_MIN_SPAN, so attention does not split.
const PROMPT: usize = 12;

/// The options the figures hold for (see the module docs).
fn pinned() -> GpuOptions {
    GpuOptions {
        allow_coop_matrix: false,
        allow_split_k: false,
        allow_int_batch: false,
        allow_wide_batch: false,
        max_part_bytes: Some(128 << 20),
        kv_f16: false,
        ..GpuOptions::default()
    }
}

/// (decode, prefill) dispatches of one model.
fn dispatches(path: &Path, options: GpuOptions) -> (usize, u64, u64) {
    let mut model = load_gpu(path, options);
    let (layers, vocab) = (model.config().block_count, model.config().vocab_size as u32);
    // Any ids the vocabulary holds: the dispatches do not depend on them.
    let prompt: Vec<u32> = (0..PROMPT as u32).map(|i| (i * 7 + 3) % vocab).collect();
    let mut session = model.new_session(PROMPT + 2).expect("session");
    let token = |e: Evaluated| match e {
        Evaluated::Token(t) => t,
        other => panic!("expected a token, got {other:?}"),
    };
    let before = model.backend().counters().dispatches;
    let t = token(pollster::block_on(model.eval(&mut session, &prompt, EvalOutput::LastArgmax)).expect("prefill"));
    let prefill = model.backend().counters().dispatches - before;
    let before = model.backend().counters().dispatches;
    token(pollster::block_on(model.eval(&mut session, &[t], EvalOutput::LastArgmax)).expect("decode"));
    let decode = model.backend().counters().dispatches - before;
    (layers, decode, prefill)
}

/// Checks one model's figures against `decode(layers)` and `prefill(layers)`.
fn check(key: &str, decode: impl Fn(u64) -> u64, prefill: impl Fn(u64) -> u64) {
    check_with(key, pinned(), decode, prefill)
}

fn check_with(key: &str, options: GpuOptions, decode: impl Fn(u64) -> u64, prefill: impl Fn(u64) -> u64) {
    let (layers, d, p) = dispatches(&fixture_model(key), options);
    let l = layers as u64;
    eprintln!("{key}: {layers} layers, {d} dispatches per decoded token, {p} per prefill of {PROMPT}");
    assert_eq!((d, p), (decode(l), prefill(l)), "{key} ({layers} layers): (decode, prefill of {PROMPT}) dispatches");
}

// Tiny models: vocabularies below TOP_K_CHUNK and NORM_FUSE_MAX_ROWS, one-part tables,
// so decode's head is embed + output matvec with its norm + argmax = 3. Their tensors
// cycle through every weight type, so q, k and v (and gate and up) are of different
// types and do not group: decode is 9 a layer (q with the norm, k, v, attention_rope,
// o + add, gate with the norm, up, gated, down + add), Gemma's 11. Prefill (12, 14 a
// layer; batch matmuls never group) does not care: its head is 4 (+ select_row).

#[test]
fn tiny_llama() {
    check("tiny-llama", |l| 9 * l + 3, |l| 12 * l + 4);
}

#[test]
fn tiny_llama3() {
    // Layer 0's q and k are both Q4_K: q/k/v are one matvec_multi there (2 fewer).
    check("tiny-llama3", |l| 9 * l + 3 - 2, |l| 12 * l + 4);
}

#[test]
fn tiny_qwen2() {
    check("tiny-qwen2", |l| 9 * l + 3, |l| 12 * l + 4);
}

#[test]
fn tiny_qwen3() {
    check("tiny-qwen3", |l| 9 * l + 3, |l| 12 * l + 4);
}

#[test]
fn tiny_phi3() {
    // Its fused qkv and gate/up tensors are split by rows into weights of one type:
    // they group as in the real models.
    check("tiny-phi3", |l| 5 * l + 3, |l| 12 * l + 4);
}

#[test]
fn tiny_gemma2() {
    // + the final soft cap.
    check("tiny-gemma2", |l| 11 * l + 4, |l| 14 * l + 5);
}

#[test]
fn tiny_gemma3() {
    check("tiny-gemma3", |l| 11 * l + 3, |l| 14 * l + 4);
}

// Real models: vocabularies past TOP_K_CHUNK (top-k chunks + merge) and
// NORM_FUSE_MAX_ROWS (the output norm on its own).

#[test]
fn smollm2_135m() {
    // Tied 49,152-row output, one part: embed, norm, output, 2 for the argmax.
    check("smollm2", |l| 5 * l + 5, |l| 12 * l + 6);
}

#[test]
fn gemma3_270m() {
    // The 262,144-row tied table is two parts: embed ×2 and the output matvec ×2.
    check("gemma3", |l| 7 * l + 7, |l| 14 * l + 8);
}

#[test]
fn qwen25_coder_05b() {
    // Its 151,936-row output is two parts (138 MiB).
    check("qwen2.5-0.5b", |l| 5 * l + 6, |l| 12 * l + 7);
}

#[test]
fn qwen25_coder_05b_with_split_dot_products() {
    // Every batch matmul of the prompt splits on the shader cores (a few 64 × 64 tiles
    // each: q, k, v, o, gate, up, down), adding a dispatch that sums its spans: 7 a
    // layer. The sums of o and of down add into the residual stream and take the norm
    // of it that follows in (matmul_split_sum_norm): the FFN norm and the next layer's
    // attention norm. So 12 + 7 - 2 = 17 a layer, and layer 0's attention norm (after
    // the embedding) stays: the head's 7 + 1. (The output norm, of the last row after
    // select_row, was never beside a split sum.)
    let options = GpuOptions { allow_split_k: true, ..pinned() };
    check_with("qwen2.5-0.5b", options, |l| 5 * l + 6, |l| 17 * l + 8);
}

#[test]
fn qwen25_coder_15b() {
    check("qwen2.5-1.5b", |l| 5 * l + 6, |l| 12 * l + 7);
}

// ---- encoders -------------------------------------------------------------------------

/// (layers, dispatches) of embedding one input of PROMPT tokens.
fn encoder_dispatches(path: &Path) -> (usize, u64) {
    let mut model: Model<_> = load_gpu(path, pinned());
    let (layers, vocab) = (model.config().block_count, model.config().vocab_size as u32);
    let input: Vec<u32> = (0..PROMPT as u32).map(|i| (i * 7 + 3) % vocab).collect();
    let before = model.backend().counters().dispatches;
    pollster::block_on(model.embed(&[input], false)).expect("embed");
    (layers, model.backend().counters().dispatches - before)
}

/// Checks one encoder's dispatches per input against `per_input(layers)`.
fn check_encoder(key: &str, path: &Path, per_input: impl Fn(u64) -> u64) {
    let (layers, d) = encoder_dispatches(path);
    eprintln!("{key}: {layers} layers, {d} dispatches per input of {PROMPT} tokens");
    assert_eq!(d, per_input(layers as u64), "{key} ({layers} layers): dispatches per input of {PROMPT}");
}

#[test]
fn tiny_bert() {
    check_encoder("tiny-bert", &fixture_model("tiny-bert"), |l| 19 * l + 4);
}

#[test]
fn tiny_nomic_bert() {
    check_encoder("tiny-nomic-bert", &fixture_model("tiny-nomic-bert"), |l| 12 * l + 3);
}

#[test]
fn nomic_embed_text_v15() {
    let path = kindling_testdata::models_dir().join("nomic-embed-text-v1.5.f16.gguf");
    check_encoder("nomic-embed-text-v1.5", &path, |l| 12 * l + 3);
}
