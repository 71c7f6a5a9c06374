//! The WordPiece (`bert`) tokenizer against llama.cpp: nomic-embed-text-v1.5's
//! vocabulary on the whole tokenizer corpus (ids with and without special-token parsing,
//! decoding, vocabulary facts) and on every input of the embedding references, and the
//! synthetic tiny-bert's vocabulary on its embedding references. References come from
//! `tests/scripts/gen_tokenizer_refs.py` (llama.cpp's C API) and
//! `tests/scripts/gen_embed_refs.py` (the ids `llama-embedding` embedded).

mod common;

use std::sync::OnceLock;

use common::{corpus, ids, read_json, read_metadata_path, with_key};
use kindling_gguf::Value;
use kindling_testdata::{models_dir, synthetic};
use kindling_tokenizer::{Tokenizer, TokenizerError, TokenizerKind};
use serde_json::Value as Json;

const NOMIC: &str = "nomic-embed-text-v1.5.f16.gguf";

fn nomic() -> &'static Tokenizer {
    static TOK: OnceLock<Tokenizer> = OnceLock::new();
    TOK.get_or_init(|| {
        let md = read_metadata_path(&models_dir().join(NOMIC));
        Tokenizer::from_metadata(&md).expect("nomic tokenizer")
    })
}

fn tiny_bert() -> Tokenizer {
    Tokenizer::from_metadata(&read_metadata_path(&synthetic("tiny-bert.gguf"))).expect("tiny-bert tokenizer")
}

fn nomic_ref() -> &'static Json {
    static REF: OnceLock<Json> = OnceLock::new();
    REF.get_or_init(|| {
        let r = read_json("tokenizer_ref_nomic.json");
        assert_eq!(r["corpus_size"].as_u64(), Some(corpus().len() as u64), "tokenizer_ref_nomic.json is stale");
        r
    })
}

/// Encodes every corpus string; returns the number that match, printing the first misses.
fn corpus_matches(tok: &Tokenizer, refs: &[Json], fallback: &[Json], parse_special: bool) -> usize {
    let mut ok = 0;
    let mut shown = 0;
    for (i, text) in corpus().iter().enumerate() {
        let want = if refs[i].is_null() { ids(&fallback[i]) } else { ids(&refs[i]) };
        let got = tok.encode(text, true, parse_special);
        if got == want {
            ok += 1;
        } else if shown < 8 {
            shown += 1;
            eprintln!("nomic parse_special={parse_special} #{i} {text:?}\n  llama.cpp: {want:?}\n  ours:      {got:?}");
        }
    }
    ok
}

#[test]
fn nomic_corpus_encodes_like_llama_cpp() {
    let tok = nomic();
    let r = nomic_ref();
    let plain = r["ids"].as_array().expect("ids");
    let special = r["ids_special"].as_array().expect("ids_special");
    let n = corpus().len();
    let a = corpus_matches(tok, plain, plain, false);
    let b = corpus_matches(tok, special, plain, true);
    assert_eq!((a, b), (n, n), "nomic: encode differs from llama.cpp (see above)");
}

#[test]
fn nomic_corpus_decodes_like_llama_cpp() {
    let tok = nomic();
    let r = nomic_ref();
    let mut bad = 0;
    for (i, text) in corpus().iter().enumerate() {
        let plain = ids(&r["ids"][i]);
        let special = if r["ids_special"][i].is_null() { plain.clone() } else { ids(&r["ids_special"][i]) };
        let want = r["decoded"][i].as_str().unwrap_or(text);
        let want_sp = r["decoded_special"][i].as_str().unwrap_or(text);
        let (got, got_sp) = (tok.decode(&plain, false), tok.decode(&special, true));
        if got != want || got_sp != want_sp {
            bad += 1;
            if bad <= 8 {
                eprintln!("#{i} {text:?}\n  llama.cpp: {want:?} / {want_sp:?}\n  ours:      {got:?} / {got_sp:?}");
            }
        }
    }
    assert_eq!(bad, 0, "nomic: decode differs from llama.cpp (see above)");
}

