//! The CPU engine against two independent references, on both real models:
//! - llama.cpp (via llama-cpp-python): teacher-forced top-1 must agree at every
//!   position where llama.cpp's own top-1/top-2 margin is at least 0.5 (llama.cpp
//!   quantizes activations to 8 bits, so near-ties may legitimately differ);
//! - HF transformers on the dequantized GGUF in f32: our logits must be within
//!   `HF_TOLERANCE` of its logits at its top ids, at every position.
//! Fixtures: `tests/fixtures/logits_*.json` from `tests/scripts/gen_logit_refs.py`.

use kindling_e2e::{all_logits, argmax, fixture, load_cpu, margin, median};
use kindling_testdata::RealModel;

/// Largest |ours − HF f32| allowed at any compared logit. Both are f32 forward passes
/// over the same dequantized weights; what remains is summation order (our blocked
/// dot products vs. PyTorch's GEMM) compounded over the layers, ~1e-3 typically.
const HF_TOLERANCE: f32 = 0.02;
/// llama.cpp margin above which top-1 must agree.
const CLEAR_MARGIN: f32 = 0.5;

fn check(model: RealModel) {
    let fx = fixture(model);
    let mut engine = load_cpu(model);
    let (mut clear, mut clear_agree, mut all, mut all_agree) = (0usize, 0usize, 0usize, 0usize);
    let mut diffs = Vec::new();
    let mut failures = Vec::new();
    for case in &fx.cases {
        let logits = all_logits(&mut engine, &case.token_ids);
        assert_eq!(logits.len(), case.llama_top.len(), "{}: positions", case.name);
        for (i, row) in logits.iter().enumerate() {
            let ours = argmax(row);
            let llama = &case.llama_top[i];
            all += 1;
            all_agree += usize::from(ours == llama[0].0);
            if margin(llama) >= CLEAR_MARGIN {
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
                    failures.push(format!("{} pos {i} id {id}: ours {} vs f32 reference {hf}", case.name, row[id as usize]));
                }
            }
        }
    }
    let max = diffs.iter().copied().fold(0.0, f32::max);
    println!(
        "{}: llama.cpp top-1 agreement {clear_agree}/{clear} where its margin >= {CLEAR_MARGIN}, {all_agree}/{all} overall \
         ({:.1}%); |ours - HF f32| max {max:.5}, median {:.6} over {} logits",
        fx.model,
        100.0 * all_agree as f64 / all as f64,
        median(diffs.clone()),
        diffs.len()
    );
    assert!(failures.is_empty(), "{} failures, first ones:\n{}", failures.len(), failures[..failures.len().min(20)].join("\n"));
    assert!(fx.cases.len() >= 10, "the fixture needs at least 10 prompts");
}

#[test]
fn smollm2_matches_llama_cpp_and_f32_reference() {
    check(RealModel::SmolLm2);
}

#[test]
fn gemma3_matches_llama_cpp_and_f32_reference() {
    check(RealModel::Gemma3);
}
