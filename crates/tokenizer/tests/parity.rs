//! The tokenizer against llama.cpp on the real models: every corpus string encodes to
//! the ids llama.cpp gives (with and without special-token parsing), decodes to the
//! text llama.cpp gives, streams without splitting characters, and the chat template
//! renders as Python's jinja2 (SmolLM2) and transformers' apply_chat_template (Qwen2.5-Coder,
//! tools included) render it. References come from
//! `tests/scripts/gen_tokenizer_refs.py`.

mod common;

use std::time::Instant;

use common::{corpus, ids, metadata, reference, token_reference, tokenizer, with_key, MODELS};
use kindling_gguf::Value;
use kindling_testdata::RealModel;
use kindling_tokenizer::{ChatMessage, ChatTemplate, StreamDecoder, Tokenizer, TokenizerKind};
use serde_json::Value as Json;

/// Compares `encode` with the reference ids for every corpus string; returns
/// (matches, total) and prints the first mismatches with their strings.
fn compare_encode(
    name: &str,
    tok: &Tokenizer,
    refs: &[Json],
    parse_special: bool,
    fallback: Option<&[Json]>,
) -> (usize, usize) {
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
            eprintln!(
                "{name} parse_special={parse_special} #{i} {text:?}\n  llama.cpp: {want:?}\n  ours:      {got:?}"
            );
        }
    }
    eprintln!("{name} parse_special={parse_special}: {ok}/{} match llama.cpp", corpus().len());
    (ok, corpus().len())
}

fn model_parity(model: RealModel) {
    let tok = tokenizer(model);
    let r = token_reference(model);
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

/// Qwen2.5-Coder: gpt2 BPE with the `qwen2` pre-tokenizer (digits one at a time),
/// 151,936 tokens, ~151k merges, control tokens (`<|im_start|>`, `<|endoftext|>`,
/// `<|fim_*|>`, ...) and the user-defined `<tool_call>`/`</tool_call>`, which split
/// out even without special parsing.
#[test]
fn qwen25_05b_encode_matches_llama_cpp() {
    model_parity(RealModel::Qwen25Coder05B);
    let tok = tokenizer(RealModel::Qwen25Coder05B);
    assert_eq!(tok.kind(), TokenizerKind::Bpe { pre: "qwen2".into() });
    let call = tok.token_id("<tool_call>").expect("<tool_call>");
    assert!(!tok.is_control(call));
    assert_eq!(tok.encode("<tool_call>", true, false), [call], "user-defined tokens split out without parse_special");
    let im_start = tok.token_id("<|im_start|>").expect("<|im_start|>");
    assert!(tok.is_control(im_start));
    assert_ne!(tok.encode("<|im_start|>", true, false), [im_start]);
    assert_eq!(tok.encode("<|im_start|>", true, true), [im_start]);
    assert_eq!(tok.encode("2024", false, false).len(), 4, "qwen2 splits digits one by one");
}

/// The 1.5B has the 0.5B's tokenizer (the generator checks the GGUF arrays and
/// llama.cpp's ids are equal): the same corpus ids, from the 0.5B's fixture.
#[test]
fn qwen25_15b_encode_matches_llama_cpp() {
    assert_eq!(reference(RealModel::Qwen25Coder15B)["tokenization"].as_str(), Some(RealModel::Qwen25Coder05B.key()));
    for k in ["tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges", "tokenizer.ggml.pre"] {
        assert!(
            metadata(RealModel::Qwen25Coder15B).get(k) == metadata(RealModel::Qwen25Coder05B).get(k),
            "{k} differs between the Qwen models"
        );
    }
    model_parity(RealModel::Qwen25Coder15B);
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
    let r = token_reference(model);
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
            eprintln!(
                "{} decode #{i} {text:?}:\n  llama.cpp {want:?} / {want_sp:?}\n  ours      {got:?} / {got_sp:?}",
                model.key()
            );
        }
    }
    assert_eq!(bad, 0, "{}: decode differs from llama_detokenize", model.key());
}

#[test]
fn decode_matches_llama_cpp() {
    for model in MODELS {
        decode_parity(model);
    }
}

