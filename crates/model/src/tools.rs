//! OpenAI tool calls: the request's `tools` and `tool_choice` read and checked, the
//! grammar a call must follow in the model's own format, and the calls parsed back out
//! of the reply.
//!
//! The format is the one the model's chat template teaches it (Hermes style, which
//! Qwen 2.5 and many others use): each call is a JSON object `{"name": ..., "arguments":
//! {...}}` between `<tool_call>` and `</tool_call>`. Arguments are valid by
//! construction: once the model opens a call, decoding is constrained to the named
//! tools' parameter schemas (`ToolCallGrammar`). Before that the model writes free text
//! (`tool_choice: 'auto'`), or the call is forced from the first token (`'required'`, a
//! named function).
//!
//! Small models often answer a tool request with the call's JSON object alone, bare or
//! in a ```json fence, instead of the tags (Qwen2.5-Coder-0.5B and 1.5B both do). With
//! `'auto'`, a reply that begins that way is taken as a call too: its first tokens are
//! taken back and the reply is generated again from its start under
//! `ToolCallGrammar::at_reply_start`, which admits exactly those forms.

use serde_json::{json, Map, Value};

use crate::constraint::{bounded_whitespace, ConstraintSpec};
use crate::error::{ModelError, Result};

/// The text that opens a call in the Hermes format.
pub const CALL_OPENER: &str = "<tool_call>";
/// The text that closes a call.
pub const CALL_CLOSER: &str = "</tool_call>";
/// The fence a reply may wrap bare JSON calls in.
pub const JSON_FENCE: &str = "```json";

/// One function the model may call.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub name: String,
    /// The JSON schema of its arguments (an object schema).
    pub parameters: Value,
}

/// OpenAI's `tool_choice`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model may not call tools (they are not shown to it).
    None,
    /// The model decides: free text, or calls.
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must call this function.
    Function(String),
}

impl ToolChoice {
    /// `'none' | 'auto' | 'required' | { type: 'function', function: { name } }`.
    pub fn from_openai(v: &Value) -> Result<ToolChoice> {
        match v {
            Value::String(s) => match s.as_str() {
                "none" => Ok(ToolChoice::None),
                "auto" => Ok(ToolChoice::Auto),
                "required" => Ok(ToolChoice::Required),
                other => Err(ModelError::invalid_request(format!(
                    "tool_choice '{other}' is not one of 'none', 'auto', 'required' or a function"
                ))),
            },
            Value::Object(o) => {
                let name = o.get("function").and_then(|f| f.get("name")).and_then(Value::as_str);
                match (o.get("type").and_then(Value::as_str), name) {
                    (Some("function"), Some(name)) => Ok(ToolChoice::Function(name.to_string())),
                    _ => {
                        Err(ModelError::invalid_request("tool_choice must be { type: 'function', function: { name } }"))
                    }
                }
            }
            _ => Err(ModelError::invalid_request(
                "tool_choice must be 'none', 'auto', 'required' or { type: 'function', function: { name } }",
            )),
        }
    }
}

