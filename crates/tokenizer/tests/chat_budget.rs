//! A chat template is code from a downloaded file: hostile ones must fail fast with
//! the budget error, and every real template must still render long conversations
//! well inside the budget.

mod common;

use std::time::{Duration, Instant};

use common::{metadata, MODELS};
use kindling_tokenizer::{ChatMessage, ChatTemplate, TokenizerError};
use serde_json::{json, Value as Json};

/// The instruction budget (`FUEL` in src/chat/budget.rs); a real template must use
/// less than a fiftieth of it.
const FUEL: u64 = 100_000;

/// Templates that loop, recurse or grow text without bound.
const HOSTILE: [(&str, &str); 16] = [
    (
        "three nested 1000-step loops",
        "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}y{% endfor %}{% endfor %}{% endfor %}",
    ),
    (
        "six nested 100-step loops",
        "{% for a in range(100) %}{% for b in range(100) %}{% for c in range(100) %}{% for d in range(100) %}\
         {% for e in range(100) %}{% for f in range(100) %}y{% endfor %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}",
    ),
    (
        "a string doubled through a namespace sixty times",
        "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
    ),
    (
        "a string doubled with + at the top level",
        "{% set s = 'xxxxxxxxxxxxxxxx' %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}\
         {% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}\
         {% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}\
         {% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}\
         {% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{{ s }}",
    ),
    (
        "macros calling each other in loops",
        "{% macro a(n) %}{% for i in range(100) %}{{ n }}{% endfor %}{% endmacro %}\
         {% macro b(n) %}{% for i in range(100) %}{{ a(n) }}{% endfor %}{% endmacro %}\
         {% macro c(n) %}{% for i in range(100) %}{{ b(n) }}{% endfor %}{% endmacro %}{{ c('x') }}",
    ),
    (
        "a macro recursing while doubling its argument",
        "{% macro d(s, n) %}{% if n > 0 %}{{ d(s ~ s, n - 1) }}{% else %}{{ s|length }}{% endif %}{% endmacro %}{{ d('x', 400) }}",
    ),
    (
        "a recursive loop that never ends",
        "{% for x in [[1]] recursive %}{{ loop([x]) }}{% endfor %}",
    ),
    ("a huge join of a huge list", "{{ ((range(100000)|list) * 100000)|join('xxxxxxxxxx') }}"),
    ("a string repeated a billion times", "{{ 'x' * 10**9 }}"),
    (
        "a string squared by replace",
        "{% set ns = namespace(s='xxxxxxxxxx') %}{% for i in range(10) %}{% set ns.s = ns.s|replace('x', ns.s) %}{% endfor %}{{ ns.s }}",
    ),
    (
        "a list holding another twice, forty deep, printed",
        "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l ~ '' }}",
    ),
    ("a format padded a billion wide", "{{ '%1000000000s'|format('x') }}"),
    ("an indent a million wide", "{{ ('x\n' * 1000)|indent(1000000) }}"),
    ("the characters of a string joined by a long separator", "{{ ('x' * 100000)|join('y' * 1000) }}"),
    (
        "a namespace holding itself, printed (found by the fuzzer)",
        "{% set ns = namespace(s='x') %}{% set ns.s = ns %}{{ ns }}",
    ),
    (
        "captured output doubled",
        "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set t %}{{ ns.s }}{{ ns.s }}{% endset %}{% set ns.s = t %}{% endfor %}{{ ns.s }}",
    ),
];