/// decode(encode(s)) gives s back: no model here adds a space prefix or cleans
/// spaces, and BOS renders as nothing unless special tokens are rendered.
#[test]
fn decode_round_trips() {
    for model in MODELS {
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
    for model in MODELS {
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
    // Both Qwen models: the same facts, so the same fixture values.
    let (a, b) = (reference(RealModel::Qwen25Coder05B), reference(RealModel::Qwen25Coder15B));
    for k in ["n_tokens", "bos", "eos", "eot", "add_bos", "eog", "pieces_fnv1a"] {
        assert_eq!(a[k], b[k], "qwen {k}");
    }
    let qwen = tokenizer(RealModel::Qwen25Coder05B);
    assert_eq!(qwen.vocab_size(), 151_936);
    assert_eq!(qwen.eot(), qwen.token_id("<|im_end|>"));
    assert!(!qwen.add_bos());
    for t in ["<|im_end|>", "<|endoftext|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"] {
        assert!(qwen.is_end_of_generation(qwen.token_id(t).unwrap()), "{t}");
    }
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
        "Qwen: 通义千问，阿里云。𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠀀𠀁 ﷽ 🧑🏾‍💻 e\u{301}\u{302}",
    ];
    for model in MODELS {
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

/// Qwen's vocabulary has thousands of tokens that are pieces of a UTF-8 character
/// (byte-level BPE over CJK and emoji). Random sequences mixing them with whole
/// tokens: every `push` returns whole characters only (U+FFFD only for bytes that can
/// never complete, exactly where a whole-text lossy decode puts them), nothing waits
/// longer than an incomplete character, and the stream adds up to that decode.
#[test]
fn qwen25_stream_decoder_on_partial_characters() {
    let tok = tokenizer(RealModel::Qwen25Coder05B);
    let n = tok.vocab_size() as u32;
    let partial: Vec<u32> = (0..n).filter(|&id| std::str::from_utf8(tok.token_bytes(id)).is_err()).collect();
    eprintln!("qwen2.5: {} of {n} tokens are not whole UTF-8", partial.len());
    assert!(partial.len() > 1000);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |m: u32| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) % u64::from(m)) as u32
    };
    let mut held = 0;
    for _ in 0..3000 {
        let len = 1 + next(12);
        let ids: Vec<u32> = (0..len)
            .map(|_| if next(3) == 0 { next(n) } else { partial[next(partial.len() as u32) as usize] })
            .collect();
        let mut all = Vec::new();
        let mut dec = StreamDecoder::new(false);
        let mut out = String::new();
        for &id in &ids {
            all.extend_from_slice(tok.token_bytes(id));
            let piece = dec.push(tok, id);
            // What came out so far is exactly the lossy decode of the bytes so far,
            // minus an incomplete character at the end.
            let done = all.len() - dec.pending().len();
            assert!(dec.pending().len() < 4);
            out.push_str(&piece);
            assert_eq!(out, String::from_utf8_lossy(&all[..done]), "{ids:?}");
            held += usize::from(!dec.pending().is_empty());
        }
        out.push_str(&dec.flush());
        assert_eq!(out, String::from_utf8_lossy(&all), "{ids:?}");
        assert_eq!(out, tok.decode(&ids, false), "{ids:?}");
    }
    assert!(held > 1000, "the decoder held an incomplete character only {held} times");
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
    let got =
        tmpl.render(&[ChatMessage::new("user", "Hi"), ChatMessage::new("assistant", "Hello!")], true, "", "").unwrap();
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

/// Qwen2.5-Coder's own template (ChatML with a default system prompt and tool calls)
/// against transformers' `apply_chat_template` on the tokenizer transformers builds
/// from the same GGUF: plain conversations, no system message, a second system
/// message, tools (schemas and call arguments printed with transformers' `tojson`),
/// tool calls in both shapes, consecutive tool responses, an empty tools list.
#[test]
fn qwen25_chat_template_matches_transformers() {
    for model in RealModel::QWEN {
        let name = model.key();
        let tmpl = ChatTemplate::from_metadata(metadata(model)).expect("parse").expect("Qwen has a template");
        let r = reference(model);
        let cases = r["chat"]["template"].as_array().expect("chat cases");
        assert!(cases.len() >= 7, "{name}");
        let mut with_tools = 0;
        for (i, case) in cases.iter().enumerate() {
            let tools = case["tools_json"].as_str();
            with_tools += usize::from(tools.is_some_and(|t| t != "[]"));
            let got = tmpl
                .render_json(
                    case["messages_json"].as_str().unwrap(),
                    tools,
                    case["add_generation_prompt"].as_bool().unwrap(),
                    case["bos_token"].as_str().unwrap(),
                    case["eos_token"].as_str().unwrap(),
                )
                .unwrap_or_else(|e| panic!("{name} case {i}: {e}"));
            let want = case["rendered"].as_str().unwrap();
            if got != want {
                let at = got.bytes().zip(want.bytes()).take_while(|(a, b)| a == b).count();
                panic!(
                    "{name} case {i} differs from transformers at byte {at}:\n  transformers: {:?}\n  ours:         {:?}",
                    &want[at.saturating_sub(40)..(at + 60).min(want.len())],
                    &got[at.saturating_sub(40)..(at + 60).min(got.len())]
                );
            }
        }
        assert!(with_tools >= 2, "{name}: the cases must include tools");
    }
    // The role/content API renders the same as JSON messages for plain conversations.
    let tmpl = ChatTemplate::from_metadata(metadata(RealModel::Qwen25Coder05B)).unwrap().unwrap();
    let got = tmpl.render(&[ChatMessage::new("user", "Hi")], true, "", "").unwrap();
    assert_eq!(
        got,
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n\
         <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
    // The rendered tool conversation tokenizes into the control and tool tokens.
    let tok = tokenizer(RealModel::Qwen25Coder05B);
    let case = &reference(RealModel::Qwen25Coder05B)["chat"]["template"][4];
    let ids = tok.encode(case["rendered"].as_str().unwrap(), false, true);
    let count = |t: &str| ids.iter().filter(|&&id| Some(id) == tok.token_id(t)).count();
    assert_eq!((count("<|im_start|>"), count("<|im_end|>")), (7, 6), "six turns and the generation prompt");
    assert_eq!((count("<tool_call>"), count("</tool_call>")), (4, 4), "two in the tools header, two calls");
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
    let qwen_md = metadata(RealModel::Qwen25Coder05B);
    let t = Instant::now();
    let qwen = Tokenizer::from_metadata(qwen_md).unwrap();
    let build_qwen = t.elapsed();
    let t = Instant::now();
    let gemma = Tokenizer::from_metadata(gemma_md).unwrap();
    let build_gemma = t.elapsed();
    let t = Instant::now();
    let smol = Tokenizer::from_metadata(smol_md).unwrap();
    let build_smol = t.elapsed();
    eprintln!("build: gemma3 {build_gemma:?}, smollm2 {build_smol:?}, qwen2.5 {build_qwen:?}");
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
        for (model, tok) in [("gemma3", &gemma), ("smollm2", &smol), ("qwen2.5", &qwen)] {
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
