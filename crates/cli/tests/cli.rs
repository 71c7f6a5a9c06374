//! The `kindling` binary end to end: its JSON outputs on a real model, and bad input
//! of every kind giving a clear error, a non-zero exit code and no panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kindling_testdata::RealModel;
use serde_json::Value;

fn kindling(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kindling")).args(args).output().expect("run kindling")
}

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "kindling failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn smol() -> String {
    RealModel::SmolLm2.path().to_string_lossy().into_owned()
}

fn ids(v: &Value) -> Vec<u64> {
    v.as_array().expect("array").iter().map(|x| x.as_u64().expect("id")).collect()
}

#[test]
fn run_json_reports_ids_text_finish_and_timings() {
    let out = kindling(&[
        "run",
        &smol(),
        "--prompt",
        "The capital of France is",
        "--max-tokens",
        "8",
        "--temperature",
        "0",
        "--json",
    ]);
    let v = json(&out);
    assert!(!ids(&v["prompt_token_ids"]).is_empty());
    let gen = ids(&v["token_ids"]);
    assert!(!gen.is_empty() && gen.len() <= 8);
    assert!(v["text"].as_str().is_some());
    assert!(["length", "eos", "stop"].contains(&v["finish_reason"].as_str().unwrap()));
    for k in ["load_ms", "prefill_tok_s", "decode_tok_s"] {
        assert!(v["timings"][k].as_f64().unwrap() >= 0.0, "{k}");
    }
    // Greedy is deterministic; a seeded sample is repeatable.
    assert_eq!(
        v["token_ids"],
        json(&kindling(&[
            "run",
            &smol(),
            "--prompt",
            "The capital of France is",
            "--max-tokens",
            "8",
            "--temperature",
            "0",
            "--json"
        ]))["token_ids"]
    );
    let sampled = |seed: &str| {
        json(&kindling(&[
            "run",
            &smol(),
            "--prompt",
            "Once upon a time",
            "--max-tokens",
            "12",
            "--temperature",
            "1.0",
            "--seed",
            seed,
            "--json",
        ]))["token_ids"]
            .clone()
    };
    assert_eq!(sampled("7"), sampled("7"));
}

#[test]
fn run_streams_text_and_honours_stop_strings() {
    let out = kindling(&[
        "run",
        &smol(),
        "--prompt",
        "1, 2, 3, 4,",
        "--max-tokens",
        "24",
        "--temperature",
        "0",
        "--stop",
        "8",
        "--json",
    ]);
    let v = json(&out);
    let text = v["text"].as_str().unwrap();
    if v["finish_reason"] == "stop" {
        assert!(!text.contains('8'), "text {text:?} should stop before '8'");
    }
    let plain = kindling(&["run", &smol(), "--prompt", "Hello", "--max-tokens", "4", "--temperature", "0"]);
    assert!(plain.status.success());
    assert!(!plain.stdout.is_empty());
}

#[test]
fn chat_mode_uses_the_template() {
    let v = json(&kindling(&[
        "run",
        &smol(),
        "--chat",
        "--prompt",
        "Say hi.",
        "--max-tokens",
        "4",
        "--temperature",
        "0",
        "--json",
    ]));
    // SmolLM2's template starts with <|im_start|>system (id 1).
    assert_eq!(ids(&v["prompt_token_ids"])[0], 1);
}

#[test]
fn tokenize_and_logits_json() {
    let v = json(&kindling(&["tokenize", &smol(), "--text", "Hello world", "--json"]));
    let t = ids(&v["token_ids"]);
    assert!(!t.is_empty());
    let joined: Vec<String> = t.iter().map(|i| i.to_string()).collect();
    let v = json(&kindling(&["logits", &smol(), "--token-ids", &joined.join(","), "--top", "3", "--json"]));
    assert_eq!(ids(&v["token_ids"]), t);
    let top = v["top"].as_array().unwrap();
    assert_eq!(top.len(), t.len());
    for row in top {
        let row = row.as_array().unwrap();
        assert_eq!(row.len(), 3);
        let l: Vec<f64> = row.iter().map(|p| p[1].as_f64().unwrap()).collect();
        assert!(l[0] >= l[1] && l[1] >= l[2]);
    }
}

