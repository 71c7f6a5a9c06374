//! The CPU engine against two independent references, on both real models:
//! - HF transformers on the dequantized GGUF in f32: our logits must be within
//!   `HF_TOLERANCE` of its logits at its top ids, at every position.
//! - llama.cpp (via llama-cpp-python): teacher-forced top-1 must agree at every
//!   position where llama.cpp's own top-1/top-2 margin is at least 0.5 and the f32
//!   reference picks the same top-1. llama.cpp quantizes activations to 8 bits, so at
//!   a few positions it is confident of a token the f32 reference ranks second
//!   (docs/ARCHITECTURE.md, "Judging fidelity"); an f32 engine cannot match both there. Those
//!   disputed positions are counted and printed, and there we must follow the f32
//!   reference.
//!
//! Fixtures: `tests/fixtures/logits_*.json` from `tests/scripts/gen_logit_refs.py`.

use kindling_e2e::{all_logits, argmax, fixture, fixture_model, load_cpu, margin, median};

/// Largest |ours − HF f32| allowed at any compared logit. Both are f32 forward passes
/// over the same dequantized weights; what remains is summation order (our blocked
/// dot products vs. PyTorch's GEMM) compounded over the layers. Measured: 1e-4 at
/// most on logits up to ~45; the bound leaves room for other thread counts and SIMD.
const HF_TOLERANCE: f32 = 2e-3;
/// llama.cpp margin above which top-1 must agree.
const CLEAR_MARGIN: f32 = 0.5;

fn check(key: &str) {
    check_where(key, |_| true);
}

/// `check` over the fixture prompts whose names `pick` selects (every prompt: at least 10).
fn check_where(key: &str, pick: impl Fn(&str) -> bool) {
    let fx = fixture(key);
    let every = fx.cases.iter().all(|c| pick(&c.name));
    let mut engine = load_cpu(&fixture_model(key));
    let (mut clear, mut clear_agree, mut all, mut all_agree) = (0usize, 0usize, 0usize, 0usize);
    let (mut confident, mut disputed) = (0usize, Vec::new());
    let mut diffs = Vec::new();
    let mut failures = Vec::new();
    for case in fx.cases.iter().filter(|c| pick(&c.name)) {
        let logits = all_logits(&mut engine, &case.token_ids);
        assert_eq!(logits.len(), case.llama_top.len(), "{}: positions", case.name);
        for (i, row) in logits.iter().enumerate() {
            let ours = argmax(row);
            let llama = &case.llama_top[i];
            all += 1;
            all_agree += usize::from(ours == llama[0].0);
            let hf_top1 = case.hf_top[i][0].0;
            if margin(llama) >= CLEAR_MARGIN {
                confident += 1;
            }
            if margin(llama) >= CLEAR_MARGIN && hf_top1 != llama[0].0 {
                disputed.push(format!(
                    "{} pos {i}: llama.cpp {:?}, f32 {:?}, ours {ours}",
                    case.name,
                    &llama[..2],
                    &case.hf_top[i][..2]
                ));
                if ours != hf_top1 {
                    failures.push(format!(
                        "{} pos {i}: disputed position, ours {ours} should follow the f32 reference {hf_top1}",
                        case.name
                    ));
                }
            } else if margin(llama) >= CLEAR_MARGIN {
                clear += 1;
                if ours == llama[0].0 {
                    clear_agree += 1;
                } else {
                    failures.push(format!("{} pos {i}: ours {ours}, llama.cpp {:?}", case.name, &llama[..2]));
                }
            }
            for &(id, hf) in &case.hf_top[i] {
                let d = (row[id as usize] - hf).abs();
                diffs.push(d);
                if d > HF_TOLERANCE {
                    failures.push(format!(
                        "{} pos {i} id {id}: ours {} vs f32 reference {hf}",
                        case.name, row[id as usize]
                    ));
                }
            }
        }
    }
    let max = diffs.iter().copied().fold(0.0, f32::max);
    println!(
        "{}: llama.cpp top-1 agreement {clear_agree}/{clear} where its margin >= {CLEAR_MARGIN} and f32 agrees \
         ({} more confident positions disputed by the f32 reference), {all_agree}/{all} overall ({:.1}%); \
         |ours - HF f32| max {max:.5}, median {:.6} over {} logits",
        fx.model,
        confident - clear,
        100.0 * all_agree as f64 / all as f64,
        median(diffs.clone()),
        diffs.len()
    );
    for d in &disputed {
        println!("  disputed: {d}");
    }
    assert!(
        failures.is_empty(),
        "{} failures, first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
    assert!(!every || fx.cases.len() >= 10, "the fixture needs at least 10 prompts");
    assert!(all > 0, "no prompt picked");
}

#[test]
fn smollm2_matches_llama_cpp_and_f32_reference() {
    check("smollm2");
}

#[test]
fn gemma3_matches_llama_cpp_and_f32_reference() {
    check("gemma3");
}

/// Qwen2.5-Coder-0.5B-Instruct (qwen2: q/k/v biases; 151,936-token vocabulary).
#[test]
fn qwen25_05b_matches_llama_cpp_and_f32_reference() {
    check("qwen2.5-0.5b");
}

/// Qwen2.5-Coder-1.5B-Instruct (1.1 GB, its output.weight 183 MiB of Q6_K): four of the
/// fixture's 14 prompts, for CI time on the CPU engine (192 positions, ~35–45 s on 2
/// cores). Each prompt's first position is an attention sink where quantized llama.cpp
/// is 6–15 off the f32 logits (`tests/fixtures/README.md`); the check follows the f32
/// reference there, as everywhere. "french" is one of the fixture's 4 positions where both
/// references are confident and disagree (position 0); "question" and "code_python" have
/// a sink where llama.cpp alone is confident.
#[test]
fn qwen25_15b_matches_llama_cpp_and_f32_reference() {
    check_where("qwen2.5-1.5b", |name| matches!(name, "single_word" | "question" | "code_python" | "french"));
}

/// Synthetic llama whose weights span every quant type from F32 to Q6_K.
#[test]
fn tiny_llama_every_type_matches_references() {
    check("tiny-llama");
}

/// Synthetic gemma3 with a 4-token sliding window, 7 layers (one global).
#[test]
fn tiny_gemma3_sliding_window_matches_references() {
    check("tiny-gemma3");
}

// One synthetic model per architecture in its real llama.cpp layout (tensor names,
// metadata keys, a mix of quant types; `tests/scripts/make_synthetic.py`).

/// qwen2: q/k/v projection biases, neox RoPE, untied output.
#[test]
fn tiny_qwen2_biases_match_references() {
    check("tiny-qwen2");
}

/// qwen3: per-head q/k norms, q width ≠ d_model, tied embeddings.
#[test]
fn tiny_qwen3_qk_norms_match_references() {
    check("tiny-qwen3");
}

/// llama with Llama 3.x RoPE scaling (`rope_freqs`) and tied embeddings.
#[test]
fn tiny_llama3_rope_scaling_matches_references() {
    check("tiny-llama3");
}

/// phi3: fused attn_qkv and gate/up tensors, LongRoPE short factors and attention factor.
#[test]
fn tiny_phi3_fused_tensors_and_longrope_match_references() {
    check("tiny-phi3");
}

/// gemma2: attention-logit and final-logit soft caps, alternate sliding windows, post-norms.
#[test]
fn tiny_gemma2_softcaps_and_windows_match_references() {
    check("tiny-gemma2");
}
