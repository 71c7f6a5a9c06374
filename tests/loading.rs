//! The streaming loader: chunk-size independence, progress, and every kind of bad
//! model file giving the error that names the problem, never a panic.

use kindling_cpu::CpuBackend;
use kindling_e2e::{all_logits, load_cpu};
use kindling_gguf::writer::GgufWriter;
use kindling_gguf::{parse_header, Value};
use kindling_model::{Loader, Model, ModelError, ModelOptions};
use kindling_testdata::synthetic;

fn tiny() -> Vec<u8> {
    std::fs::read(synthetic("tiny-llama.gguf")).expect("tiny model")
}

/// Loads `bytes` fed in `chunk`-byte pieces; `known_len` says whether the loader is
/// told the file size up front (a download with Content-Length) or not.
fn load(bytes: &[u8], chunk: usize, known_len: bool) -> Result<Model<CpuBackend>, ModelError> {
    let mut backend = CpuBackend::new();
    let mut loader = Loader::new(known_len.then_some(bytes.len() as u64));
    let mut last = 0;
    for piece in bytes.chunks(chunk) {
        loader.feed(&mut backend, piece)?;
        let p = loader.progress();
        assert!(p.received >= last, "progress went backwards");
        last = p.received;
        if let Some(total) = p.total {
            assert!(p.received <= total.max(bytes.len() as u64));
        }
    }
    let loaded = loader.finish()?;
    Model::new(backend, loaded, ModelOptions::default())
}

/// Rebuilds the tiny model with its metadata and tensors edited.
fn rewrite(
    edit_kv: impl Fn(&str, &Value) -> Option<Value>,
    edit_tensor: impl Fn(&str, &[u64]) -> Option<Vec<u64>>,
) -> Vec<u8> {
    rewrite_model("tiny-llama.gguf", edit_kv, edit_tensor)
}

/// Rebuilds synthetic model `file` with its metadata and tensors edited (a tensor given
/// fewer values keeps the first of its bytes).
fn rewrite_model(
    file: &str,
    edit_kv: impl Fn(&str, &Value) -> Option<Value>,
    edit_tensor: impl Fn(&str, &[u64]) -> Option<Vec<u64>>,
) -> Vec<u8> {
    let bytes = std::fs::read(synthetic(file)).expect("synthetic model");
    let header = parse_header(&bytes).expect("synthetic header");
    let mut w = GgufWriter::new(header.version);
    for (k, v) in header.metadata.iter() {
        if let Some(v) = edit_kv(k, v) {
            w.add_kv(k, v);
        }
    }
    for t in &header.tensors {
        let Some(dims) = edit_tensor(&t.name, &t.dims) else { continue };
        let range = header.tensor_file_range(t);
        let values: u64 = dims.iter().product();
        let len = (values as usize / t.ty.block_elems() * t.ty.block_bytes()).min((range.end - range.start) as usize);
        w.add_tensor(&t.name, &dims, t.ty, &bytes[range.start as usize..range.start as usize + len]).expect("tensor");
    }
    w.to_bytes()
}

fn keep_kv(_: &str, v: &Value) -> Option<Value> {
    Some(v.clone())
}

fn keep_tensor(_: &str, d: &[u64]) -> Option<Vec<u64>> {
    Some(d.to_vec())
}

fn load_err(bytes: &[u8]) -> ModelError {
    match load(bytes, 64 << 10, true) {
        Ok(_) => panic!("loading should fail"),
        Err(e) => e,
    }
}

#[test]
fn logits_do_not_depend_on_chunking_or_known_length() {
    let bytes = tiny();
    let ids = [1u32, 20, 30, 40, 50, 60, 70];
    let reference = all_logits(&mut load_cpu(&synthetic("tiny-llama.gguf")), &ids);
    for (chunk, known) in [(1, true), (7, false), (4096, true), (1 << 20, false), (bytes.len(), true)] {
        let mut model = load(&bytes, chunk, known).unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
        assert_eq!(all_logits(&mut model, &ids), reference, "chunk {chunk}");
    }
}