#[test]
fn nomic_vocabulary_facts_match_llama_cpp() {
    let tok = nomic();
    let r = nomic_ref();
    assert_eq!(tok.kind(), TokenizerKind::WordPiece);
    assert_eq!(tok.vocab_size() as u64, r["n_tokens"].as_u64().unwrap());
    assert_eq!(tok.bos().map(u64::from), r["bos"].as_u64());
    assert_eq!(tok.eos().map(u64::from), r["eos"].as_u64());
    assert_eq!(tok.sep().map(u64::from), r["sep"].as_u64());
    assert_eq!(tok.add_bos(), r["add_bos"].as_bool().unwrap());
    assert_eq!(tok.end_of_generation_ids(), ids(&r["eog"]).as_slice());
    for (special, key) in [(false, "special_false"), (true, "special_true")] {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for id in 0..tok.vocab_size() as u32 {
            let p = tok.token_piece(id, special);
            h = fnv1a(h, &(p.len() as u32).to_le_bytes());
            h = fnv1a(h, p);
        }
        assert_eq!(format!("{h:016x}"), r["pieces_fnv1a"][key].as_str().unwrap(), "pieces {key}");
    }
    assert_eq!(tok.token_text(101), Some("[CLS]"));
    assert_eq!(tok.unk(), Some(100));
}

fn fnv1a(mut h: u64, data: &[u8]) -> u64 {
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Every input of an embedding reference tokenizes to the ids llama-embedding embedded
/// (`common_tokenize(add_special = true, parse_special = true)`).
fn embed_ref_ids_match(tok: &Tokenizer, fixture: &str) -> usize {
    let r = read_json(fixture);
    let cases = r["cases"].as_array().expect("cases");
    let mut n = 0;
    for c in cases {
        let text = c["text"].as_str().expect("text");
        let want = ids(&c["ids"]);
        assert_eq!(tok.encode(text, true, true), want, "{fixture} {}: {text:?}", c["name"]);
        n += 1;
    }
    n
}

#[test]
fn nomic_embedding_inputs_tokenize_like_llama_cpp() {
    let n = embed_ref_ids_match(nomic(), "embed_ref_nomic.json");
    assert!(n >= 10, "{n} cases");
}

#[test]
fn tiny_bert_embedding_inputs_tokenize_like_llama_cpp() {
    // The fixture was made from the same synthetic file (make_synthetic.py is deterministic).
    let sidecar: Json =
        serde_json::from_str(&std::fs::read_to_string(synthetic("tiny-bert.json")).expect("tiny-bert sidecar"))
            .expect("sidecar JSON");
    let r = read_json("embed_ref_tiny-bert.json");
    assert_eq!(r["model_sha256"], sidecar["sha256"], "embed_ref_tiny-bert.json is stale: rerun gen_embed_refs.py");
    let tok = tiny_bert();
    assert_eq!(tok.kind(), TokenizerKind::WordPiece);
    // No bos_token_id key: llama.cpp's default BOS for WordPiece, 101, is [CLS] here.
    assert_eq!(tok.bos(), Some(101));
    assert_eq!(tok.token_text(101), Some("[CLS]"));
    let n = embed_ref_ids_match(&tok, "embed_ref_tiny-bert.json");
    assert!(n >= 10, "{n} cases");
}

#[test]
fn wordpiece_specials_and_options() {
    let tok = tiny_bert();
    let (cls, sep) = (101, 102);
    let enc = tok.encode("Hello, World!", true, false);
    assert_eq!((enc[0], *enc.last().unwrap()), (cls, sep));
    assert_eq!(tok.encode("Hello", false, false).len(), 1, "no [CLS]/[SEP] without add_special");
    assert_eq!(tok.encode("", true, false), [cls, sep]);
    // A word no pieces cover is one [UNK]; case and accents are normalised away.
    assert_eq!(tok.encode("😀😀", false, false), [100]);
    assert_eq!(tok.encode("FOX", false, false), tok.encode("fox", false, false));
    assert_eq!(tok.encode("fóx", false, false), tok.encode("fox", false, false));
    // [CLS] in the text is a token only with parse_special.
    assert_eq!(tok.encode("[CLS]", false, true), [cls]);
    assert_ne!(tok.encode("[CLS]", false, false), [cls]);
    assert_eq!(tok.decode(&tok.encode("the fox, the dog.", true, false), false), " the fox, the dog.");

    // tokenizer.ggml.normalizer.lowercase = false keeps upper case (and, by default, accents).
    let md = read_metadata_path(&synthetic("tiny-bert.gguf"));
    let cased =
        Tokenizer::from_metadata(&with_key(&md, "tokenizer.ggml.normalizer.lowercase", Some(Value::Bool(false))))
            .expect("cased");
    assert_ne!(cased.encode("FOX", false, false), tok.encode("fox", false, false));

    // The bert tokenizer needs [CLS], [SEP] and [UNK]; an id past the vocabulary is refused.
    let small = with_key(&md, "tokenizer.ggml.seperator_token_id", Some(Value::U32(100_000)));
    assert!(matches!(Tokenizer::from_metadata(&small), Err(TokenizerError::TokenIdOutOfRange { .. })));
}
