//! Small hand-made vocabularies: bad metadata is an error (never a panic), and the
//! llama.cpp rules the real models do not exercise (space prefix, byte fallback to
//! nothing, lstrip/rstrip, BOS/EOS defaults) behave as llama.cpp's do.

use kindling_gguf::{Array, Metadata, Value};
use kindling_tokenizer::{ChatTemplate, StreamDecoder, Tokenizer, TokenizerError, TokenizerKind};

fn strings(v: &[&str]) -> Value {
    Value::Array(Array::String(v.iter().map(|s| s.to_string()).collect()))
}

fn md(entries: Vec<(&str, Value)>) -> Metadata {
    let mut m = Metadata::new();
    for (k, v) in entries {
        m.insert(k.to_string(), v);
    }
    m
}

/// A tiny byte-level BPE vocabulary: "a", "b", "Ġ", "ab", "Ġab", "<|end|>".
fn bpe(extra: Vec<(&str, Value)>) -> Metadata {
    let mut e = vec![
        ("tokenizer.ggml.model", Value::String("gpt2".into())),
        ("tokenizer.ggml.pre", Value::String("gpt-2".into())),
        ("tokenizer.ggml.tokens", strings(&["a", "b", "Ġ", "ab", "Ġab", "<|end|>"])),
        ("tokenizer.ggml.token_type", Value::Array(Array::I32(vec![1, 1, 1, 1, 1, 3]))),
        ("tokenizer.ggml.merges", strings(&["a b", "Ġ ab"])),
        ("tokenizer.ggml.eos_token_id", Value::U32(5)),
    ];
    for (k, v) in extra {
        e.retain(|(key, _)| *key != k);
        e.push((k, v));
    }
    md(e)
}

/// A tiny SentencePiece vocabulary without byte tokens.
fn spm(extra: Vec<(&str, Value)>) -> Metadata {
    let mut e = vec![
        ("tokenizer.ggml.model", Value::String("llama".into())),
        ("tokenizer.ggml.tokens", strings(&["<unk>", "<s>", "</s>", "▁", "h", "i", "▁h", "▁hi", "hi", "<0x21>"])),
        (
            "tokenizer.ggml.scores",
            Value::Array(Array::F32(vec![0.0, 0.0, 0.0, -1.0, -2.0, -2.0, -1.5, -0.5, -1.0, 0.0])),
        ),
        ("tokenizer.ggml.token_type", Value::Array(Array::I32(vec![2, 3, 3, 1, 1, 1, 1, 1, 1, 6]))),
    ];
    for (k, v) in extra {
        e.retain(|(key, _)| *key != k);
        e.push((k, v));
    }
    md(e)
}

fn err(m: &Metadata) -> TokenizerError {
    Tokenizer::from_metadata(m).expect_err("metadata should be refused")
}

fn without(m: &Metadata, key: &str) -> Metadata {
    let mut out = Metadata::new();
    for (k, v) in m.iter() {
        if k != key {
            out.insert(k.to_string(), v.clone());
        }
    }
    out
}

#[test]
fn good_tiny_vocabularies_work() {
    let t = Tokenizer::from_metadata(&bpe(vec![])).unwrap();
    assert_eq!(t.encode("ab ab", false, false), [3, 4]);
    assert_eq!(t.decode(&[3, 4], false), "ab ab");
    // gpt-2's pre-tokenizer keeps llama.cpp's clean-up of spaces when decoding.
    assert_eq!(t.bos(), None, "default BOS 11 is outside the vocabulary");
    assert!(t.is_end_of_generation(5));
}

#[test]
fn missing_tokens_array() {
    let m = without(&bpe(vec![]), "tokenizer.ggml.tokens");
    assert_eq!(err(&m), TokenizerError::MissingKey("tokenizer.ggml.tokens"));
    let m = bpe(vec![("tokenizer.ggml.tokens", Value::Array(Array::I32(vec![1, 2])))]);
    assert!(matches!(err(&m), TokenizerError::WrongType { key: "tokenizer.ggml.tokens", .. }));
    let m = bpe(vec![("tokenizer.ggml.tokens", strings(&[]))]);
    assert_eq!(err(&m), TokenizerError::BadVocabSize(0));
}

#[test]
fn token_type_length_mismatch() {
    let m = bpe(vec![("tokenizer.ggml.token_type", Value::Array(Array::I32(vec![1, 1, 1])))]);
    assert_eq!(err(&m), TokenizerError::LengthMismatch { key: "tokenizer.ggml.token_type", expected: 6, found: 3 });
    let m = spm(vec![("tokenizer.ggml.scores", Value::Array(Array::F32(vec![0.0])))]);
    assert!(matches!(err(&m), TokenizerError::LengthMismatch { key: "tokenizer.ggml.scores", .. }));
    let m = bpe(vec![("tokenizer.ggml.token_type", Value::Array(Array::String(vec!["1".into(); 6])))]);
    assert!(matches!(err(&m), TokenizerError::WrongType { key: "tokenizer.ggml.token_type", .. }));
}

