//! The tokenizer against llama.cpp on the real models: every corpus string encodes to
//! the ids llama.cpp gives (with and without special-token parsing), decodes to the
//! text llama.cpp gives, streams without splitting characters, and the chat template
//! renders as Python's jinja2 renders it. References come from
//! `tests/scripts/gen_tokenizer_refs.py`.

mod common;

use std::time::Instant;

use common::{corpus, ids, metadata, reference, tokenizer, with_key};
use kindling_gguf::Value;
use kindling_testdata::RealModel;
use kindling_tokenizer::{ChatMessage, ChatTemplate, StreamDecoder, Tokenizer, TokenizerKind};
use serde_json::Value as Json;

/// Compares `encode` with the reference ids for every corpus string; returns
/// (matches, total) and prints the first mismatches with their strings.
fn compare_encode(name: &str, tok: &Tokenizer, refs: &[Json], parse_special: bool, fallback: Option<&[Json]>) -> (usize, usize) {
    let mut ok = 0;
    let mut shown = 0;
    for (i, text) in corpus().iter().enumerate() {
        let want = match (&refs[i], fallback) {
            (Json::Null, Some(fb)) => ids(&fb[i]),
            (r, _) => ids(r),
        };
        let got = tok.encode(text, true, parse_special);
        if got == want {
            ok += 1;
        } else if shown < 8 {
            shown += 1;
            eprintln!("{name} parse_special={parse_special} #{i} {text:?}\n  llama.cpp: {want:?}\n  ours:      {got:?}");
        }
    }
    eprintln!("{name} parse_special={parse_special}: {ok}/{} match llama.cpp", corpus().len());
    (ok, corpus().len())
}

fn model_parity(model: RealModel) {
    let tok = tokenizer(model);
    let r = reference(model);
    let plain = r["ids"].as_array().expect("ids");
    let special = r["ids_special"].as_array().expect("ids_special");
    let name = model.key();
    let (a, n) = compare_encode(name, tok, plain, false, None);
    let (b, _) = compare_encode(name, tok, special, true, Some(plain));
    assert_eq!((a, b), (n, n), "{name}: encode differs from llama.cpp (see above)");
}

#[test]
fn corpus_is_big_and_varied() {
    let c = corpus();
    assert!(c.len() >= 220, "corpus has {} strings", c.len());
    assert!(c.iter().any(|s| s.is_empty()));
    assert!(c.iter().any(|s| s.contains('\u{200d}')), "ZWJ emoji");
    assert!(c.iter().any(|s| s.contains("<|im_start|>")));
    assert!(c.iter().any(|s| s.contains("<start_of_turn>")));
}

#[test]
fn smollm2_encode_matches_llama_cpp() {
    model_parity(RealModel::SmolLm2);
}

#[test]
fn gemma3_encode_matches_llama_cpp() {
    model_parity(RealModel::Gemma3);
}

/// SmolLM2's vocabulary under other `tokenizer.ggml.pre` values, against llama.cpp
/// loading the same vocabulary with that pre-tokenizer.
#[test]
fn pre_tokenizer_variants_match_llama_cpp() {
    let r = reference(RealModel::SmolLm2);
    let base = r["ids"].as_array().expect("ids");
    let variants = r["pre_variants"].as_object().expect("pre_variants");
    assert!(variants.len() >= 5);
    let mut failed = Vec::new();
    for (pre, v) in variants {
        let md = with_key(metadata(RealModel::SmolLm2), "tokenizer.ggml.pre", Some(Value::String(pre.clone())));
        let tok = Tokenizer::from_metadata(&md).expect("variant tokenizer");
        assert_eq!(tok.kind(), TokenizerKind::Bpe { pre: pre.clone() });
        let refs = v["ids"].as_array().expect("variant ids");
        let (ok, n) = compare_encode(&format!("smollm2/{pre}"), &tok, refs, false, Some(base));
        // Decoding with this pre-tokenizer's clean-up rules.
        let decoded = v["decoded"].as_array().expect("variant decoded");
        let mut dec_ok = 0;
        for (i, text) in corpus().iter().enumerate() {
            let want = decoded[i].as_str().unwrap_or(text);
            let got = tok.decode(&tok.encode(text, true, false), false);
            if got == want {
                dec_ok += 1;
            } else {
                eprintln!("smollm2/{pre} decode #{i} {text:?}: llama.cpp {want:?}, ours {got:?}");
            }
        }
        if ok != n || dec_ok != n {
            failed.push(pre.clone());
        }
    }
    assert!(failed.is_empty(), "variants differing from llama.cpp: {failed:?}");
}

