//! Shared helpers for the tokenizer's integration tests: the real models' metadata,
//! built tokenizers (once per process), the corpus and the llama.cpp references.

#![allow(dead_code)]

use std::io::Read;
use std::sync::OnceLock;

use kindling_gguf::{HeaderParser, Limits, Metadata, Progress};
use kindling_testdata::{fixture, RealModel};
use kindling_tokenizer::Tokenizer;
use serde_json::Value as Json;

/// The model's metadata, read with the gguf crate's incremental parser (only the
/// header's bytes are read).
pub fn read_metadata(model: RealModel) -> Metadata {
    read_metadata_path(&model.path())
}

/// The metadata of the GGUF file at `path` (header bytes only).
pub fn read_metadata_path(path: &std::path::Path) -> Metadata {
    let mut file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let len = file.metadata().expect("file metadata").len();
    let mut parser = HeaderParser::new(Limits::default()).with_file_len(len);
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = file.read(&mut buf).expect("read model");
        assert!(n > 0, "{}: file ended inside the header", path.display());
        match parser.feed(&buf[..n]).expect("parse GGUF header") {
            Progress::Done { header, .. } => return header.metadata,
            Progress::NeedMore(_) => {}
        }
    }
}

/// One cell per real model, indexed by `model as usize`.
type Cells<T> = [OnceLock<T>; 4];

const fn cells<T>() -> Cells<T> {
    [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()]
}

pub fn metadata(model: RealModel) -> &'static Metadata {
    static CELLS: Cells<Metadata> = cells();
    CELLS[model as usize].get_or_init(|| read_metadata(model))
}

pub fn tokenizer(model: RealModel) -> &'static Tokenizer {
    static CELLS: Cells<Tokenizer> = cells();
    CELLS[model as usize].get_or_init(|| Tokenizer::from_metadata(metadata(model)).expect("tokenizer from metadata"))
}

pub fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let j = read_json("tokenizer_corpus.json");
        j["strings"]
            .as_array()
            .expect("corpus strings")
            .iter()
            .map(|s| s.as_str().expect("corpus string").to_string())
            .collect()
    })
}

pub fn reference(model: RealModel) -> &'static Json {
    static CELLS: Cells<Json> = cells();
    CELLS[model as usize].get_or_init(|| {
        let r = read_json(&format!("tokenizer_ref_{}.json", model.key()));
        assert_eq!(
            r["corpus_size"].as_u64(),
            Some(corpus().len() as u64),
            "tokenizer_ref_{}.json is stale: rerun tests/scripts/gen_tokenizer_refs.py",
            model.key()
        );
        r
    })
}

/// The real models these tests cover: the two small ones and both Qwen2.5-Coder.
pub const MODELS: [RealModel; 4] =
    [RealModel::SmolLm2, RealModel::Gemma3, RealModel::Qwen25Coder05B, RealModel::Qwen25Coder15B];

/// The fixture holding `model`'s corpus ids and decodings: its own, or the one its
/// `"tokenization"` key names (the Qwen 1.5B shares the 0.5B's tokenizer).
pub fn token_reference(model: RealModel) -> &'static Json {
    let r = reference(model);
    match r["tokenization"].as_str() {
        None => r,
        Some(key) => {
            let base = MODELS.into_iter().find(|m| m.key() == key).unwrap_or_else(|| panic!("no model {key}"));
            token_reference(base)
        }
    }
}

pub fn read_json(name: &str) -> Json {
    let path = fixture(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn ids(v: &Json) -> Vec<u32> {
    v.as_array().expect("id list").iter().map(|x| x.as_u64().expect("id") as u32).collect()
}

/// A metadata table like `md` with key `k` replaced by `v` (or removed when `None`).
pub fn with_key(md: &Metadata, k: &str, v: Option<kindling_gguf::Value>) -> Metadata {
    let mut out = Metadata::new();
    let mut v = v;
    for (key, value) in md.iter() {
        if key == k {
            if let Some(nv) = v.take() {
                out.insert(key.to_string(), nv);
            }
        } else {
            out.insert(key.to_string(), value.clone());
        }
    }
    if let Some(nv) = v {
        out.insert(k.to_string(), nv);
    }
    out
}