#[test]
fn progress_learns_the_total_from_the_header() {
    let bytes = tiny();
    let mut backend = CpuBackend::new();
    let mut loader = Loader::new(None);
    assert_eq!(loader.progress().total, None);
    let mut saw_total = None;
    for piece in bytes.chunks(8192) {
        loader.feed(&mut backend, piece).unwrap();
        if let Some(t) = loader.progress().total {
            saw_total.get_or_insert(t);
        }
    }
    assert!(loader.is_complete());
    assert_eq!(saw_total, Some(bytes.len() as u64));
}

#[test]
fn truncated_tensor_data_is_reported() {
    let bytes = tiny();
    for cut in [bytes.len() - 1, bytes.len() - 5000, bytes.len() / 2] {
        // Without the length, the stream just ends early.
        match load(&bytes[..cut], 4096, false) {
            Err(ModelError::TruncatedData { received, .. }) => assert_eq!(received, cut as u64),
            Err(e) => panic!("cut {cut}: unexpected {e}"),
            Ok(_) => panic!("cut {cut}: loaded a truncated file"),
        }
        // With the length, the header already shows tensors past the end.
        let e = load(&bytes[..cut], 4096, true).err().expect("fails");
        assert!(matches!(e, ModelError::Gguf(_)), "cut {cut}: {e}");
        assert!(e.to_string().contains("outside"), "{e}");
    }
}

#[test]
fn missing_metadata_is_named() {
    let bytes = rewrite(|k, v| (k != "llama.block_count").then(|| v.clone()), keep_tensor);
    let e = load_err(&bytes);
    assert!(matches!(&e, ModelError::MissingMetadata(k) if k == "llama.block_count"), "{e}");
    assert!(e.to_string().contains("llama.block_count"));
}

#[test]
fn wrongly_typed_metadata_is_named() {
    let bytes = rewrite(
        |k, v| Some(if k == "llama.embedding_length" { Value::String("wide".into()) } else { v.clone() }),
        keep_tensor,
    );
    let e = load_err(&bytes);
    assert!(matches!(&e, ModelError::BadMetadata { key, .. } if key == "llama.embedding_length"), "{e}");
}

#[test]
fn unsupported_architecture_is_named() {
    let bytes = rewrite(
        |k, v| Some(if k == "general.architecture" { Value::String("mamba".into()) } else { v.clone() }),
        keep_tensor,
    );
    let e = load_err(&bytes);
    assert!(matches!(&e, ModelError::UnsupportedArchitecture(a) if a == "mamba"), "{e}");
}

#[test]
fn missing_tensor_is_named() {
    let bytes = rewrite(keep_kv, |n, d| (n != "blk.1.ffn_up.weight").then(|| d.to_vec()));
    let e = load_err(&bytes);
    assert!(matches!(&e, ModelError::MissingTensor(n) if n == "blk.1.ffn_up.weight"), "{e}");
}

#[test]
fn wrong_tensor_shape_is_named() {
    // Same bytes, rows and columns swapped: a plausible-looking lie.
    let bytes = rewrite(keep_kv, |n, d| Some(if n == "blk.0.ffn_down.weight" { vec![d[1], d[0]] } else { d.to_vec() }));
    let e = load_err(&bytes);
    assert!(matches!(&e, ModelError::TensorShape { name, .. } if name == "blk.0.ffn_down.weight"), "{e}");
}

#[test]
fn vocabulary_size_mismatch_is_caught() {
    let bytes = rewrite(|k, v| Some(if k == "llama.vocab_size" { Value::U32(1000) } else { v.clone() }), keep_tensor);
    let e = load_err(&bytes);
    assert!(e.to_string().contains("token_embd") || e.to_string().contains("tokens"), "{e}");
}

#[test]
fn q8_k_weights_run() {
    let mut model = load_cpu(&synthetic("tiny-llama-q8k.gguf"));
    let logits = all_logits(&mut model, &[1, 2, 3]);
    assert!(logits.iter().flatten().all(|v| v.is_finite()));
}

/// Thousands of single-byte corruptions of the header region: each load either
/// succeeds or fails with an error; none may panic.
#[test]
fn corrupted_headers_never_panic() {
    let bytes = tiny();
    let header_len = parse_header(&bytes).unwrap().data_offset as usize;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut ok, mut failed) = (0, 0);
    for _ in 0..1500 {
        let mut b = bytes.clone();
        for _ in 0..1 + next() % 3 {
            let at = (next() as usize) % header_len;
            b[at] = next() as u8;
        }
        let known = next() % 2 == 0;
        match std::panic::catch_unwind(|| load(&b, 1 << 16, known).map(|_| ())) {
            Ok(Ok(())) => ok += 1,
            Ok(Err(_)) => failed += 1,
            Err(_) => panic!("a corrupted header made the loader panic"),
        }
    }
    println!("{ok} corrupted files still loaded, {failed} were rejected with an error");
}

