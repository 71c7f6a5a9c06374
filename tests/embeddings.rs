//! Embeddings on the CPU engine against llama.cpp's (`llama-embedding`, fixtures from
//! `tests/scripts/gen_embed_refs.py`): every input's vector must have a cosine of at
//! least `MIN_COSINE` with llama.cpp's. The fixture's token ids are fed as they are, so
//! these tests do not depend on the tokenizer; one test per model goes through the
//! tokenizer too. Inputs: short, long (near the context), non-ASCII, and a batch.
//! Several inputs in one call are packed into one forward pass (`Model::embed`): the
//! `packed` tests check that each input's vector is the one it gets alone.

use std::path::PathBuf;
use std::time::Instant;

use kindling_cpu::CpuBackend;
use kindling_gpu::GpuOptions;
use kindling_model::{embedding_response, Backend, EmbeddingRequest, Model, ModelKind, ModelOptions};

#[path = "gpu_common.rs"]
mod gpu_common;
use serde::Deserialize;

/// The bar. An f32 engine against llama.cpp (which rounds activations for its
/// dot products) on the same file.
const MIN_COSINE: f64 = 0.999;

/// An input packed with others against the same input alone: the same sums in the same
/// order, so only a kernel's choice of tiles (a longer batch) may move the last bits.
const MIN_PACKED_COSINE: f64 = 0.99999;

#[derive(Deserialize)]
struct Case {
    name: String,
    kind: String,
    text: String,
    /// llama.cpp's token ids, `[CLS]` ... `[SEP]`.
    ids: Vec<u32>,
    /// llama.cpp's pooled, L2-normalised embedding.
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct Fixture {
    model: String,
    pooling: String,
    n_embd: usize,
    cases: Vec<Case>,
}

fn fixture(key: &str) -> Fixture {
    let path = kindling_testdata::fixture(&format!("embed_ref_{key}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {} (tests/scripts/gen_embed_refs.py makes it): {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad fixture {}: {e}", path.display()))
}

fn load(path: &PathBuf) -> Model<CpuBackend> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Model::load_from_bytes(CpuBackend::new(), &bytes, ModelOptions::default()).expect("load encoder")
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let na: f64 = a.iter().map(|x| *x as f64 * *x as f64).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| *x as f64 * *x as f64).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// Every case of `key`'s fixture (those `pick` selects) through `Model::embed` with
/// llama.cpp's ids on the CPU engine; the batch cases go in one call. Returns the model
/// for more checks.
fn check(key: &str, path: PathBuf, pick: impl Fn(&Case) -> bool) -> Model<CpuBackend> {
    check_on(key, load(&path), pick)
}

/// As `check`, on the GPU engine (lavapipe where there is no GPU).
fn check_gpu(key: &str, path: PathBuf, pick: impl Fn(&Case) -> bool) {
    check_on(key, gpu_common::load_gpu(&path, GpuOptions::default()), pick);
}

fn check_on<B: Backend>(key: &str, mut model: Model<B>, pick: impl Fn(&Case) -> bool) -> Model<B> {
    let fx = fixture(key);
    assert_eq!(model.kind(), ModelKind::Encoder);
    assert_eq!(model.config().pooling.as_str(), fx.pooling, "{}: pooling", fx.model);
    let cases: Vec<&Case> = fx.cases.iter().filter(|c| pick(c)).collect();
    assert!(!cases.is_empty(), "{key}: no cases");
    let mut failures = Vec::new();
    // The batch's inputs in one call, the others one by one (each timed).
    let (batch, single): (Vec<&Case>, Vec<&Case>) = cases.iter().partition(|c| c.kind == "batch");
    let mut runs: Vec<Vec<&Case>> = single.into_iter().map(|c| vec![c]).collect();
    if !batch.is_empty() {
        runs.push(batch);
    }
    for run in runs {
        let ids: Vec<Vec<u32>> = run.iter().map(|c| c.ids.clone()).collect();
        let t = Instant::now();
        let got = pollster::block_on(model.embed(&ids, false)).expect("embed");
        let took = t.elapsed();
        assert_eq!(got.len(), run.len());
        for (case, v) in run.iter().zip(&got) {
            assert_eq!(v.len(), fx.n_embd, "{}: width", case.name);
            let norm: f64 = v.iter().map(|x| *x as f64 * *x as f64).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "{}: |v| = {norm}", case.name);
            let cos = cosine(v, &case.embedding);
            println!(
                "{key} on {} {:>16} ({:>9}, {:>4} tokens): cosine {cos:.7} in {took:.2?}",
                model.backend_name(),
                case.name,
                case.kind,
                case.ids.len()
            );
            if cos.is_nan() || cos < MIN_COSINE {
                failures.push(format!("{}: cosine {cos}", case.name));
            }
        }
    }
    assert!(failures.is_empty(), "{key}: below {MIN_COSINE}: {failures:?}");
    model
}

