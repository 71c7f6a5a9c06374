//! Constrained decoding end to end on the real Qwen2.5-Coder-0.5B (CPU backend, greedy):
//! chat prompts that ask for JSON, under schemas of the common shapes, give output that
//! parses and validates and ends by itself (not at `max_tokens`); a regex's output
//! matches it; a Lark grammar's output parses; bad schemas fail before generation with a
//! clear error; a constraint that admits everything changes nothing.

use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use kindling_cpu::CpuBackend;
use kindling_e2e::load_cpu;
use kindling_model::{ConstraintSpec, FinishReason, GenerateOptions, Generation, Model, ModelError};
use kindling_testdata::RealModel;
use kindling_tokenizer::ChatMessage;
use serde_json::{json, Value};

const MAX_TOKENS: usize = 128;

/// One model for every test here (they take turns: a load costs more than a test).
fn qwen() -> MutexGuard<'static, Model<CpuBackend>> {
    static MODEL: OnceLock<Mutex<Model<CpuBackend>>> = OnceLock::new();
    let model = MODEL.get_or_init(|| Mutex::new(load_cpu(&RealModel::Qwen25Coder05B.path())));
    model.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The prompt ids of `user` as a chat turn in the model's template.
fn chat_prompt(model: &Model<CpuBackend>, user: &str) -> Vec<u32> {
    let template = model.chat_template().expect("Qwen has a chat template");
    let text = template.render(&[ChatMessage::new("user", user)], true, "", "").expect("render");
    model.tokenizer().encode(&text, true, true)
}

/// Greedy generation of `prompt` under `constraint`: (text, finish reason, token ids).
fn generate(
    model: &mut Model<CpuBackend>,
    prompt: Vec<u32>,
    constraint: Option<ConstraintSpec>,
) -> Result<(String, FinishReason, Vec<u32>), ModelError> {
    let options = GenerateOptions { max_tokens: MAX_TOKENS, constraint, ..GenerateOptions::default() };
    let mut session = model.new_session(prompt.len() + MAX_TOKENS)?;
    let mut generation = Generation::new(prompt, options)?;
    generation.compile_constraint(model)?;
    let mut streamed = String::new();
    while let Some(piece) = pollster::block_on(generation.next(model, &mut session))? {
        streamed.push_str(&piece.text);
    }
    assert_eq!(streamed, generation.text(), "the streamed pieces add up to the text");
    let finish = generation.finish_reason().expect("finished");
    Ok((streamed, finish, generation.generated().to_vec()))
}

/// Asks for JSON under `schema`; the output must end by itself, parse and validate.
fn check_schema(name: &str, user: &str, schema: Value) -> Value {
    let mut model = qwen();
    let prompt = chat_prompt(&model, user);
    let start = Instant::now();
    let (text, finish, ids) = generate(&mut model, prompt, Some(ConstraintSpec::JsonSchema(schema.clone())))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!("{name}: {} tokens in {:.1} s: {text}", ids.len(), start.elapsed().as_secs_f64());
    assert_eq!(finish, FinishReason::ConstraintComplete, "{name}: ended by {finish:?}: {text}");
    assert_eq!(finish.as_str(), "stop");
    let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: does not parse ({e}): {text}"));
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name}: the test's schema: {e}"));
    let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{name}: {text} does not validate: {errors:?}");
    value
}

/// A short string: every string is bounded so that a greedy loop cannot run past
/// `MAX_TOKENS` (then the output would be cut, not invalid).
fn short() -> Value {
    json!({ "type": "string", "maxLength": 24 })
}

#[test]
fn nested_objects() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": short(),
            "address": {
                "type": "object",
                "properties": { "city": short(), "zip": { "type": "string", "pattern": "^[0-9]{5}$" } },
                "required": ["city", "zip"],
                "additionalProperties": false
            }
        },
        "required": ["name", "address"],
        "additionalProperties": false
    });
    let v = check_schema("nested", "Give me a JSON object for a person named Ada living in Paris.", schema);
    assert!(v["address"]["zip"].as_str().is_some_and(|z| z.len() == 5));
}