/// OpenAI's `tools`: `[{ type: 'function', function: { name, description, parameters } }]`.
/// Names must be unique and as OpenAI allows them (letters, digits, `_`, `-`; 64 at most).
pub fn tools_from_openai(v: &Value) -> Result<Vec<Tool>> {
    let list = v
        .as_array()
        .ok_or_else(|| ModelError::invalid_request("tools must be an array of { type: 'function', function }"))?;
    let mut tools: Vec<Tool> = Vec::with_capacity(list.len());
    for (i, t) in list.iter().enumerate() {
        if t.get("type").and_then(Value::as_str) != Some("function") {
            return Err(ModelError::invalid_request(format!("tools[{i}].type must be 'function'")));
        }
        let f = t.get("function").filter(|f| f.is_object()).ok_or_else(|| {
            ModelError::invalid_request(format!("tools[{i}].function must be {{ name, description, parameters }}"))
        })?;
        let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
        let valid_name = !name.is_empty()
            && name.len() <= 64
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(ModelError::invalid_request(format!(
                "tools[{i}].function.name '{name}' must be 1 to 64 letters, digits, '_' or '-'"
            )));
        }
        if tools.iter().any(|t| t.name == name) {
            return Err(ModelError::invalid_request(format!("tools[{i}]: a second function named '{name}'")));
        }
        let parameters = match f.get("parameters") {
            None | Some(Value::Null) => json!({ "type": "object", "properties": {} }),
            Some(p @ Value::Object(_)) => p.clone(),
            Some(_) => {
                return Err(ModelError::invalid_request(format!(
                    "tools[{i}].function.parameters must be a JSON schema object"
                )))
            }
        };
        tools.push(Tool { name: name.to_string(), parameters });
    }
    Ok(tools)
}

/// The constraint on a reply that calls tools, in the Hermes format.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCallGrammar {
    /// What follows `CALL_OPENER`: the call's JSON and `CALL_CLOSER`, then (when several
    /// calls are allowed) more calls, each opened again. Applied from the opener on.
    pub after_opener: ConstraintSpec,
    /// The whole reply when a call is forced: the opener first, then `after_opener`.
    pub forced: Option<ConstraintSpec>,
    /// The whole reply, when it began as bare JSON (`{`) or a ```json fence: calls as
    /// JSON objects, in the fence or not (one per line when several are allowed).
    pub at_reply_start: ConstraintSpec,
}

impl ToolCallGrammar {
    /// The grammar for `tools` under `choice` (not `None`), one call or several.
    pub fn new(tools: &[Tool], choice: &ToolChoice, parallel: bool) -> Result<ToolCallGrammar> {
        let callable: Vec<&Tool> = match choice {
            ToolChoice::None => return Err(ModelError::invalid_request("tool_choice 'none' calls no tool")),
            ToolChoice::Function(name) => {
                let t = tools.iter().find(|t| &t.name == name).ok_or_else(|| {
                    ModelError::invalid_request(format!(
                        "tool_choice names the function '{name}', which is not in tools"
                    ))
                })?;
                vec![t]
            }
            ToolChoice::Auto | ToolChoice::Required => tools.iter().collect(),
        };
        if callable.is_empty() {
            return Err(ModelError::invalid_request("tool_choice asks for a call, but tools is empty"));
        }
        // One object per function, its name fixed and first (the order the template
        // shows the model), its arguments under the function's own schema.
        let calls: Vec<Value> = callable
            .iter()
            .map(|t| {
                json!({
                    "type": "object",
                    "properties": { "name": { "const": t.name }, "arguments": t.parameters },
                    "required": ["name", "arguments"],
                    "additionalProperties": false,
                })
            })
            .collect();
        let schema = if calls.len() == 1 { calls[0].clone() } else { json!({ "anyOf": calls }) };
        let schema = serde_json::to_string(&bounded_whitespace(schema))
            .map_err(|e| ModelError::invalid_request(format!("tools: {e}")))?;
        let more = if parallel { format!(" (\"\\n\"? \"{CALL_OPENER}\" call)*") } else { String::new() };
        let rules = format!("call: \"\\n\"? json \"\\n\"? \"{CALL_CLOSER}\"\njson: %json {schema}\n");
        let after_opener = ConstraintSpec::Grammar(format!("start: call{more}\n{rules}"));
        let forced = match choice {
            ToolChoice::Required | ToolChoice::Function(_) => {
                Some(ConstraintSpec::Grammar(format!("start: \"{CALL_OPENER}\" call{more}\n{rules}")))
            }
            _ => None,
        };
        let bare = if parallel { "json (\"\\n\" json)*" } else { "json" };
        let at_reply_start = ConstraintSpec::Grammar(format!(
            "start: bare | \"{JSON_FENCE}\\n\" bare \"\\n```\"\nbare: {bare}\njson: %json {schema}\n"
        ));
        Ok(ToolCallGrammar { after_opener, forced, at_reply_start })
    }
}