/// The tiny model with `key` set to `value` (replaced or added).
fn with_kv(key: &str, value: Value) -> Vec<u8> {
    let bytes = tiny();
    let header = parse_header(&bytes).expect("tiny header");
    let mut w = GgufWriter::new(header.version);
    for (k, v) in header.metadata.iter().filter(|(k, _)| *k != key) {
        w.add_kv(k, v.clone());
    }
    w.add_kv(key, value);
    for t in &header.tensors {
        let range = header.tensor_file_range(t);
        w.add_tensor(&t.name, &t.dims, t.ty, &bytes[range.start as usize..range.end as usize]).expect("tensor");
    }
    w.to_bytes()
}

/// `ModelInfo.quantization` is the file's own name for its mix (`general.file_type`),
/// e.g. Q4_K_M for a file of Q4_K, Q5_0, Q6_K and Q8_0 tensors; without the key (or
/// with an unknown value), the type holding the most bytes.
#[test]
fn quantization_is_named_as_the_file_names_it() {
    let info_of = |bytes: &[u8]| load(bytes, 1 << 20, true).expect("load").info().quantization.clone();
    assert_eq!(info_of(&with_kv("general.file_type", Value::U32(15))), "Q4_K_M");
    assert_eq!(info_of(&with_kv("general.file_type", Value::U32(3))), "Q4_1");
    let dominant = info_of(&rewrite(|k, v| (k != "general.file_type").then(|| v.clone()), keep_tensor));
    assert_eq!(info_of(&with_kv("general.file_type", Value::U32(9999))), dominant);
    assert!(kindling_gguf::GgmlType::ALL.iter().any(|t| t.name() == dominant), "{dominant}");
}

// The layouts the architecture descriptions added (crates/model/src/arch.rs): each lie
// is refused at load with an error that names it.

#[test]
fn fused_qkv_of_the_wrong_size_is_named() {
    // phi3's attn_qkv holds q, k and v rows (256 + 128 + 128): 64 rows short.
    let bytes = rewrite_model("tiny-phi3.gguf", keep_kv, |n, d| {
        Some(if n == "blk.0.attn_qkv.weight" { vec![d[0], d[1] - 64] } else { d.to_vec() })
    });
    let e = load_err(&bytes);
    println!("{e}");
    assert!(
        matches!(&e, ModelError::TensorShape { name, expected, found }
        if name == "blk.0.attn_qkv.weight" && expected == &[256, 512] && found == &[256, 448]),
        "{e}"
    );
    assert_eq!(e.to_string(), "tensor 'blk.0.attn_qkv.weight' has shape [256, 448], expected [256, 512]");
}

#[test]
fn fused_gate_up_of_the_wrong_size_is_named() {
    // phi3's ffn_up holds the gate rows, then the up rows: one row short cannot split.
    let bytes = rewrite_model("tiny-phi3.gguf", keep_kv, |n, d| {
        Some(if n == "blk.1.ffn_up.weight" { vec![d[0], d[1] - 1] } else { d.to_vec() })
    });
    let e = load_err(&bytes);
    println!("{e}");
    assert!(
        matches!(&e, ModelError::TensorShape { name, expected, found }
        if name == "blk.1.ffn_up.weight" && expected == &[256, 1024] && found == &[256, 1023]),
        "{e}"
    );
    assert_eq!(e.to_string(), "tensor 'blk.1.ffn_up.weight' has shape [256, 1023], expected [256, 1024]");
}

#[test]
fn missing_projection_bias_is_named() {
    let bytes = rewrite_model("tiny-qwen2.gguf", keep_kv, |n, d| (n != "blk.0.attn_q.bias").then(|| d.to_vec()));
    let e = load_err(&bytes);
    println!("{e}");
    assert!(matches!(&e, ModelError::MissingTensor(n) if n == "blk.0.attn_q.bias"), "{e}");
    assert_eq!(e.to_string(), "missing required tensor 'blk.0.attn_q.bias'");
}

