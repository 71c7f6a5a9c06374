//! Shared pieces of the end-to-end tests: loading the real models on the CPU backend
//! and reading the reference fixtures written by `tests/scripts/gen_logit_refs.py`.

use std::path::{Path, PathBuf};

use kindling_cpu::CpuBackend;
use kindling_model::{EvalOutput, Evaluated, Model, ModelOptions};
use kindling_testdata::RealModel;
use serde::Deserialize;

/// One prompt of a logits fixture (see `tests/fixtures/README.md`).
#[derive(Deserialize)]
pub struct Case {
    pub name: String,
    pub prompt_token_ids: Vec<u32>,
    /// llama.cpp's greedy continuation and its top-1/top-2 margin at each step.
    pub greedy_ids: Vec<u32>,
    pub greedy_margins: Vec<f32>,
    /// Prompt + greedy ids: the teacher-forced sequence.
    pub token_ids: Vec<u32>,
    /// Per position: llama.cpp's top (id, logit) pairs.
    pub llama_top: Vec<Vec<(u32, f32)>>,
    /// Per position: the f32 reference's (HF transformers) top (id, logit) pairs.
    pub hf_top: Vec<Vec<(u32, f32)>>,
}

#[derive(Deserialize)]
pub struct Fixture {
    pub model: String,
    pub cases: Vec<Case>,
}

/// The logits fixture of a model key (`smollm2`, `gemma3`, `qwen2.5-0.5b`, `tiny-llama`, ...).
pub fn fixture(key: &str) -> Fixture {
    let path = kindling_testdata::fixture(&format!("logits_{key}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read {} (generate it with tests/scripts/gen_logit_refs.py): {e}", path.display())
    });
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad fixture {}: {e}", path.display()))
}

/// Loads a model file on the CPU backend through the streaming loader.
pub fn load_cpu(path: &Path) -> Model<CpuBackend> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Model::load_from_bytes(CpuBackend::new(), &bytes, ModelOptions::default()).expect("load model")
}

/// The models with logit fixtures: (fixture key, path).
pub fn fixture_model(key: &str) -> PathBuf {
    match key {
        "smollm2" => RealModel::SmolLm2.path(),
        "gemma3" => RealModel::Gemma3.path(),
        "qwen2.5-0.5b" => RealModel::Qwen25Coder05B.path(),
        "qwen2.5-1.5b" => RealModel::Qwen25Coder15B.path(),
        other => kindling_testdata::synthetic(&format!("{other}.gguf")),
    }
}

/// Logits of every position of `ids`, evaluated in one pass from an empty session.
pub fn all_logits(model: &mut Model<CpuBackend>, ids: &[u32]) -> Vec<Vec<f32>> {
    let mut session = model.new_session(ids.len()).expect("session");
    let Evaluated::Logits(l) = pollster::block_on(model.eval(&mut session, ids, EvalOutput::AllLogits)).expect("eval")
    else {
        panic!("eval returned no logits")
    };
    l.chunks_exact(model.config().vocab_size).map(<[f32]>::to_vec).collect()
}

/// Index of the largest value (lowest on ties).
pub fn argmax(row: &[f32]) -> u32 {
    let mut best = (0u32, f32::NEG_INFINITY);
    for (i, &v) in row.iter().enumerate() {
        if v > best.1 {
            best = (i as u32, v);
        }
    }
    best.0
}

/// Top-1 minus top-2 of a reference's (sorted) top list.
pub fn margin(top: &[(u32, f32)]) -> f32 {
    match top {
        [a, b, ..] => a.1 - b.1,
        _ => f32::INFINITY,
    }
}

pub fn median(mut v: Vec<f32>) -> f32 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f32::total_cmp);
    v[v.len() / 2]
}