fn decode_parity(model: RealModel) {
    let tok = tokenizer(model);
    let r = reference(model);
    let plain = r["ids"].as_array().expect("ids");
    let special = r["ids_special"].as_array().expect("ids_special");
    let mut bad = 0;
    for (i, text) in corpus().iter().enumerate() {
        let p = ids(&plain[i]);
        let s = if special[i].is_null() { p.clone() } else { ids(&special[i]) };
        let want = r["decoded"][i].as_str().unwrap_or(text);
        let want_sp = r["decoded_special"][i].as_str().unwrap_or(text);
        let got = tok.decode(&p, false);
        let got_sp = tok.decode(&s, true);
        if got != want || got_sp != want_sp {
            bad += 1;
            eprintln!("{} decode #{i} {text:?}:\n  llama.cpp {want:?} / {want_sp:?}\n  ours      {got:?} / {got_sp:?}", model.key());
        }
    }
    assert_eq!(bad, 0, "{}: decode differs from llama_detokenize", model.key());
}

#[test]
fn decode_matches_llama_cpp() {
    decode_parity(RealModel::SmolLm2);
    decode_parity(RealModel::Gemma3);
}

/// decode(encode(s)) gives s back: neither model adds a space prefix or cleans
/// spaces, and BOS renders as nothing unless special tokens are rendered.
#[test]
fn decode_round_trips() {
    for model in RealModel::ALL {
        let tok = tokenizer(model);
        for text in corpus() {
            assert_eq!(&tok.decode(&tok.encode(text, true, false), false), text, "{}", model.key());
            let with_special = tok.decode(&tok.encode(text, true, true), true);
            let bos = if tok.add_bos() { tok.bos().and_then(|b| tok.token_text(b)).unwrap_or("") } else { "" };
            assert_eq!(with_special, format!("{bos}{text}"), "{}", model.key());
        }
    }
}

#[test]
fn vocabulary_facts_match_llama_cpp() {
    for model in RealModel::ALL {
        let tok = tokenizer(model);
        let r = reference(model);
        let name = model.key();
        assert_eq!(tok.vocab_size() as u64, r["n_tokens"].as_u64().unwrap(), "{name}");
        assert_eq!(tok.bos().map(u64::from), r["bos"].as_u64(), "{name}");
        assert_eq!(tok.eos().map(u64::from), r["eos"].as_u64(), "{name}");
        assert_eq!(tok.add_bos(), r["add_bos"].as_bool().unwrap(), "{name}");
        assert_eq!(tok.end_of_generation_ids(), ids(&r["eog"]).as_slice(), "{name}");
        for id in 0..tok.vocab_size() as u32 {
            assert_eq!(tok.is_end_of_generation(id), tok.end_of_generation_ids().contains(&id));
        }
        // Every token's bytes, as llama_token_to_piece gives them.
        for (special, key) in [(false, "special_false"), (true, "special_true")] {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for id in 0..tok.vocab_size() as u32 {
                let p = tok.token_piece(id, special);
                h = fnv1a(h, &(p.len() as u32).to_le_bytes());
                h = fnv1a(h, p);
            }
            assert_eq!(format!("{h:016x}"), r["pieces_fnv1a"][key].as_str().unwrap(), "{name} pieces {key}");
        }
        assert_eq!(tok.token_bytes(u32::MAX), b"");
        assert_eq!(tok.token_text(u32::MAX), None);
    }
    let smol = tokenizer(RealModel::SmolLm2);
    assert_eq!(smol.kind(), TokenizerKind::Bpe { pre: "smollm".into() });
    assert_eq!(smol.token_id("<|im_end|>"), Some(2));
    assert!(smol.is_end_of_generation(2));
    assert_eq!(smol.token_bytes(2), b"", "control tokens render empty by default");
    assert_eq!(smol.token_piece(2, true), b"<|im_end|>");
    let gemma = tokenizer(RealModel::Gemma3);
    assert_eq!(gemma.kind(), TokenizerKind::SentencePiece);
    assert_eq!(gemma.eot(), gemma.token_id("<end_of_turn>"));
    assert!(gemma.is_end_of_generation(gemma.token_id("<end_of_turn>").unwrap()));
}