#[test]
fn small_tensors_of_the_new_layouts_of_the_wrong_length_are_named() {
    // A bias, Llama 3's rope_freqs and LongRoPE's long factors, each half as long.
    for (file, tensor, expected) in [
        ("tiny-qwen2.gguf", "blk.1.attn_k.bias", 128),
        ("tiny-llama3.gguf", "rope_freqs.weight", 32),
        ("tiny-phi3.gguf", "rope_factors_long.weight", 32),
    ] {
        let bytes = rewrite_model(file, keep_kv, |n, d| Some(if n == tensor { vec![d[0] / 2] } else { d.to_vec() }));
        let e = load_err(&bytes);
        println!("{e}");
        assert!(
            matches!(&e, ModelError::TensorShape { name, expected: x, found }
            if name == tensor && x == &[expected] && found == &[expected / 2]),
            "{file}: {e}"
        );
    }
}

#[test]
fn missing_qk_norm_is_named() {
    let bytes = rewrite_model("tiny-qwen3.gguf", keep_kv, |n, d| (n != "blk.2.attn_k_norm.weight").then(|| d.to_vec()));
    let e = load_err(&bytes);
    println!("{e}");
    assert!(matches!(&e, ModelError::MissingTensor(n) if n == "blk.2.attn_k_norm.weight"), "{e}");
}

#[test]
fn unknown_rope_scaling_type_is_named() {
    let bytes = with_model_kv("tiny-llama3.gguf", "llama.rope.scaling.type", Value::String("yarn".into()));
    let e = load_err(&bytes);
    println!("{e}");
    assert!(matches!(&e, ModelError::BadMetadata { key, .. } if key == "llama.rope.scaling.type"), "{e}");
    let message = e.to_string();
    assert_eq!(
        message,
        "bad metadata 'llama.rope.scaling.type': RoPE scaling 'yarn' is not supported (none, linear, llama3 are)"
    );
}

#[test]
fn non_numeric_softcap_is_named() {
    let bytes = with_model_kv("tiny-gemma2.gguf", "gemma2.attn_logit_softcapping", Value::String("high".into()));
    let e = load_err(&bytes);
    println!("{e}");
    assert!(matches!(&e, ModelError::BadMetadata { key, .. } if key == "gemma2.attn_logit_softcapping"), "{e}");
    assert_eq!(
        e.to_string(),
        "bad metadata 'gemma2.attn_logit_softcapping': expected a finite number, found string 'high'"
    );
}

#[test]
fn unsupported_architecture_lists_every_supported_one() {
    let bytes = rewrite(
        |k, v| Some(if k == "general.architecture" { Value::String("mamba".into()) } else { v.clone() }),
        keep_tensor,
    );
    let e = load_err(&bytes);
    assert!(matches!(&e, ModelError::UnsupportedArchitecture(a) if a == "mamba"), "{e}");
    let message = e.to_string();
    assert!(message.starts_with("unsupported architecture 'mamba'"), "{message}");
    for arch in ["llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3"] {
        assert!(message.contains(arch), "{message}");
    }
}

/// Synthetic model `file` with metadata `key` set to `value` (added if absent).
fn with_model_kv(file: &str, key: &str, value: Value) -> Vec<u8> {
    let bytes = std::fs::read(synthetic(file)).expect("synthetic model");
    let present = parse_header(&bytes).expect("header").metadata.iter().any(|(k, _)| k == key);
    let set = |k: &str, v: &Value| Some(if k == key { value.clone() } else { v.clone() });
    if present {
        return rewrite_model(file, set, keep_tensor);
    }
    // Absent: rebuilt with the key written after the architecture name.
    let header = parse_header(&bytes).expect("header");
    let mut w = GgufWriter::new(header.version);
    for (k, v) in header.metadata.iter() {
        w.add_kv(k, v.clone());
        if k == "general.architecture" {
            w.add_kv(key, value.clone());
        }
    }
    for t in &header.tensors {
        let range = header.tensor_file_range(t);
        w.add_tensor(&t.name, &t.dims, t.ty, &bytes[range.start as usize..range.end as usize]).expect("tensor");
    }
    w.to_bytes()
}