#[test]
fn bad_merges() {
    let m = bpe(vec![("tokenizer.ggml.merges", strings(&["a b", "ab"]))]);
    assert_eq!(err(&m), TokenizerError::BadMerge { index: 1, entry: "ab".into() });
    let m = bpe(vec![("tokenizer.ggml.merges", strings(&["a "]))]);
    assert!(matches!(err(&m), TokenizerError::BadMerge { index: 0, .. }));
    let m = without(&bpe(vec![]), "tokenizer.ggml.merges");
    assert_eq!(err(&m), TokenizerError::MissingKey("tokenizer.ggml.merges"));
}

#[test]
fn special_ids_out_of_range() {
    let m = bpe(vec![("tokenizer.ggml.bos_token_id", Value::U32(6))]);
    assert_eq!(err(&m), TokenizerError::TokenIdOutOfRange { key: "tokenizer.ggml.bos_token_id", id: 6, vocab_size: 6 });
    let m = bpe(vec![("tokenizer.ggml.eos_token_id", Value::I32(-1))]);
    assert!(matches!(err(&m), TokenizerError::WrongType { key: "tokenizer.ggml.eos_token_id", .. }));
    // Asking for BOS with no BOS token in the vocabulary.
    let m = bpe(vec![("tokenizer.ggml.add_bos_token", Value::Bool(true))]);
    assert!(matches!(err(&m), TokenizerError::MissingToken(_)));
    let m = bpe(vec![("tokenizer.ggml.add_bos_token", Value::U8(1))]);
    assert!(matches!(err(&m), TokenizerError::WrongType { .. }));
}

#[test]
fn unknown_models_and_pre_tokenizers() {
    let m = bpe(vec![("tokenizer.ggml.model", Value::String("t5".into()))]);
    assert_eq!(err(&m), TokenizerError::UnsupportedModel("t5".into()));
    // WordPiece is supported, but this 6-token vocabulary has no [CLS] at llama.cpp's
    // default id 101 (and no bos_token_id key).
    let m = bpe(vec![("tokenizer.ggml.model", Value::String("bert".into()))]);
    assert!(matches!(err(&m), TokenizerError::MissingToken(_)));
    assert_eq!(err(&without(&bpe(vec![]), "tokenizer.ggml.model")), TokenizerError::MissingKey("tokenizer.ggml.model"));
    let m = bpe(vec![("tokenizer.ggml.pre", Value::String("no-such-pre".into()))]);
    assert_eq!(err(&m), TokenizerError::UnknownPreTokenizer("no-such-pre".into()));
    let m = bpe(vec![("tokenizer.ggml.pre", Value::String("tekken".into()))]);
    assert_eq!(err(&m), TokenizerError::UnsupportedPreTokenizer("tekken".into()));
    // No pre key at all: llama.cpp's `default`.
    let t = Tokenizer::from_metadata(&without(&bpe(vec![]), "tokenizer.ggml.pre")).unwrap();
    assert_eq!(t.encode("ab", false, false), [3]);
}

#[test]
fn duplicate_tokens() {
    let m = bpe(vec![("tokenizer.ggml.tokens", strings(&["a", "b", "Ġ", "ab", "a", "<|end|>"]))]);
    assert_eq!(err(&m), TokenizerError::DuplicateToken { id: 4, first: 0 });
}

#[test]
fn errors_print_what_is_wrong() {
    let e = err(&bpe(vec![("tokenizer.ggml.bos_token_id", Value::U32(99))]));
    assert_eq!(e.to_string(), "`tokenizer.ggml.bos_token_id` = 99 is outside the vocabulary of 6 tokens");
    let e = ChatTemplate::new("{% if %}").unwrap_err();
    assert!(matches!(e, TokenizerError::Template(_)));
}

#[test]
fn spm_defaults_prefix_and_fallback() {
    let t = Tokenizer::from_metadata(&spm(vec![])).unwrap();
    // llama defaults: BOS 1 added, a space prefix, unknown 0.
    assert!(t.add_bos() && t.adds_space_prefix());
    assert_eq!(t.encode("hi", true, false), [1, 7]);
    assert_eq!(t.encode("hi hi", false, false), [7, 7]);
    // "!" falls back to <0x21>; "?" has no byte token and is dropped.
    assert_eq!(t.encode("hi!?", false, false), [7, 9]);
    // Decoding drops the prefix space of the first piece only.
    assert_eq!(t.decode(&[1, 7, 7], false), " hi hi");
    assert_eq!(t.decode(&[7, 7], false), "hi hi");
    assert_eq!(t.decode(&[1, 7], true), "<s> hi");
    // After a special token the next text gets a prefix again.
    assert_eq!(t.encode("hi</s>hi", false, true), [7, 2, 7]);
    // Without special parsing "</s>" is text: "<", "/", "s", ">" have no tokens and
    // no byte tokens, so they vanish (llama.cpp would abort here; we skip them).
    assert_eq!(t.encode("hi</s>hi", false, false), [7, 8]);
    let mut d = StreamDecoder::new(false);
    let s: String = [1, 7, 7].iter().map(|&id| d.push(&t, id)).collect();
    assert_eq!(s + &d.flush(), " hi hi");
    // add_space_prefix = false.
    let t = Tokenizer::from_metadata(&spm(vec![("tokenizer.ggml.add_space_prefix", Value::Bool(false))])).unwrap();
    assert_eq!(t.encode("hi", false, false), [8]);
}