/// A call the model made: the function's name and its arguments as JSON text
/// (OpenAI's `function.arguments`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    pub name: String,
    pub arguments: String,
}

/// The complete calls in `text`, a reply's tool-call part: `{"name", "arguments"}`
/// objects each between `CALL_OPENER` and `CALL_CLOSER`, or bare (one after another,
/// in a ```json fence or not). A call cut short (the token limit) is not returned.
pub fn parse_calls(text: &str) -> Vec<ToolCall> {
    let objects: Vec<Map<String, Value>> = if text.trim_start().starts_with(CALL_OPENER) {
        text.split(CALL_OPENER)
            .filter_map(|part| part.split_once(CALL_CLOSER).map(|(call, _)| call))
            .filter_map(|call| serde_json::from_str(call.trim()).ok())
            .collect()
    } else {
        let body = text.trim_start();
        let body = body.strip_prefix(JSON_FENCE).unwrap_or(body);
        // Values one after another; a cut-short one ends the list.
        serde_json::Deserializer::from_str(body).into_iter::<Map<String, Value>>().map_while(|v| v.ok()).collect()
    };
    objects
        .iter()
        .filter_map(|call| {
            let name = call.get("name")?.as_str()?.to_string();
            let arguments = serde_json::to_string(call.get("arguments")?).ok()?;
            Some(ToolCall { name, arguments })
        })
        .collect()
}

/// Whether a chat template renders a `tools` list (else the model was not taught to call).
pub fn template_supports_tools(source: &str) -> bool {
    source.contains("tools") && source.contains(CALL_OPENER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_complete_calls_only() {
        let text = "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>\n\
                    <tool_call>\n{\"name\": \"neg\", \"arguments\": {\"x\": 3}}\n</tool_call>\n<tool_call>\n{\"name\": \"cut";
        let calls = parse_calls(text);
        let both = vec![
            ToolCall { name: "add".into(), arguments: r#"{"a":1,"b":2}"#.into() },
            ToolCall { name: "neg".into(), arguments: r#"{"x":3}"#.into() },
        ];
        assert_eq!(calls, both);
        let fenced = "```json\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n\
                      {\"name\": \"neg\", \"arguments\": {\"x\": 3}}\n```";
        assert_eq!(parse_calls(fenced), both);
        assert_eq!(parse_calls("{\"name\": \"neg\", \"arguments\": {\"x\": 3}}\n{\"name\": \"a"), both[1..]);
    }

    #[test]
    fn reads_openai_tools_and_choices() {
        let tools = tools_from_openai(&json!([
            { "type": "function", "function": { "name": "get_weather", "parameters": { "type": "object" } } },
            { "type": "function", "function": { "name": "now" } },
        ]))
        .unwrap();
        assert_eq!(tools[1].parameters, json!({ "type": "object", "properties": {} }));
        assert!(tools_from_openai(&json!([{ "type": "function", "function": { "name": "a b" } }])).is_err());
        assert!(tools_from_openai(&json!([{ "type": "retrieval" }])).is_err());
        assert_eq!(ToolChoice::from_openai(&json!("required")).unwrap(), ToolChoice::Required);
        let named = json!({ "type": "function", "function": { "name": "now" } });
        assert_eq!(ToolChoice::from_openai(&named).unwrap(), ToolChoice::Function("now".into()));
        assert!(ToolChoice::from_openai(&json!("sometimes")).is_err());
        assert!(ToolCallGrammar::new(&tools, &ToolChoice::Function("later".into()), false).is_err());
        let g = ToolCallGrammar::new(&tools, &ToolChoice::Required, true).unwrap();
        assert!(g.forced.is_some());
    }
}
