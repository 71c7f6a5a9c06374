//! Arbitrary text as a chat template, rendered with a fixed conversation: a system
//! prompt, tools, a tool call and its result, reasoning, an assistant reply. A
//! template may fail to parse or render (errors are values); it must never panic,
//! run past libFuzzer's `-timeout` or grow past `-rss_limit_mb`, and what renders
//! stays within the 16 MiB the budget allows (src/chat/budget.rs in the tokenizer).
//!
//! Seeds: the real models' templates, the built-ins and the hostile templates of
//! the tokenizer's tests (`seeds/chat_template/`, written by its ignored test
//! `write_fuzz_seeds`).
#![no_main]

use kindling_tokenizer::ChatTemplate;
use libfuzzer_sys::fuzz_target;

const MESSAGES: &str = r#"[
  {"role": "system", "content": "You are a helpful assistant."},
  {"role": "user", "content": "What is the weather in Paris?"},
  {"role": "assistant", "content": null, "reasoning_content": "Call the tool.",
   "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
  {"role": "tool", "name": "get_weather", "content": "{\"temperature\": 21}"},
  {"role": "assistant", "content": "It is 21 °C in Paris."},
  {"role": "user", "content": "Thanks!"}
]"#;

const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather",
  "description": "Get the current weather in a given city",
  "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]"#;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else { return };
    let Ok(mut template) = ChatTemplate::new(source) else { return };
    // `strftime_now` would otherwise read the clock: the same input must do the same.
    template.set_now(1_721_997_296);
    if let Ok(text) = template.render_json(MESSAGES, Some(TOOLS), true, "<s>", "</s>") {
        assert!(text.len() <= 16 << 20, "rendered {} bytes", text.len());
    }
});