#[test]
fn arrays_with_bounds_and_enums() {
    let schema = json!({
        "type": "object",
        "properties": {
            "colors": {
                "type": "array",
                "items": { "enum": ["red", "green", "blue", "yellow"] },
                "minItems": 2,
                "maxItems": 3
            },
            "mood": { "enum": ["happy", "sad", "neutral"] }
        },
        "required": ["colors", "mood"],
        "additionalProperties": false
    });
    let v = check_schema("array+enum", "List the colors of a rainbow flag as JSON, and your mood.", schema);
    let n = v["colors"].as_array().map_or(0, Vec::len);
    assert!((2..=3).contains(&n), "{v}");
}

#[test]
fn any_of_and_nullable() {
    let schema = json!({
        "type": "object",
        "properties": {
            "id": { "anyOf": [{ "type": "integer", "minimum": 0 }, { "type": "string", "maxLength": 12 }] },
            "nickname": { "type": ["string", "null"], "maxLength": 16 }
        },
        "required": ["id", "nickname"],
        "additionalProperties": false
    });
    check_schema("anyOf+nullable", "Return JSON for user 42 who has no nickname.", schema);
}

#[test]
fn recursion_through_defs() {
    let schema = json!({
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "value": { "type": "integer", "minimum": 0, "maximum": 99 },
                    "children": { "type": "array", "items": { "$ref": "#/$defs/node" }, "maxItems": 2 }
                },
                "required": ["value", "children"],
                "additionalProperties": false
            }
        },
        "$ref": "#/$defs/node"
    });
    check_schema(
        "$ref recursion",
        "Write a JSON tree: root 1 with two leaf children 2 and 3 (leaves have empty children).",
        schema,
    );
}

#[test]
fn string_pattern_and_number_bounds() {
    let schema = json!({
        "type": "object",
        "properties": {
            "phone": { "type": "string", "pattern": "^[0-9]{3}-[0-9]{4}$" },
            "age": { "type": "integer", "minimum": 18, "maximum": 65 },
            "score": { "type": "number", "minimum": 0, "maximum": 1 }
        },
        "required": ["phone", "age", "score"],
        "additionalProperties": false
    });
    check_schema("pattern+bounds", "Give a JSON record: phone number, an age of 200, and a score.", schema);
}

#[test]
fn json_object_mode_gives_an_object() {
    let mut model = qwen();
    let prompt = chat_prompt(&model, "Describe a cat as a JSON object with two fields.");
    let (text, finish, _) = generate(&mut model, prompt, Some(ConstraintSpec::JsonObject)).expect("generate");
    assert_eq!(finish, FinishReason::ConstraintComplete, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("does not parse ({e}): {text}"));
    assert!(v.is_object(), "{text}");
}

#[test]
fn regex_output_matches() {
    let mut model = qwen();
    let prompt = chat_prompt(&model, "What time is it? Answer like 12:30.");
    let (text, finish, _) =
        generate(&mut model, prompt, Some(ConstraintSpec::Regex("[0-2][0-9]:[0-5][0-9]".into()))).expect("generate");
    assert_eq!(finish, FinishReason::ConstraintComplete, "{text}");
    let b = text.as_bytes();
    let ok =
        b.len() == 5 && b[0] <= b'2' && b[1].is_ascii_digit() && b[2] == b':' && b[3] <= b'5' && b[4].is_ascii_digit();
    assert!(ok && b[0].is_ascii_digit() && b[3].is_ascii_digit(), "{text:?} does not match");
}