#[test]
fn inspect_shows_architecture_and_tensors() {
    let out = kindling(&["inspect", &smol()]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("llama") && s.contains("blk.0.attn_q.weight") && s.contains("Q4_1"), "{s}");
}

/// Writes `bytes` to a temp file and runs every file-reading command on it.
fn expect_clean_failure(tag: &str, bytes: &[u8], needles: &[&str]) {
    let dir = std::env::temp_dir().join(format!("kindling-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(format!("{tag}.gguf"));
    std::fs::write(&path, bytes).unwrap();
    for cmd in [
        &["inspect"][..],
        &["run", "--prompt", "hi", "--max-tokens", "1"][..],
        &["logits", "--token-ids", "1"][..],
        &["tokenize", "--text", "hi"][..],
    ] {
        let mut args: Vec<&str> = vec![cmd[0]];
        let p = path.to_string_lossy().into_owned();
        args.push(&p);
        args.extend(&cmd[1..]);
        let out = kindling(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{tag}: `{}` should fail", args.join(" "));
        assert!(!err.contains("panicked"), "{tag}: panic: {err}");
        let lower = err.to_lowercase();
        assert!(
            needles.iter().any(|n| lower.contains(n)),
            "{tag}: `{}` error {err:?} should mention one of {needles:?}",
            args.join(" ")
        );
    }
    std::fs::remove_file(&path).ok();
}

#[test]
fn bad_files_fail_cleanly() {
    let real = std::fs::read(RealModel::SmolLm2.path()).unwrap();
    expect_clean_failure("empty", b"", &["empty"]);
    expect_clean_failure("text", b"this is not a model, just some text\n", &["magic"]);
    let mut magic = real[..1 << 16].to_vec();
    magic[..4].copy_from_slice(b"GGUX");
    expect_clean_failure("magic", &magic, &["magic"]);
    // 20 cut points: inside the fixed header, the metadata (SmolLM2's vocabulary runs
    // to ~1.7 MB), the tensor table, and the tensor data. A cut in the data is caught by
    // the header check: the tensor table then points past the end of the file.
    let cuts = [3usize, 4, 8, 15, 23, 24, 100, 1000, 10_000, 100_000, 500_000, 1_000_000, 1_500_000, 1_800_000];
    for (i, &cut) in cuts.iter().enumerate() {
        expect_clean_failure(&format!("cut{i}"), &real[..cut], &["truncated", "outside the file"]);
    }
    let data_cuts =
        [real.len() / 6, real.len() / 3, real.len() / 2, real.len() * 2 / 3, real.len() - 1000, real.len() - 1];
    for (i, &cut) in data_cuts.iter().enumerate() {
        expect_clean_failure_loading(&format!("datacut{i}"), &real[..cut]);
    }
}

/// Data-section truncation is only seen by commands that load weights.
fn expect_clean_failure_loading(tag: &str, bytes: &[u8]) {
    let path = std::env::temp_dir().join(format!("kindling-cli-{tag}-{}.gguf", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let p = path.to_string_lossy().into_owned();
    for args in [vec!["run", &p, "--prompt", "hi", "--max-tokens", "1"], vec!["logits", &p, "--token-ids", "1"]] {
        let out = kindling(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && !err.contains("panicked"), "{tag}: {err}");
        assert!(err.contains("outside the file"), "{tag}: {err}");
    }
    std::fs::remove_file(Path::new(&path)).ok();
}

#[test]
fn bench_json_reports_speeds() {
    let tiny = kindling_testdata::synthetic("tiny-llama.gguf");
    let v = json(&kindling(&[
        "bench",
        &tiny.to_string_lossy(),
        "--prompt-tokens",
        "20",
        "--gen-tokens",
        "5",
        "--batch",
        "8",
        "--repeat",
        "1",
        "--json",
    ]));
    for k in ["load_ms", "prefill_tok_s", "decode_tok_s", "dispatches_per_token"] {
        assert!(v[k].as_f64().unwrap() >= 0.0, "{k}: {v}");
    }
    assert!(v["decode_tok_s"].as_f64().unwrap() > 0.0);
    assert_eq!(v["batch"], 8, "the rows asked for: {v}");
    // No --batch: the native policy's rows for the backend.
    let tiny = tiny.to_string_lossy();
    let args =
        ["bench", &tiny, "--backend", "cpu", "--prompt-tokens", "4", "--gen-tokens", "1", "--repeat", "1", "--json"];
    assert_eq!(json(&kindling(&args))["batch"], 512);
}

/// `bench` on an encoder measures embeddings: the inputs it was asked for, each exactly
/// as long as asked and framed as `tokenize` frames a text ([CLS] ... [SEP]), and
/// throughput figures that agree with the timed seconds.
#[test]
fn bench_json_on_an_encoder_reports_embedding_throughput() {
    let tiny = kindling_testdata::synthetic("tiny-bert.gguf").to_string_lossy().into_owned();
    let args = ["bench", &tiny, "--backend", "cpu", "--inputs", "3", "--input-tokens", "12", "--repeat", "2", "--json"];
    let v = json(&kindling(&args));
    assert_eq!(v["kind"], "encoder", "{v}");
    assert_eq!((v["inputs"].as_u64(), v["input_tokens"].as_u64(), v["tokens"].as_u64()), (Some(3), Some(12), Some(36)));
    let runs: Vec<f64> = v["runs_s"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert_eq!(runs.len(), 2, "{v}");
    let s = v["seconds"].as_f64().unwrap();
    assert!(s > 0.0 && runs.contains(&s), "the median is one of the timed runs: {v}");
    assert!((v["inputs_per_s"].as_f64().unwrap() * s - 3.0).abs() < 1e-6, "{v}");
    assert!((v["tokens_per_s"].as_f64().unwrap() * s - 36.0).abs() < 1e-6, "{v}");
    let framed = json(&kindling(&["tokenize", &tiny, "--text", "hello", "--json"]));
    let framed = ids(&framed["token_ids"]);
    let (cls, sep) = (framed[0], framed[framed.len() - 1]);
    let head = ids(&v["first_ids"]);
    assert_eq!((head.len(), head[0], v["last_id"].as_u64().unwrap()), (8, cls, sep), "{v}");
    assert!(head[1..].iter().all(|&t| t != cls && t != sep), "the body is ordinary tokens: {v}");
    // An input the model cannot take, or none, is refused clearly.
    for (flag, value, needle) in [
        ("--input-tokens", "2", "more than the 2 special"),
        ("--input-tokens", "513", "context of 512"),
        ("--inputs", "0", "at least 1"),
    ] {
        let out = kindling(&["bench", &tiny, "--backend", "cpu", flag, value, "--json"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(needle) && !err.contains("panicked"), "{flag} {value}: {err}");
    }
}

/// `--profile` on the GPU (lavapipe here): every decode dispatch is timed, the
/// kernels' dispatch counts add up to the dispatches per token the counters saw, and
/// each kernel took device time.
#[test]
fn bench_profile_times_every_dispatch_on_the_device() {
    let tiny = kindling_testdata::synthetic("tiny-llama.gguf");
    let args = [
        "bench",
        &tiny.to_string_lossy(),
        "--backend",
        "gpu",
        "--prompt-tokens",
        "20",
        "--gen-tokens",
        "5",
        "--repeat",
        "1",
        "--json",
        "--profile",
    ];
    let v = json(&kindling(&args));
    let decode = v["profile"]["decode_per_token"].as_array().unwrap_or_else(|| panic!("no decode profile: {v}"));
    let calls: f64 = decode.iter().map(|k| k["dispatches"].as_f64().unwrap()).sum();
    assert!(
        (calls - v["dispatches_per_token"].as_f64().unwrap()).abs() < 1e-9,
        "{calls} timed dispatches per token: {v}"
    );
    for k in decode.iter().chain(v["profile"]["prefill"].as_array().unwrap()) {
        assert!(k["us"].as_f64().unwrap() > 0.0 && !k["kernel"].as_str().unwrap().is_empty(), "{k}");
    }
    assert!(decode.iter().any(|k| k["kernel"].as_str().unwrap().starts_with("Attention")), "{v}");
    // 20 prompt tokens in one batch: the batch matmul.
    let prefill = v["profile"]["prefill"].as_array().unwrap();
    assert!(prefill.iter().any(|k| k["kernel"].as_str().unwrap().starts_with("MatmulTiled")), "{v}");
    // No --batch: the native policy's rows (the tiny model's workspace fits any binding).
    assert_eq!(v["batch"], 2048, "{v}");
}

/// A new file in a per-process temp folder holding `text`, its name ending in `name`.
fn temp_file(name: &str, text: &str) -> String {
    // A fresh file per call: tests run in parallel in this process, and two that wrote
    // the same name (a bad `messages.json` and a good one) read each other's.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kindling-cli-constraint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{n}-{name}"));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// `run` with greedy decoding and `--json`, plus `extra`.
fn run_constrained(prompt: &str, extra: &[&str]) -> Output {
    let smol = smol();
    let mut args = vec![
        "run",
        smol.as_str(),
        "--backend",
        "cpu",
        "--chat",
        "--prompt",
        prompt,
        "--max-tokens",
        "64",
        "--temperature",
        "0",
        "--json",
    ];
    args.extend(extra);
    kindling(&args)
}

#[test]
fn json_schema_regex_and_grammar_constrain_the_text() {
    let schema = temp_file(
        "schema.json",
        r#"{"type":"object","properties":{"animal":{"enum":["cat","dog"]},"legs":{"type":"integer","minimum":0,"maximum":8}},"required":["animal","legs"],"additionalProperties":false}"#,
    );
    let v = json(&run_constrained("Describe a cat as JSON.", &["--json-schema", &schema]));
    let text = v["text"].as_str().unwrap();
    let obj: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert!(["cat", "dog"].contains(&obj["animal"].as_str().unwrap_or("")), "{text}");
    assert!(obj["legs"].as_u64().is_some_and(|n| n <= 8), "{text}");
    assert_eq!(v["finish_reason"], "stop", "{v}");

    let v = json(&run_constrained("Is the sky blue?", &["--regex", "(yes|no), [a-z ]{1,20}\\."]));
    let text = v["text"].as_str().unwrap();
    assert!(text.starts_with("yes, ") || text.starts_with("no, "), "{text:?}");
    assert!(text.ends_with('.'), "{text:?}");

    let grammar = temp_file("sum.lark", "start: NUM \"+\" NUM\nNUM: /[0-9]{1,2}/\n");
    let v = json(&run_constrained("Write a sum of two numbers.", &["--grammar", &grammar]));
    let text = v["text"].as_str().unwrap();
    let parts: Vec<&str> = text.split('+').collect();
    assert!(
        parts.len() == 2
            && parts.iter().all(|p| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit())),
        "{text:?}"
    );
}

#[test]
fn bad_constraints_fail_cleanly() {
    let check = |extra: &[&str], needle: &str| {
        let out = run_constrained("Hi", extra);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?} should fail");
        assert!(!err.contains("panicked"), "{extra:?}: panic: {err}");
        assert!(err.contains(needle), "{extra:?}: error {err:?} should mention {needle:?}");
    };
    check(&["--json-schema", &temp_file("bad.json", "{ nope")], "not valid JSON");
    check(&["--json-schema", &temp_file("not.json", r#"{"not":{"type":"string"}}"#)], "Unimplemented keys");
    check(&["--json-schema", "/nonexistent/schema.json"], "cannot read");
    check(&["--regex", "(open"], "invalid regex");
    check(&["--grammar", &temp_file("bad.lark", "start: missing")], "invalid grammar");
    // One constraint at a time.
    check(&["--regex", "a", "--grammar", "g.lark"], "cannot be used with");
}

/// `kindling chat` with greedy decoding on `model`'s CPU backend: the messages file and
/// `extra` flags.
fn chat(model: &str, messages: &str, extra: &[&str]) -> Output {
    let messages = temp_file("messages.json", messages);
    let mut args = vec!["chat", model, "--backend", "cpu", "--messages", &messages, "--temperature", "0"];
    args.extend(extra);
    kindling(&args)
}

#[test]
fn chat_prints_an_openai_completion_with_tool_calls() {
    let qwen = RealModel::Qwen25Coder05B.path().to_string_lossy().into_owned();
    let tools = temp_file(
        "tools.json",
        r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"]}}}]"#,
    );
    let ask = r#"[{"role":"user","content":"What is the weather in Paris?"}]"#;
    let v = json(&chat(&qwen, ask, &["--tools", &tools, "--tool-choice", "required", "--max-tokens", "60"]));
    assert_eq!(v["object"], "chat.completion", "{v}");
    let choice = &v["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls", "{v}");
    assert_eq!(choice["message"]["content"], Value::Null, "{v}");
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "get_weather");
    let args: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert!(args["city"].is_string() && ["celsius", "fahrenheit"].contains(&args["unit"].as_str().unwrap()), "{args}");
    assert!(v["usage"]["completion_tokens"].as_u64().unwrap() > 0);

    // Streamed: JSON lines, the call in one delta, the finish on the last.
    let out = chat(&qwen, ask, &["--tools", &tools, "--tool-choice", "get_weather", "--max-tokens", "60", "--stream"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let chunks: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert!(chunks.iter().all(|c| c["object"] == "chat.completion.chunk"));
    let calls: Vec<&Value> = chunks.iter().filter_map(|c| c["choices"][0]["delta"].get("tool_calls")).collect();
    assert_eq!(calls.len(), 1, "{chunks:?}");
    assert_eq!(calls[0][0]["index"], 0);
    assert_eq!(calls[0][0]["function"]["name"], "get_weather");
    assert_eq!(chunks.last().unwrap()["choices"][0]["finish_reason"], "tool_calls");
}

#[test]
fn chat_response_format_and_bad_requests() {
    let smol = smol();
    let format = temp_file(
        "format.json",
        r#"{"type":"json_schema","json_schema":{"name":"pet","schema":{"type":"object","properties":{"name":{"type":"string","maxLength":12}},"required":["name"],"additionalProperties":false}}}"#,
    );
    let ask = r#"[{"role":"user","content":"Name a pet, as JSON."}]"#;
    let v = json(&chat(&smol, ask, &["--response-format", &format, "--max-tokens", "40"]));
    let content = v["choices"][0]["message"]["content"].as_str().unwrap();
    let pet: Value = serde_json::from_str(content).unwrap_or_else(|e| panic!("not JSON ({e}): {content}"));
    assert!(pet["name"].is_string(), "{content}");
    assert_eq!(v["choices"][0]["finish_reason"], "stop", "{v}");

    let fails = |messages: &str, extra: &[&str], needle: &str| {
        let out = chat(&smol, messages, extra);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?} should fail");
        assert!(!err.contains("panicked"), "{extra:?}: panic: {err}");
        assert!(err.contains(needle), "{extra:?}: error {err:?} should mention {needle:?}");
    };
    let tools = temp_file("tool.json", r#"[{"type":"function","function":{"name":"now"}}]"#);
    // SmolLM2's template does not render tools.
    fails(ask, &["--tools", &tools], "does not render tools");
    fails(ask, &["--tools", &tools, "--tool-choice", "later"], "later");
    fails(r#"{"role":"user"}"#, &[], "messages must be an array");
    fails(ask, &["--response-format", &temp_file("bad-format.json", r#"{"type":"xml"}"#)], "xml");
}

/// nomic-embed-text-v1.5 (F16, `nomic-bert`) and llama.cpp's vectors for it.
fn nomic() -> (String, Value) {
    let path = kindling_testdata::models_dir().join("nomic-embed-text-v1.5.f16.gguf");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/embed_ref_nomic.json");
    let fixture = std::fs::read_to_string(&fixture).expect("tests/fixtures/embed_ref_nomic.json");
    (path.to_string_lossy().into_owned(), serde_json::from_str(&fixture).expect("fixture JSON"))
}

fn cosine(v: &Value, reference: &Value) -> f64 {
    let (a, b) = (v.as_array().expect("embedding"), reference.as_array().expect("reference"));
    assert_eq!(a.len(), b.len(), "embedding width");
    let dot =
        |x: &[Value], y: &[Value]| x.iter().zip(y).map(|(p, q)| p.as_f64().unwrap() * q.as_f64().unwrap()).sum::<f64>();
    dot(a, b) / (dot(a, a) * dot(b, b)).sqrt()
}

#[test]
fn embed_prints_openai_embeddings_matching_llama_cpp() {
    let (model, fixture) = nomic();
    let case = |name: &str| fixture["cases"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap().clone();
    let (query, cjk) = (case("query"), case("cjk"));
    // --text, twice: one vector each, in order.
    let out = kindling(&[
        "embed",
        &model,
        "--backend",
        "cpu",
        "--text",
        query["text"].as_str().unwrap(),
        "--text",
        cjk["text"].as_str().unwrap(),
    ]);
    let v = json(&out);
    assert_eq!(v["object"], "list");
    let data = v["data"].as_array().expect("data");
    assert_eq!(data.len(), 2);
    for (i, (item, reference)) in data.iter().zip([&query, &cjk]).enumerate() {
        assert_eq!(item["object"], "embedding");
        assert_eq!(item["index"], i);
        let c = cosine(&item["embedding"], &reference["embedding"]);
        assert!(c >= 0.999, "input {i} ({}): cosine {c} with llama.cpp's", reference["name"]);
    }
    let tokens = query["ids"].as_array().unwrap().len() + cjk["ids"].as_array().unwrap().len();
    assert_eq!(v["usage"]["prompt_tokens"], tokens);
    assert_eq!(v["usage"]["total_tokens"], tokens);

    // --input: a JSON array of strings.
    let file = temp_file("embed_inputs.json", &serde_json::to_string(&[query["text"].clone()]).unwrap());
    let v = json(&kindling(&["embed", &model, "--backend", "cpu", "--input", &file]));
    assert!(cosine(&v["data"][0]["embedding"], &query["embedding"]) >= 0.999);
}

#[test]
fn embed_fails_clearly() {
    // The synthetic tiny-nomic-bert has nomic's layout and 2048-token context but is 128 wide:
    // a whole context costs little.
    let model = kindling_testdata::synthetic("tiny-nomic-bert.gguf").to_string_lossy().into_owned();
    let fails = |args: &[&str], needle: &str| {
        let out = kindling(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    };
    // A generative model cannot embed; an encoder cannot generate.
    fails(&["embed", &smol(), "--backend", "cpu", "--text", "hello"], "cannot make embeddings");
    fails(&["run", &model, "--backend", "cpu", "--prompt", "hello", "--max-tokens", "2"], "cannot generate");
    // Longer than the context (2048) without --truncate; with it, one vector of that many tokens.
    let long = "word ".repeat(2100);
    fails(&["embed", &model, "--backend", "cpu", "--text", &long], "longer than the model's context");
    let v = json(&kindling(&["embed", &model, "--backend", "cpu", "--truncate", "--text", &long]));
    assert_eq!(v["usage"]["prompt_tokens"], 2048, "cut to the context");
    assert_eq!(v["data"][0]["embedding"].as_array().map(Vec::len), Some(128));
    fails(&["embed", &model, "--input", &temp_file("embed_bad.json", r#"{"input": "x"}"#)], "array of strings");
    fails(&["embed", &model, "--input", &temp_file("embed_empty.json", "[]")], "nothing to embed");
    fails(&["embed", &model, "--input", &temp_file("embed_num.json", "[1]")], "must be a string");
    fails(&["embed", &model], "required");
}