/// The picked cases of `key`'s fixture, and the first two ids of the first (a 2-token
/// input) and its first id alone (a 1-token one), in one `Model::embed` call (packed
/// into as few forward passes as the context allows) and each alone: every packed vector
/// must equal its input's alone (cosine >= MIN_PACKED_COSINE) and, where llama.cpp's
/// vector is known, match it (MIN_COSINE). On a backend that counts submissions, the
/// packed call must take fewer than one per input.
fn check_packed<B: Backend>(key: &str, model: &mut Model<B>, pick: impl Fn(&Case) -> bool) {
    let fx = fixture(key);
    let cases: Vec<&Case> = fx.cases.iter().filter(|c| pick(c)).collect();
    assert!(cases.len() >= 2, "{key}: pick at least two cases");
    // (name, ids, llama.cpp's vector where known)
    type Input<'a> = (String, Vec<u32>, Option<&'a [f32]>);
    let mut inputs: Vec<Input> =
        cases.iter().map(|c| (c.name.clone(), c.ids.clone(), Some(&c.embedding[..]))).collect();
    // Short ones between the others: a 2-token input, then a 1-token one.
    inputs.insert(1, ("two tokens".into(), cases[0].ids[..2].to_vec(), None));
    inputs.insert(3, ("one token".into(), cases[0].ids[..1].to_vec(), None));
    let ids: Vec<Vec<u32>> = inputs.iter().map(|i| i.1.clone()).collect();
    let (t, before) = (Instant::now(), model.backend().counters().submits);
    let packed = pollster::block_on(model.embed(&ids, false)).expect("embed packed");
    let (packed_took, packed_submits) = (t.elapsed(), model.backend().counters().submits - before);
    let (t, before) = (Instant::now(), model.backend().counters().submits);
    let alone: Vec<Vec<f32>> = ids
        .iter()
        .map(|one| pollster::block_on(model.embed(std::slice::from_ref(one), false)).expect("embed alone").remove(0))
        .collect();
    let (alone_took, alone_submits) = (t.elapsed(), model.backend().counters().submits - before);
    let rows: usize = ids.iter().map(Vec::len).sum();
    println!(
        "{key} on {}: {} inputs ({rows} tokens) packed in {packed_took:.2?} ({packed_submits} submissions), one at a time in {alone_took:.2?} ({alone_submits})",
        model.backend_name(),
        ids.len()
    );
    assert_eq!(packed.len(), ids.len());
    let mut failures = Vec::new();
    for ((name, ids, reference), (p, a)) in inputs.iter().zip(packed.iter().zip(&alone)) {
        let same = cosine(p, a);
        let max_diff = p.iter().zip(a).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
        let to_ref = reference.map(|r| cosine(p, r));
        println!(
            "{key} {name:>16} ({:>4} tokens): packed vs alone cosine {same:.9} (max |diff| {max_diff:.1e}), vs llama.cpp {}",
            ids.len(),
            to_ref.map_or("-".into(), |c| format!("{c:.7}"))
        );
        if same.is_nan() || same < MIN_PACKED_COSINE {
            failures.push(format!("{name}: packed vs alone cosine {same}"));
        }
        if to_ref.is_some_and(|c| c.is_nan() || c < MIN_COSINE) {
            failures.push(format!("{name}: packed vs llama.cpp cosine {to_ref:?}"));
        }
    }
    assert!(failures.is_empty(), "{key}: {failures:?}");
    if alone_submits > 0 {
        assert!(packed_submits < alone_submits, "{key}: {packed_submits} submissions packed, {alone_submits} alone");
    }
}

/// Through the tokenizer: our ids must be llama.cpp's, and the request/response path
/// the CLI and the browser use gives the same vectors.
fn through_tokenizer(key: &str, model: &mut Model<CpuBackend>, pick: impl Fn(&Case) -> bool) {
    let fx = fixture(key);
    let cases: Vec<&Case> = fx.cases.iter().filter(|c| pick(c)).collect();
    let request = serde_json::json!({ "input": cases.iter().map(|c| c.text.clone()).collect::<Vec<_>>() });
    let req = EmbeddingRequest::from_value(&request).expect("request");
    for c in &cases {
        assert_eq!(model.tokenizer().encode(&c.text, true, false), c.ids, "{key} {}: token ids", c.name);
    }
    let e = pollster::block_on(model.embed_texts(&req.input, req.truncate)).expect("embed texts");
    assert_eq!(e.prompt_tokens, cases.iter().map(|c| c.ids.len()).sum::<usize>());
    let response = embedding_response(&fx.model, &e);
    for (i, c) in cases.iter().enumerate() {
        let got: Vec<f32> = serde_json::from_value(response["data"][i]["embedding"].clone()).expect("embedding");
        let cos = cosine(&got, &c.embedding);
        assert!(cos >= MIN_COSINE, "{key} {} through the tokenizer: cosine {cos}", c.name);
    }
}

/// Every case of the tiny encoders' fixtures in one call (tiny-bert's 512-token context
/// takes three passes, the 493-token input alone in one; tiny-nomic-bert's 2048 three,
/// its 2029-token input alone), packed against alone, on the CPU.
#[test]
fn tiny_encoders_packed_equal_alone() {
    check_packed("tiny-bert", &mut load(&kindling_testdata::synthetic("tiny-bert.gguf")), |_| true);
    check_packed("tiny-nomic-bert", &mut load(&kindling_testdata::synthetic("tiny-nomic-bert.gguf")), |_| true);
}