#[test]
fn phi3_rstrip_and_jina_mask_lstrip() {
    // Named phi-3: special tokens swallow the whitespace after them.
    let m = spm(vec![
        ("general.name", Value::String("Phi-3 mini".into())),
        ("tokenizer.ggml.add_space_prefix", Value::Bool(false)),
    ]);
    let t = Tokenizer::from_metadata(&m).unwrap();
    assert_eq!(t.encode("</s>  hi", false, true), [2, 8]);
    let t = Tokenizer::from_metadata(&spm(vec![("tokenizer.ggml.add_space_prefix", Value::Bool(false))])).unwrap();
    assert_eq!(t.encode("</s>  hi", false, true), [2, 3, 7]);

    // jina-v2-*: "<mask>" swallows the whitespace before it.
    let tokens = strings(&["a", "b", "Ġ", "ab", "Ġab", "<|end|>", "<mask>"]);
    let types = Value::Array(Array::I32(vec![1, 1, 1, 1, 1, 3, 3]));
    let m = bpe(vec![
        ("tokenizer.ggml.tokens", tokens.clone()),
        ("tokenizer.ggml.token_type", types.clone()),
        ("tokenizer.ggml.pre", Value::String("jina-v2-de".into())),
    ]);
    let t = Tokenizer::from_metadata(&m).unwrap();
    assert_eq!(t.encode("ab  <mask> ab", false, true), [3, 6, 4]);
    let m = bpe(vec![("tokenizer.ggml.tokens", tokens), ("tokenizer.ggml.token_type", types)]);
    let t = Tokenizer::from_metadata(&m).unwrap();
    assert_eq!(t.encode("ab  <mask> ab", false, true), [3, 2, 2, 6, 4]);
}

#[test]
fn llama3_style_bos_default() {
    // `llama-bpe` turns BOS on by default, but the vocabulary has no token 11.
    let m = bpe(vec![("tokenizer.ggml.pre", Value::String("llama-bpe".into()))]);
    assert!(matches!(err(&m), TokenizerError::MissingToken(_)));
    let m = bpe(vec![
        ("tokenizer.ggml.pre", Value::String("llama-bpe".into())),
        ("tokenizer.ggml.bos_token_id", Value::U32(5)),
    ]);
    let t = Tokenizer::from_metadata(&m).unwrap();
    assert_eq!(t.encode("ab", true, false), [5, 3]);
}

/// Random text (including pieces of special tokens and odd code points) and random
/// ids never panic.
#[test]
fn random_input_never_panics() {
    let toks = [
        Tokenizer::from_metadata(&bpe(vec![])).unwrap(),
        Tokenizer::from_metadata(&spm(vec![])).unwrap(),
        Tokenizer::from_metadata(&spm(vec![("general.name", Value::String("phi3".into()))])).unwrap(),
    ];
    let alphabet: Vec<char> =
        "ab hi!?<>|/se\n\t\r\u{0}\u{301}\u{200d}é中😀\u{FFFD}\u{10FFFF}\u{E000}\u{2581}Ġ".chars().collect();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let len = (next() % 40) as usize;
        let mut s = String::new();
        for _ in 0..len {
            match next() % 8 {
                0 => s.push_str("</s>"),
                1 => s.push_str("<|end|>"),
                _ => s.push(alphabet[(next() % alphabet.len() as u64) as usize]),
            }
        }
        for t in &toks {
            for (a, b) in [(false, false), (true, true), (true, false)] {
                let ids = t.encode(&s, a, b);
                assert!(ids.iter().all(|&id| (id as usize) < t.vocab_size()));
                let _ = t.decode(&ids, b);
            }
            let ids: Vec<u32> = (0..len).map(|_| (next() % 20) as u32).chain([u32::MAX]).collect();
            let text = t.decode(&ids, true);
            let mut d = StreamDecoder::new(true);
            let mut out: String = ids.iter().map(|&id| d.push(t, id)).collect();
            out.push_str(&d.flush());
            // No clean-up of spaces in the SentencePiece vocabularies: the stream is the decode.
            if t.kind() == TokenizerKind::SentencePiece {
                assert_eq!(out, text);
            }
        }
    }
}
