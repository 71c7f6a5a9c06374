//! OpenAI tool calls end to end on the real Qwen2.5-Coder-0.5B (CPU backend, greedy),
//! through the generation policy (`policy::prepare_chat`) as the CLI and the browser
//! package drive it: the model's own chat template renders the tools; every call's
//! arguments validate against its function's schema; `tool_choice` 'auto' (the model
//! opens a call with `<tool_call>`, or answers with bare or fenced JSON), 'required', a
//! named function, 'none'; one call or several; a tool result goes back through the
//! template and the model answers from it; bad requests fail before generation.

use std::sync::{Mutex, MutexGuard, OnceLock};

use kindling_cpu::CpuBackend;
use kindling_e2e::load_cpu;
use kindling_model::policy::{self, ChatRequest};
use kindling_model::{FinishReason, Generation, Model, ModelError, ToolCall};
use kindling_testdata::RealModel;
use serde_json::{json, Value};

fn qwen() -> MutexGuard<'static, Model<CpuBackend>> {
    static MODEL: OnceLock<Mutex<Model<CpuBackend>>> = OnceLock::new();
    let model = MODEL.get_or_init(|| Mutex::new(load_cpu(&RealModel::Qwen25Coder05B.path())));
    model.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn tools() -> Value {
    json!([
        { "type": "function", "function": {
            "name": "get_weather", "description": "Get the current weather in a city",
            "parameters": { "type": "object", "properties": {
                "city": { "type": "string" },
                "unit": { "type": "string", "enum": ["celsius", "fahrenheit"] } },
                "required": ["city", "unit"] } } },
        { "type": "function", "function": {
            "name": "get_time", "description": "Get the local time in a city",
            "parameters": { "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] } } },
    ])
}

struct Reply {
    content: String,
    calls: Vec<ToolCall>,
    finish: FinishReason,
    first_token: Option<u32>,
}

/// Runs an OpenAI request (greedy, 100 tokens at most unless it says).
fn chat(mut request: Value) -> Result<Reply, ModelError> {
    request["temperature"] = json!(0);
    if request.get("max_tokens").is_none() {
        request["max_tokens"] = json!(100);
    }
    let mut model = qwen();
    let request = ChatRequest::from_openai(&request)?;
    let prepared = policy::prepare_chat(&model, &request, Some(0), 1)?;
    let mut session = model.new_session(prepared.prompt_ids.len() + prepared.options.max_tokens)?;
    let mut generation = Generation::new(prepared.prompt_ids, prepared.options)?;
    generation.compile_constraint(&model)?;
    let mut streamed = String::new();
    while let Some(piece) = pollster::block_on(generation.next(&mut model, &mut session))? {
        streamed.push_str(&piece.text);
    }
    assert_eq!(streamed, generation.text(), "the streamed pieces add up to the content");
    assert!(!streamed.contains("<tool_call>"), "call markup is not content: {streamed:?}");
    let reply = Reply {
        content: generation.text().to_string(),
        calls: generation.tool_calls().to_vec(),
        finish: generation.finish_reason().expect("finished"),
        first_token: generation.generated().first().copied(),
    };
    eprintln!("{:?} {:?} {:?}", reply.finish, reply.content, reply.calls);
    Ok(reply)
}

/// Every call names a tool and its arguments validate against that tool's schema.
fn assert_valid_calls(calls: &[ToolCall]) {
    assert!(!calls.is_empty(), "no tool call");
    let tools = tools();
    for call in calls {
        let tool = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == call.name)
            .unwrap_or_else(|| panic!("a call to '{}', which is not a tool", call.name));
        let args: Value = serde_json::from_str(&call.arguments).expect("arguments are JSON");
        let validator = jsonschema::validator_for(&tool["function"]["parameters"]).unwrap();
        let errors: Vec<String> = validator.iter_errors(&args).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}({}) does not validate: {errors:?}", call.name, call.arguments);
    }
}

fn user(text: &str) -> Value {
    json!([{ "role": "user", "content": text }])
}

#[test]
fn auto_calls_with_the_tags_or_as_bare_and_fenced_json() {
    // Asked for the tags. The 0.5B still answers with the bare object (its first token is
    // "{\n", the opener only its second choice), so this takes the bare-JSON path; a model
    // that writes <tool_call> takes the lazy one (both end as the same calls).
    let tagged = chat(json!({ "tools": tools(), "messages": user(
        "Weather in Oslo, in celsius? Reply in exactly this form, tags included:\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {...}}\n</tool_call>") }))
    .unwrap();
    assert_eq!(tagged.finish, FinishReason::ToolCalls);
    let opener = qwen().tokenizer().token_id("<tool_call>");
    eprintln!("opened with the tag: {}", tagged.first_token == opener);
    assert_valid_calls(&tagged.calls);
    assert_eq!(tagged.calls[0].name, "get_weather");
    assert!(tagged.calls[0].arguments.contains("Oslo"), "{:?}", tagged.calls);

    // Qwen2.5-Coder's habit: the call's JSON alone, bare or in a fence.
    for prompt in [
        "Call the get_weather tool for Paris in celsius. Answer with the <tool_call></tool_call> XML tags only, no markdown.",
        "What is the weather like in Paris and in Tokyo right now?",
    ] {
        let reply = chat(json!({ "tools": tools(), "messages": user(prompt) })).unwrap();
        assert_eq!(reply.finish, FinishReason::ToolCalls, "{prompt}");
        assert_eq!(reply.content, "", "{prompt}");
        assert_valid_calls(&reply.calls);
        assert!(reply.calls[0].arguments.contains("Paris"), "{:?}", reply.calls);
    }
}

#[test]
fn required_and_named_choices_force_a_valid_call() {
    let required = chat(json!({ "tools": tools(), "tool_choice": "required",
        "messages": user("What is the weather like in Paris and in Tokyo right now?") }))
    .unwrap();
    assert_eq!(required.finish, FinishReason::ToolCalls);
    assert_valid_calls(&required.calls);

    // A named function, one call only, even where the question asks for another tool.
    let named = chat(json!({ "tools": tools(), "parallel_tool_calls": false,
        "tool_choice": { "type": "function", "function": { "name": "get_time" } },
        "messages": user("Is it raining in Madrid?") }))
    .unwrap();
    assert_eq!(named.finish, FinishReason::ToolCalls);
    assert_eq!(named.calls.len(), 1, "{:?}", named.calls);
    assert_eq!(named.calls[0].name, "get_time");
    assert_valid_calls(&named.calls);

    // 'none': the tools are not shown; the reply is text.
    let none = chat(json!({ "tools": tools(), "tool_choice": "none", "max_tokens": 24,
        "messages": user("Say hello in French.") }))
    .unwrap();
    assert!(none.calls.is_empty());
    assert!(!none.content.is_empty());
}

#[test]
fn a_tool_result_goes_back_and_the_model_answers_from_it() {
    let messages = json!([
        { "role": "user", "content": "What is the weather like in Paris, in celsius?" },
        { "role": "assistant", "content": null, "tool_calls": [{ "id": "call_0", "type": "function",
            "function": { "name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"celsius\"}" } }] },
        { "role": "tool", "tool_call_id": "call_0", "content": "{\"temperature\": 17, \"sky\": \"sunny\"}" },
    ]);
    // The template shows the call and its result to the model as Qwen was trained.
    let request = ChatRequest::from_openai(&json!({ "tools": tools(), "messages": messages.clone() })).unwrap();
    let prompt = {
        let model = qwen();
        let prepared = policy::prepare_chat(&model, &request, Some(0), 1).unwrap();
        model.tokenizer().decode(&prepared.prompt_ids, true)
    };
    assert!(
        prompt.contains("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>"),
        "{prompt}"
    );
    assert!(
        prompt.contains("<tool_response>\n{\"temperature\": 17, \"sky\": \"sunny\"}\n</tool_response>"),
        "{prompt}"
    );

    // With the tools still offered the 0.5B calls again; an app asks for the answer with
    // tool_choice 'none' (the call and result stay in the conversation).
    let reply = chat(json!({ "tools": tools(), "tool_choice": "none", "messages": messages })).unwrap();
    assert_eq!(reply.finish, FinishReason::EndOfGeneration, "{:?}", reply.calls);
    assert!(reply.calls.is_empty());
    assert!(reply.content.contains("17"), "the answer uses the tool's result: {}", reply.content);
}

#[test]
fn bad_tool_requests_fail_before_generation() {
    let fails = |request: Value, needle: &str| match chat(request) {
        Err(ModelError::InvalidRequest(m)) => assert!(m.contains(needle), "{m} (wanted '{needle}')"),
        other => panic!("expected an invalid request about '{needle}', got {:?}", other.map(|r| r.calls)),
    };
    fails(
        json!({ "tools": tools(), "tool_choice": { "type": "function", "function": { "name": "fly" } },
        "messages": user("hi") }),
        "fly",
    );
    fails(
        json!({ "tools": [{ "type": "function", "function": { "name": "f",
        "parameters": { "type": "object", "properties": { "x": { "type": "string", "pattern": "(" } } } } }],
        "tool_choice": "required", "messages": user("hi") }),
        "invalid",
    );
    // A template that does not render tools: the model was not taught to call.
    fails(
        json!({ "tools": tools(), "messages": user("hi"),
        "chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}" }),
        "does not render tools",
    );
    fails(
        json!({ "tools": tools(), "messages": user("hi"), "response_format": { "type": "json_object" } }),
        "response_format",
    );
}