/// The same on the GPU engine (lavapipe where there is no GPU).
#[test]
fn tiny_encoders_packed_equal_alone_on_the_gpu() {
    for key in ["tiny-bert", "tiny-nomic-bert"] {
        let path = kindling_testdata::synthetic(&format!("{key}.gguf"));
        check_packed(key, &mut gpu_common::load_gpu(&path, GpuOptions::default()), |_| true);
    }
}

/// The real nomic-embed-text-v1.5: every input but the long one in one pass, on the CPU.
#[test]
fn nomic_embed_packed_equals_alone() {
    let path = kindling_testdata::models_dir().join("nomic-embed-text-v1.5.f16.gguf");
    check_packed("nomic", &mut load(&path), |c| c.kind != "long");
}

#[test]
fn tiny_bert_matches_llama_cpp() {
    let mut m = check("tiny-bert", kindling_testdata::synthetic("tiny-bert.gguf"), |_| true);
    through_tokenizer("tiny-bert", &mut m, |c| c.kind != "long");
}

#[test]
fn tiny_nomic_bert_matches_llama_cpp() {
    let mut m = check("tiny-nomic-bert", kindling_testdata::synthetic("tiny-nomic-bert.gguf"), |_| true);
    through_tokenizer("tiny-nomic-bert", &mut m, |c| c.kind != "long");
}

/// The real nomic-embed-text-v1.5 (F16), every input but the long one.
#[test]
fn nomic_embed_matches_llama_cpp() {
    let path = kindling_testdata::models_dir().join("nomic-embed-text-v1.5.f16.gguf");
    let mut m = check("nomic", path, |c| c.kind != "long");
    through_tokenizer("nomic", &mut m, |c| c.kind != "long");
}

/// The long input (2,031 tokens, near the 2048-token context) on the real model: about
/// 460 GFLOP, a minute on two shared cores since the CPU's float matmul works in panels
/// (it took 4.5 minutes before).
#[test]
fn nomic_embed_long_input_matches_llama_cpp() {
    let path = kindling_testdata::models_dir().join("nomic-embed-text-v1.5.f16.gguf");
    check("nomic", path, |c| c.kind == "long");
}

/// The GPU engine (the browser's kernels' native twins; lavapipe in CI) on the synthetic
/// encoders, every input including the ~2000-token ones.
#[test]
fn tiny_encoders_on_the_gpu_match_llama_cpp() {
    check_gpu("tiny-bert", kindling_testdata::synthetic("tiny-bert.gguf"), |_| true);
    check_gpu("tiny-nomic-bert", kindling_testdata::synthetic("tiny-nomic-bert.gguf"), |_| true);
}

/// The real nomic-embed-text-v1.5 on the GPU engine: two short inputs and a non-ASCII
/// one, packed in one pass and each alone, against each other and llama.cpp (on lavapipe
/// each F16 pass costs seconds; the rest of the fixture runs on the CPU above).
#[test]
fn nomic_embed_on_the_gpu_matches_llama_cpp() {
    let path = kindling_testdata::models_dir().join("nomic-embed-text-v1.5.f16.gguf");
    let mut m = gpu_common::load_gpu(&path, GpuOptions::default());
    check_packed("nomic", &mut m, |c| ["query", "document", "cjk"].contains(&c.name.as_str()));
}

/// Context handling and the refusals, on the tiny bert (context 512).
#[test]
fn long_inputs_are_cut_or_refused_and_decoders_refuse() {
    let mut m = load(&kindling_testdata::synthetic("tiny-bert.gguf"));
    let ctx = m.config().context_length;
    let long: Vec<u32> = std::iter::once(101).chain((0..ctx + 10).map(|i| 200 + (i % 100) as u32)).collect();
    let e = pollster::block_on(m.embed(std::slice::from_ref(&long), false)).unwrap_err().to_string();
    assert!(e.contains(&format!("context of {ctx} tokens")) && e.contains("truncate"), "{e}");
    let cut = pollster::block_on(m.embed(std::slice::from_ref(&long), true)).expect("truncated");
    let exact = pollster::block_on(m.embed(&[long[..ctx].to_vec()], false)).expect("at the limit");
    assert_eq!(cut, exact);
    let e = pollster::block_on(m.embed(&[vec![]], false)).unwrap_err().to_string();
    assert!(e.contains("empty"), "{e}");
    // An encoder does not generate.
    let mut s = m.new_session(16).expect("session");
    let e = pollster::block_on(m.eval(&mut s, &[101], kindling_model::EvalOutput::LastLogits)).unwrap_err().to_string();
    assert!(e.contains("cannot generate"), "{e}");
    // A decoder does not embed.
    let mut d = load(&kindling_testdata::synthetic("tiny-llama.gguf"));
    assert_eq!(d.kind(), ModelKind::Decoder);
    let e = pollster::block_on(d.embed(&[vec![1, 2]], false)).unwrap_err().to_string();
    assert!(e.contains("cannot make embeddings"), "{e}");
}