fn fnv1a(mut h: u64, data: &[u8]) -> u64 {
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Fed one id at a time, the stream decoder emits only whole characters and adds up
/// to the full decode.
#[test]
fn stream_decoder_never_splits_characters() {
    let extra = [
        "👨‍👩‍👧‍👦 family, 🇯🇵 flag, 👍🏽 thumbs",
        "中文字符测试：你好世界。日本語のテキスト。한국어 텍스트.",
        "🙂🙃😉😊😇🥰😍🤩😘😗☺️😚😙🥲",
        "mixed: é ü ñ ç ß Ω ж ש ع ह ก 字 😀",
    ];
    for model in RealModel::ALL {
        let tok = tokenizer(model);
        let mut split_chars = 0;
        for text in corpus().iter().map(String::as_str).chain(extra) {
            let ids = tok.encode(text, true, false);
            let mut dec = StreamDecoder::new(false);
            let mut out = String::new();
            for &id in &ids {
                let piece = dec.push(tok, id);
                assert!(dec.pending().len() < 4, "{} held {:?}", model.key(), dec.pending());
                if !tok.token_bytes(id).is_empty() && piece.is_empty() {
                    split_chars += 1;
                }
                assert!(!piece.contains('\u{FFFD}') || text.contains('\u{FFFD}'), "{text:?}: {piece:?}");
                out.push_str(&piece);
            }
            out.push_str(&dec.flush());
            assert_eq!(out, tok.decode(&ids, false), "{}: {text:?}", model.key());
            assert_eq!(out, text);
        }
        // Byte-level tokens do split characters in these strings: the decoder held them.
        assert!(split_chars > 0, "{}: no token ended mid-character, the test proves nothing", model.key());
    }
    // Bytes that can never be UTF-8 come out as U+FFFD at once, as from_utf8_lossy does.
    let mut d = StreamDecoder::new(false);
    assert_eq!(d.push_bytes(&[0xE4, 0xB8]), "");
    assert_eq!(d.push_bytes(&[0xAD, b'a', 0xFF, 0xF0, 0x9F]), "中a\u{FFFD}");
    assert_eq!(d.flush(), "\u{FFFD}");
}

#[test]
fn smollm2_chat_template_matches_jinja2() {
    let md = metadata(RealModel::SmolLm2);
    let tmpl = ChatTemplate::from_metadata(md).expect("parse").expect("SmolLM2 has a template");
    let r = reference(RealModel::SmolLm2);
    let cases = r["chat"]["template"].as_array().expect("chat cases");
    assert!(!cases.is_empty());
    for case in cases {
        let messages: Vec<ChatMessage> = case["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| ChatMessage::new(m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
            .collect();
        let got = tmpl
            .render(
                &messages,
                case["add_generation_prompt"].as_bool().unwrap(),
                case["bos_token"].as_str().unwrap(),
                case["eos_token"].as_str().unwrap(),
            )
            .expect("render");
        assert_eq!(got, case["rendered"].as_str().unwrap());
    }
    // The ChatML a two-message conversation becomes, spelled out.
    let got = tmpl
        .render(&[ChatMessage::new("user", "Hi"), ChatMessage::new("assistant", "Hello!")], true, "", "")
        .unwrap();
    assert_eq!(
        got,
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
         <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>assistant\n"
    );
    // Rendered text tokenizes into the control tokens when special parsing is on.
    let tok = tokenizer(RealModel::SmolLm2);
    let ids = tok.encode(&got, true, true);
    assert_eq!(ids.iter().filter(|&&id| id == 1).count(), 4, "<|im_start|> x4");
}

#[test]
fn builtin_templates_match_llama_cpp() {
    let r = reference(RealModel::Gemma3);
    let builtin = r["chat"]["builtin"].as_object().expect("builtin");
    for (name, case) in builtin {
        let messages: Vec<ChatMessage> = case["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| ChatMessage::new(m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
            .collect();
        let tmpl = ChatTemplate::builtin(name).expect("builtin exists");
        let got = tmpl.render(&messages, case["add_generation_prompt"].as_bool().unwrap(), "", "").unwrap();
        assert_eq!(got, case["rendered"].as_str().unwrap(), "builtin {name}");
    }
    // Gemma 3's GGUF has no template; the fallback picks the gemma format.
    let md = metadata(RealModel::Gemma3);
    assert!(ChatTemplate::from_metadata(md).unwrap().is_none());
    let fb = ChatTemplate::fallback_for(tokenizer(RealModel::Gemma3)).expect("gemma fallback");
    assert!(fb.source().contains("<start_of_turn>"));
    let fb = ChatTemplate::fallback_for(tokenizer(RealModel::SmolLm2)).expect("chatml fallback");
    assert!(fb.source().contains("<|im_start|>"));
}

/// Loose bounds that catch an algorithmic regression; the release-mode numbers are
/// printed by `cargo test --release -p kindling-tokenizer --test parity -- --nocapture timing`.
#[test]
fn timing() {
    let (gemma_md, smol_md) = (metadata(RealModel::Gemma3), metadata(RealModel::SmolLm2));
    let t = Instant::now();
    let gemma = Tokenizer::from_metadata(gemma_md).unwrap();
    let build_gemma = t.elapsed();
    let t = Instant::now();
    let smol = Tokenizer::from_metadata(smol_md).unwrap();
    let build_smol = t.elapsed();
    eprintln!("build: gemma3 {build_gemma:?}, smollm2 {build_smol:?}");
    assert!(build_gemma.as_secs_f64() < 5.0, "building took {build_gemma:?}");

    let mut mixed = String::new();
    for s in corpus().iter().filter(|s| s.len() < 200) {
        if mixed.len() >= 2048 {
            break;
        }
        mixed.push_str(s);
        mixed.push(' ');
    }
    let texts = [
        ("mixed corpus", mixed),
        ("one 2 KB word", "abcdefghij".repeat(205)),
        ("CJK", "我爱自然语言处理。".repeat(76)),
        ("spaces", " ".repeat(2048)),
        ("emoji", "👨‍👩‍👧‍👦🙂".repeat(68)),
    ];
    for (name, text) in &texts {
        for (model, tok) in [("gemma3", &gemma), ("smollm2", &smol)] {
            let runs = 10;
            let t = Instant::now();
            let mut n = 0;
            for _ in 0..runs {
                n = tok.encode(text, true, true).len();
            }
            let per = t.elapsed() / runs;
            eprintln!("encode {model} {name}: {} bytes -> {n} tokens in {per:?}", text.len());
            assert!(per.as_secs_f64() < 0.25, "{model} {name}: encoding took {per:?}");
        }
    }
}