#[test]
fn lark_grammar_output_parses() {
    // A sum of one to three small numbers, then a period.
    let grammar = r#"
start: sum "."
sum: NUM | NUM "+" NUM | NUM "+" NUM "+" NUM
NUM: /[0-9]{1,3}/
"#;
    let mut model = qwen();
    let prompt = chat_prompt(&model, "Write an addition of two numbers, without spaces.");
    let (text, finish, _) =
        generate(&mut model, prompt, Some(ConstraintSpec::Grammar(grammar.into()))).expect("generate");
    assert_eq!(finish, FinishReason::ConstraintComplete, "{text}");
    let sum = text.strip_suffix('.').unwrap_or_else(|| panic!("{text:?} does not end with '.'"));
    let terms: Vec<&str> = sum.split('+').collect();
    assert!((1..=3).contains(&terms.len()), "{text:?}");
    assert!(terms.iter().all(|t| (1..=3).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit())), "{text:?}");
}

fn invalid_request(spec: ConstraintSpec) -> String {
    let mut model = qwen();
    let prompt = chat_prompt(&model, "Hi");
    match generate(&mut model, prompt, Some(spec)) {
        Err(ModelError::InvalidRequest(m)) => m,
        Err(e) => panic!("not an invalid request: {e}"),
        Ok((text, ..)) => panic!("generated {text:?}"),
    }
}

#[test]
fn bad_constraints_fail_before_generation_with_clear_errors() {
    let m = invalid_request(ConstraintSpec::JsonSchema(json!({ "type": "object", "properties": 5 })));
    assert!(m.contains("invalid JSON schema"), "{m}");
    // `not` is a keyword llguidance does not implement: the error names it.
    let m = invalid_request(ConstraintSpec::JsonSchema(json!({ "type": "object", "not": { "required": ["a"] } })));
    assert!(m.contains("not"), "{m}");
    assert!(m.contains("Unimplemented"), "{m}");
    let m = invalid_request(ConstraintSpec::Regex("(unclosed".into()));
    assert!(m.starts_with("invalid regex"), "{m}");
    let m = invalid_request(ConstraintSpec::Grammar("start: undefined_rule".into()));
    assert!(m.starts_with("invalid grammar"), "{m}");
    let Err(ModelError::InvalidRequest(m)) = ConstraintSpec::json_schema_text("{ not json") else { panic!("parsed") };
    assert!(m.contains("not valid JSON"), "{m}");
}

/// A constraint that admits any text leaves greedy decoding exactly as it was (the mask
/// only removes control tokens, which free text here never picks), and without a
/// constraint the ids are those of the plain greedy path.
#[test]
fn an_all_admitting_constraint_changes_nothing() {
    let mut model = qwen();
    let prompt = chat_prompt(&model, "Name three fruits.");
    let (free, free_finish, free_ids) = generate(&mut model, prompt.clone(), None).expect("free");
    let (text, _, ids) =
        generate(&mut model, prompt, Some(ConstraintSpec::Regex(r"[\s\S]*".into()))).expect("constrained");
    assert_eq!(ids, free_ids, "free: {free:?}\nconstrained: {text:?}");
    assert_eq!(text, free);
    assert_eq!(free_finish, FinishReason::EndOfGeneration);
}

/// The vocabulary is built once per model and reused (`Model::constraint_vocab`); prints
/// how long the build takes for Qwen's 151,936 tokens.
#[test]
fn the_constraint_vocabulary_is_built_once() {
    let model = qwen();
    let start = Instant::now();
    let vocab = kindling_model::ConstraintVocab::new(model.tokenizer()).expect("vocab");
    eprintln!(
        "constraint vocabulary of {} tokens built in {:.0} ms",
        model.tokenizer().vocab_size(),
        start.elapsed().as_secs_f64() * 1e3
    );
    let start = Instant::now();
    let mut constraint = vocab.compile(&ConstraintSpec::JsonObject).expect("compile");
    let mask = constraint.allowed().expect("mask");
    eprintln!("compile + first mask: {:.1} ms, {} tokens allowed", start.elapsed().as_secs_f64() * 1e3, mask.count());
    assert!(mask.count() > 0 && !mask.allows_end(), "a JSON object cannot be empty text");
    let first = model.constraint_vocab().expect("vocab") as *const _;
    assert_eq!(first, model.constraint_vocab().expect("vocab") as *const _, "the same vocabulary the second time");
}
