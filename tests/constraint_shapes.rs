//! Every common JSON-schema shape in one schema (nested objects, arrays with bounds,
//! enums, `anyOf`, nullable, `$ref`/`$defs` recursion, string patterns and formats,
//! numbers with bounds), generated greedily under it by the real Qwen2.5-Coder-1.5B on
//! the CPU backend and (ignored by default: minutes on lavapipe) by the 0.5B on the GPU
//! backend (wgpu's Vulkan path, where a constrained greedy step is chained on the device
//! with its mask), and
//! checked by an independent validator (the `jsonschema` crate, formats included). The
//! JSON is compact (no whitespace between tokens): half the tokens of the pretty-printed
//! form, which tests/constraint.rs covers.
//! tests/constraint.rs takes the shapes one by one on the 0.5B's CPU path.

#[path = "gpu_common.rs"]
mod gpu_common;

use kindling_gpu::GpuOptions;
use kindling_model::{policy, Backend, ChatRequest, FinishReason, Generation, Model};
use kindling_testdata::RealModel;
use serde_json::{json, Value};

const MAX_TOKENS: usize = 320;

fn every_shape() -> Value {
    let short = |n: u32| json!({ "type": "string", "maxLength": n });
    json!({
        // Compact JSON (llguidance's option): the same shapes in half the tokens.
        "x-guidance": { "whitespace_flexible": false },
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
        "type": "object",
        "properties": {
            "name": short(20),
            "email": { "type": "string", "format": "email", "maxLength": 32 },
            "born": { "type": "string", "format": "date" },
            "phone": { "type": "string", "pattern": "^[0-9]{3}-[0-9]{4}$" },
            "age": { "type": "integer", "minimum": 18, "maximum": 65 },
            "score": { "type": "number", "minimum": 0, "maximum": 1 },
            "tags": { "type": "array", "items": { "enum": ["red", "green", "blue"] }, "minItems": 1, "maxItems": 3 },
            "id": { "anyOf": [{ "type": "integer", "minimum": 0 }, short(8)] },
            "nickname": { "type": ["string", "null"], "maxLength": 12 },
            "address": {
                "type": "object",
                "properties": { "city": short(20), "zip": { "type": "string", "pattern": "^[0-9]{5}$" } },
                "required": ["city", "zip"],
                "additionalProperties": false
            },
            "tree": { "$ref": "#/$defs/node" }
        },
        "required": ["name", "email", "born", "phone", "age", "score", "tags", "id", "nickname", "address", "tree"],
        "additionalProperties": false
    })
}

/// Asks `model` for a record under the schema (greedy, through the chat policy's
/// `response_format`); the reply must end by itself, parse and validate.
fn generate_every_shape<B: Backend>(model: &mut Model<B>, what: &str) {
    let schema = every_shape();
    let request = ChatRequest::from_openai(&json!({
        "messages": [{ "role": "user", "content":
            "Make up a JSON record for Ada, born 1990-12-10, living in Paris. Its tree: root 1 with two leaf \
             children 2 and 3 (leaves have empty children)." }],
        "response_format": { "type": "json_schema", "json_schema": { "name": "record", "schema": schema } },
        "temperature": 0,
        "max_tokens": MAX_TOKENS,
    }))
    .expect("request");
    let prepared = policy::prepare_chat(model, &request, Some(0), 1).expect("prepare");
    let mut session = model.new_session(prepared.prompt_ids.len() + MAX_TOKENS).expect("session");
    let mut generation = Generation::new(prepared.prompt_ids, prepared.options).expect("generation");
    let start = std::time::Instant::now();
    while pollster::block_on(generation.next(model, &mut session)).expect("step").is_some() {}
    let text = generation.text();
    eprintln!("{what}: {} tokens in {:.1} s: {text}", generation.generated().len(), start.elapsed().as_secs_f64());
    assert_eq!(generation.finish_reason(), Some(FinishReason::ConstraintComplete), "{what}: {text}");
    let value: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: does not parse ({e}): {text}"));
    let mut schema = schema;
    schema.as_object_mut().expect("an object schema").remove("x-guidance");
    let validator = jsonschema::options().should_validate_formats(true).build(&schema).expect("the test's schema");
    let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{what}: {text} does not validate: {errors:?}");
}

#[test]
fn every_shape_on_the_1_5b_cpu() {
    let mut model = kindling_e2e::load_cpu(&RealModel::Qwen25Coder15B.path());
    generate_every_shape(&mut model, "Qwen2.5-Coder-1.5B, CPU");
}

/// Passes (115 tokens, valid), but too slow for the test command: with the 1.5B's CPU
/// run beside it, this file took 472 s of a clean run on two cores (lavapipe is a CPU).
/// The chained masked path itself is tested on every run by gpu_e2e's
/// `chained_constrained_generation_matches_unchained_and_cpu` (a tiny model, ~25 s).
#[test]
#[ignore = "minutes on lavapipe: cargo test --test constraint_shapes -- --include-ignored"]
fn every_shape_on_the_0_5b_gpu() {
    let mut model = gpu_common::load_gpu(&RealModel::Qwen25Coder05B.path(), GpuOptions::default());
    generate_every_shape(&mut model, "Qwen2.5-Coder-0.5B, GPU");
}