#[test]
fn hostile_templates_fail_fast_with_the_budget_error() {
    for (what, source) in HOSTILE {
        let tmpl = ChatTemplate::new(source).unwrap_or_else(|e| panic!("{what}: {e}"));
        let start = Instant::now();
        let result = tmpl.render(&[ChatMessage::new("user", "Hi")], true, "", "");
        let took = start.elapsed();
        match result {
            Err(TokenizerError::TemplateBudget(limit)) => {
                let msg = TokenizerError::TemplateBudget(limit).to_string();
                assert!(msg.contains("chat template ran past its budget"), "{what}: {msg}");
                eprintln!("{what}: {msg} after {took:.2?}");
            }
            // MiniJinja's own limits stop some, with errors of their own.
            Err(TokenizerError::Template(m)) if m.contains("recursion limit") => {
                eprintln!("{what}: {m} after {took:.2?}")
            }
            other => panic!("{what}: expected the budget error, got {other:?}"),
        }
        assert!(took < Duration::from_secs(3), "{what}: took {took:?}");
    }
}

/// A conversation of `turns` questions and answers, with a tool call every third
/// turn when `with_tools`.
fn conversation(turns: usize, filler: &str, with_tools: bool) -> Json {
    let mut messages = vec![json!({"role": "system", "content": "You are a helpful assistant."})];
    for i in 0..turns {
        messages.push(json!({"role": "user", "content": format!("Question {i}: {filler}")}));
        if with_tools && i % 3 == 1 {
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}
            ]}));
            messages.push(json!({"role": "tool", "name": "get_weather", "content": "{\"temperature\": 21}"}));
        }
        messages.push(json!({"role": "assistant", "content": format!("Answer {i}: {filler}")}));
    }
    Json::Array(messages)
}

fn tools() -> Json {
    json!([{"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather in a given city",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
        }, "required": ["city"]}
    }}])
}

/// Every template kindling renders: the real models' own and the built-ins.
fn real_templates() -> Vec<(String, ChatTemplate)> {
    let mut all: Vec<(String, ChatTemplate)> = MODELS
        .iter()
        .filter_map(|&m| ChatTemplate::from_metadata(metadata(m)).expect("parse").map(|t| (m.key().to_string(), t)))
        .collect();
    all.extend(["gemma", "chatml"].map(|n| (format!("builtin {n}"), ChatTemplate::builtin(n).expect("builtin"))));
    all
}

#[test]
fn real_templates_render_well_inside_the_budget() {
    for (name, tmpl) in real_templates() {
        // Twenty messages and more, with tools where the template takes them: the
        // figure the budget is set from.
        let with_tools = tmpl.source().contains("tools");
        let tools = with_tools.then(|| tools().to_string());
        let tools = tools.as_deref();
        let messages = conversation(8, "what is the weather like?", with_tools);
        let (text, fuel) = tmpl.render_json_measured(&messages.to_string(), tools, true, "<s>", "</s>").expect(&name);
        assert!(text.contains("Question 7"), "{name}");
        let count = messages.as_array().map_or(0, Vec::len);
        eprintln!("{name}: {fuel} instructions for {count} messages (tools: {with_tools})");
        assert!(fuel * 50 < FUEL, "{name} used {fuel} instructions, more than a fiftieth of the budget");

        // A conversation of 500 turns, and one with a 4 MB message.
        let long = conversation(500, "tell me more", with_tools);
        tmpl.render_json(&long.to_string(), tools, true, "<s>", "</s>").expect(&name);
        let big = "lorem ipsum ".repeat(4 << 20 >> 4);
        let text = tmpl.render(&[ChatMessage::new("user", big.as_str())], true, "<s>", "</s>").expect(&name);
        assert!(text.len() > big.len(), "{name}");
    }
}

/// Writes the fuzz target's seeds: every real template and every hostile one, one
/// file each, into fuzz/seeds/chat_template/.
#[test]
#[ignore = "writes the fuzz seeds; run by hand"]
fn write_fuzz_seeds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/chat_template");
    std::fs::create_dir_all(&dir).expect("create the seed directory");
    let named = |s: &str| s.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    let real = real_templates().into_iter().map(|(name, t)| (named(&name), t.source().to_string()));
    let hostile = HOSTILE.iter().map(|(what, source)| (format!("hostile_{}", named(what)), source.to_string()));
    for (name, source) in real.chain(hostile) {
        std::fs::write(dir.join(format!("{name}.jinja")), source).expect("write a seed");
    }
}
