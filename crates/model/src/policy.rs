//! Generation policy, in one place for the CLI and the browser package: how a request
//! becomes prompt tokens and `GenerateOptions` — BOS handling, the chat template with
//! its `tools`, sampling defaults, the output constraint (OpenAI's `response_format`),
//! tool calls — and how many prompt rows each backend evaluates per batch.

use serde_json::{Map, Value};

use kindling_tokenizer::{ChatTemplate, Tokenizer};

use crate::backend::Backend;
use crate::config::ModelConfig;
use crate::constraint::ConstraintSpec;
use crate::engine::{Model, ModelOptions};
use crate::error::{ModelError, Result};
use crate::forward::workspace_buffers;
use crate::generate::{FinishReason, GenerateOptions};
use crate::sampler::SamplerConfig;
use crate::tools::{self, Tool, ToolCallGrammar, ToolChoice};

/// Sampling defaults (llama.cpp's usual chat settings).
pub const TEMPERATURE: f32 = 0.8;
pub const TOP_K: usize = 40;
pub const TOP_P: f32 = 0.95;
pub const MIN_P: f32 = 0.05;
/// Tokens generated when the request gives no limit.
pub const MAX_TOKENS: usize = 256;

/// Prompt positions per batch on a GPU, natively and in a browser: 2,048 rows, fewer where
/// the session holds fewer positions or a buffer would pass the device's binding
/// (`gpu_options`). A long prompt's matmuls then have more tiles per dispatch (fewer
/// partial waves and split-K spans), a weight's dequantized panel serves more rows, and
/// attention runs fewer, fuller chunks. On an H200, natively, the 1.5B's 4,096-token prefill
/// went 19,360 → 23,077 tok/s against 512-row batches, the 0.5B's 38,554 → 49,031; 4,096 rows
/// were no faster (bench/results/prefill-batch-h200.md). Through Dawn (the browser build):
/// the 1.5B's 2,048- and 4,096-token prefills 1.13× and 1.11× against 512 rows, the 0.5B's
/// 1.21× and 1.26× (bench/results/browser-batch-h200.md). The price is the activations'
/// memory, four times 512 rows' (the 1.5B: 287 MB against 72), which is why a session of
/// few positions gets fewer rows. (64 rows left most of the device idle: SmolLM2's 512-token
/// prefill ran at 4,244 tok/s through Dawn on an H100 in 64-row batches.)
pub const GPU_OPTIONS: ModelOptions = ModelOptions { max_batch: 2048 };
/// On the CPU, 64 rows: the browser's wasm memory holds their activations, and larger
/// batches gain nothing there.
pub const CPU_OPTIONS: ModelOptions = ModelOptions { max_batch: 64 };
/// Natively (the CLI), 512 rows on the CPU too: each dequantized weight panel then serves
/// eight times the rows. Qwen2.5-Coder-0.5B's 512-token prefill on the 2-core development
/// VM: 148–154 tok/s in 64-row batches, 192–195 in 512-row ones.
pub const NATIVE_CPU_OPTIONS: ModelOptions = ModelOptions { max_batch: 512 };

/// The rows a GPU session of `positions` takes: `GPU_OPTIONS`, no more than its positions
/// (rounded up to a multiple of 64: no batch is longer), halved until its workspace fits
/// one binding of `max_binding` bytes (`fit_batch_to_binding`).
pub fn gpu_options(cfg: &ModelConfig, positions: usize, max_binding: u64) -> ModelOptions {
    let rows = GPU_OPTIONS.max_batch.min(positions.max(1).next_multiple_of(64));
    fit_batch_to_binding(cfg, ModelOptions { max_batch: rows }, max_binding)
}

/// `options` with its batch rows halved until every buffer of the model's workspace fits
/// one storage binding of `max_binding` bytes (a device's limit: 128 MiB on some, and a
/// 7B's feed-forward activations over 2,048 rows are 155 MB), down to 64 rows at least.
pub fn fit_batch_to_binding(cfg: &ModelConfig, options: ModelOptions, max_binding: u64) -> ModelOptions {
    let fits = |rows| workspace_buffers(cfg, rows).iter().all(|b| b.bytes() <= max_binding);
    let mut rows = options.max_batch.max(1);
    while rows > 64 && !fits(rows) {
        rows = (rows / 2).max(64);
    }
    ModelOptions { max_batch: rows }
}

/// The sampler with the defaults above and `seed`.
pub fn default_sampler(seed: u64) -> SamplerConfig {
    SamplerConfig {
        temperature: TEMPERATURE,
        top_k: TOP_K,
        top_p: TOP_P,
        min_p: MIN_P,
        seed,
        ..SamplerConfig::default()
    }
}

/// Prompt token ids: plain text is text (with the BOS the vocabulary asks for); a
/// rendered chat template (`templated`) spells out its control tokens.
pub fn prompt_ids(tokenizer: &Tokenizer, text: &str, templated: bool) -> Vec<u32> {
    let mut ids = tokenizer.encode(text, true, templated);
    // A template that writes `bos_token` itself would otherwise get two.
    if ids.len() >= 2 && ids[0] == ids[1] && Some(ids[0]) == tokenizer.bos() {
        ids.remove(0);
    }
    ids
}

/// OpenAI's `response_format`: `{ type: 'text' }` (none), `{ type: 'json_object' }`, or
/// `{ type: 'json_schema', json_schema: { name, schema, strict } }`.
pub fn response_format(v: &Value) -> Result<Option<ConstraintSpec>> {
    match v.get("type").and_then(Value::as_str) {
        Some("text") => Ok(None),
        Some("json_object") => Ok(Some(ConstraintSpec::JsonObject)),
        Some("json_schema") => {
            let spec = v.get("json_schema").filter(|s| s.is_object()).ok_or_else(|| {
                ModelError::invalid_request("response_format.json_schema must be { name, schema, strict }")
            })?;
            match spec.get("schema") {
                // OpenAI allows a schema-less json_schema: any JSON object then.
                None | Some(Value::Null) => Ok(Some(ConstraintSpec::JsonObject)),
                Some(Value::String(text)) => ConstraintSpec::json_schema_text(text).map(Some),
                Some(schema @ Value::Object(_)) => Ok(Some(ConstraintSpec::JsonSchema(schema.clone()))),
                Some(_) => {
                    Err(ModelError::invalid_request("response_format.json_schema.schema must be a JSON schema object"))
                }
            }
        }
        Some(other) => Err(ModelError::invalid_request(format!(
            "response_format.type '{other}' is not one of 'text', 'json_object', 'json_schema'"
        ))),
        None => {
            Err(ModelError::invalid_request("response_format must be { type: 'text' | 'json_object' | 'json_schema' }"))
        }
    }
}

/// An OpenAI chat-completion request (`chat.completions.create`'s body), read and
/// checked. Fields Kindling does not use (`model`, `n: 1`, `user`, ...) are ignored.
#[derive(Clone, Debug)]
pub struct ChatRequest {
    /// The messages as the chat template takes them (see `template_messages`).
    pub messages: Value,
    /// `tools` as given (the template renders them), and read.
    pub tools_json: Option<Value>,
    pub tools: Vec<Tool>,
    pub tool_choice: ToolChoice,
    pub parallel_tool_calls: bool,
    pub response_format: Option<ConstraintSpec>,
    pub max_tokens: Option<usize>,
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<usize>,
    pub min_p: Option<f32>,
    pub repetition_penalty: Option<f32>,
    pub seed: Option<u64>,
    pub stop: Vec<String>,
    /// A Jinja chat template to use instead of the model's (not OpenAI's; vLLM's name).
    pub chat_template: Option<String>,
}

impl ChatRequest {
    pub fn from_openai(v: &Value) -> Result<ChatRequest> {
        let req = v.as_object().ok_or_else(|| ModelError::invalid_request("the chat request must be an object"))?;
        let get = |key: &str| req.get(key).filter(|v| !v.is_null());
        let messages = get("messages")
            .ok_or_else(|| ModelError::invalid_request("messages is missing: give [{ role, content }]"))?;
        let tools_json = get("tools").filter(|t| t.as_array().is_some_and(|a| !a.is_empty())).cloned();
        let tools = tools_json.as_ref().map(tools::tools_from_openai).transpose()?.unwrap_or_default();
        let tool_choice = match get("tool_choice") {
            Some(c) => ToolChoice::from_openai(c)?,
            None if tools.is_empty() => ToolChoice::None,
            None => ToolChoice::Auto,
        };
        if tool_choice != ToolChoice::None && tools.is_empty() {
            return Err(ModelError::invalid_request("tool_choice asks for tool calls, but the request has no tools"));
        }
        if let ToolChoice::Function(name) = &tool_choice {
            if !tools.iter().any(|t| &t.name == name) {
                return Err(ModelError::invalid_request(format!(
                    "tool_choice names the function '{name}', which is not in tools"
                )));
            }
        }
        let response_format = get("response_format").map(response_format).transpose()?.flatten();
        if response_format.is_some() && tool_choice != ToolChoice::None {
            return Err(ModelError::invalid_request(
                "response_format with tools is not supported: give one, or tool_choice 'none'",
            ));
        }
        let number = |key: &str| -> Result<Option<f64>> {
            match get(key) {
                None => Ok(None),
                Some(v) => {
                    v.as_f64().map(Some).ok_or_else(|| ModelError::invalid_request(format!("{key} must be a number")))
                }
            }
        };
        let count = |key: &str| -> Result<Option<usize>> {
            match number(key)? {
                Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64 => Ok(Some(n as usize)),
                Some(n) => Err(ModelError::invalid_request(format!("{key} must be a whole number ≥ 0, got {n}"))),
                None => Ok(None),
            }
        };
        let stop = match get("stop") {
            None => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .map(|s| {
                    s.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| ModelError::invalid_request("stop must hold only strings"))
                })
                .collect::<Result<_>>()?,
            Some(_) => return Err(ModelError::invalid_request("stop must be a string or an array of strings")),
        };
        let parallel_tool_calls = match get("parallel_tool_calls") {
            None => true,
            Some(v) => {
                v.as_bool().ok_or_else(|| ModelError::invalid_request("parallel_tool_calls must be true or false"))?
            }
        };
        let chat_template = match get("chat_template") {
            None => None,
            Some(v) => Some(
                v.as_str().ok_or_else(|| ModelError::invalid_request("chat_template must be a string"))?.to_string(),
            ),
        };
        Ok(ChatRequest {
            messages: template_messages(messages)?,
            tools_json,
            tools,
            tool_choice,
            parallel_tool_calls,
            response_format,
            max_tokens: count("max_completion_tokens")?.or(count("max_tokens")?),
            temperature: number("temperature")?.map(|t| t as f32),
            top_p: number("top_p")?.map(|p| p as f32),
            top_k: count("top_k")?,
            min_p: number("min_p")?.map(|p| p as f32),
            repetition_penalty: number("repetition_penalty")?.map(|p| p as f32),
            seed: count("seed")?.map(|s| s as u64),
            stop,
            chat_template,
        })
    }

    /// The sampler: the request's settings over the defaults, `seed` when it gives none.
    pub fn sampler(&self, seed: u64) -> SamplerConfig {
        let d = default_sampler(self.seed.unwrap_or(seed));
        SamplerConfig {
            temperature: self.temperature.unwrap_or(d.temperature),
            top_k: self.top_k.unwrap_or(d.top_k),
            top_p: self.top_p.unwrap_or(d.top_p),
            min_p: self.min_p.unwrap_or(d.min_p),
            repetition_penalty: self.repetition_penalty.unwrap_or(d.repetition_penalty),
            ..d
        }
    }
}

/// A chat request made ready to generate: the rendered prompt's ids and the options.
pub struct PreparedChat {
    pub prompt_ids: Vec<u32>,
    pub options: GenerateOptions,
}

/// Renders `request` through the model's chat template (or the request's own), with
/// its tools when it may call them, and sets up sampling, the constraint and the
/// tool-call grammar. `now_unix`: the clock `strftime_now` reads (the browser's);
/// `seed`: the seed when the request gives none.
pub fn prepare_chat<B: Backend>(
    model: &Model<B>,
    request: &ChatRequest,
    now_unix: Option<i64>,
    seed: u64,
) -> Result<PreparedChat> {
    let mut template = match &request.chat_template {
        Some(source) => ChatTemplate::new(source.clone())?,
        None => model.chat_template().cloned().ok_or_else(|| {
            ModelError::invalid_request("this model has no chat template (tokenizer.chat_template): pass chat_template, or generate from plain text")
        })?,
    };
    if let Some(now) = now_unix {
        template.set_now(now);
    }
    let calls = request.tool_choice != ToolChoice::None;
    if calls && !tools::template_supports_tools(template.source()) {
        return Err(ModelError::invalid_request(format!(
            "this model's chat template does not render tools in the {}…{} format, so the model was not taught to \
             call them: pass a chat_template that does, or leave tools out",
            tools::CALL_OPENER,
            tools::CALL_CLOSER
        )));
    }
    let tok = model.tokenizer();
    let text_of = |id: Option<u32>| id.and_then(|i| tok.token_text(i)).unwrap_or("").to_string();
    let json =
        |v: &Value| serde_json::to_string(v).map_err(|e| ModelError::invalid_request(format!("the request: {e}")));
    // tool_choice 'none': the tools are not shown, so the model does not try to call.
    let tools_text = match (&request.tools_json, calls) {
        (Some(t), true) => Some(json(t)?),
        _ => None,
    };
    let text = template.render_json(
        &json(&request.messages)?,
        tools_text.as_deref(),
        true,
        &text_of(tok.bos()),
        &text_of(tok.eos()),
    )?;
    let prompt_ids = prompt_ids(tok, &text, true);
    let tool_calls = if calls {
        Some(ToolCallGrammar::new(&request.tools, &request.tool_choice, request.parallel_tool_calls)?)
    } else {
        None
    };
    let options = GenerateOptions {
        max_tokens: request.max_tokens.unwrap_or(MAX_TOKENS),
        sampler: request.sampler(seed),
        stop: request.stop.clone(),
        stop_at_eog: true,
        constraint: request.response_format.clone(),
        tool_calls,
    };
    Ok(PreparedChat { prompt_ids, options })
}

/// OpenAI's `finish_reason` for how a generation ended.
pub fn openai_finish_reason(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::MaxTokens | FinishReason::ContextFull => "length",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::EndOfGeneration | FinishReason::StopString | FinishReason::ConstraintComplete => "stop",
    }
}

/// OpenAI messages as chat templates read them (what `transformers` gets from its
/// callers): text parts joined into one `content` string, and an assistant's
/// `tool_calls[].function.arguments` (OpenAI's JSON text) parsed into the object that
/// templates print with `tojson`.
fn template_messages(messages: &Value) -> Result<Value> {
    let list = messages
        .as_array()
        .ok_or_else(|| ModelError::invalid_request("messages must be an array of { role, content }"))?;
    let mut out = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        let mut m: Map<String, Value> = m
            .as_object()
            .cloned()
            .ok_or_else(|| ModelError::invalid_request(format!("messages[{i}] must be an object")))?;
        if !m.get("role").is_some_and(Value::is_string) {
            return Err(ModelError::invalid_request(format!("messages[{i}].role must be a string")));
        }
        if let Some(Value::Array(parts)) = m.get("content") {
            let mut text = String::new();
            for part in parts {
                match (part.get("type").and_then(Value::as_str), part.get("text").and_then(Value::as_str)) {
                    (Some("text"), Some(t)) => text.push_str(t),
                    _ => {
                        return Err(ModelError::invalid_request(format!(
                            "messages[{i}].content: only text parts are supported"
                        )))
                    }
                }
            }
            m.insert("content".into(), Value::String(text));
        }
        match m.get("content") {
            None | Some(Value::Null) | Some(Value::String(_)) => {}
            Some(_) => {
                return Err(ModelError::invalid_request(format!(
                    "messages[{i}].content must be a string or text parts"
                )))
            }
        }
        if let Some(Value::Array(calls)) = m.get_mut("tool_calls") {
            for call in calls.iter_mut() {
                if let Some(args) = call.get_mut("function").and_then(|f| f.get_mut("arguments")) {
                    if let Some(parsed) = args.as_str().and_then(|a| serde_json::from_str::<Value>(a).ok()) {
                        *args = parsed;
                    }
                }
            }
        }
        out.push(Value::Object(m));
    }
    Ok(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use kindling_gguf::{Metadata, Value as GgufValue};
    use serde_json::json;

    use super::*;

    /// Qwen2.5-7B's shapes: the widest activation is its feed-forward's 18,944 columns.
    fn qwen_7b() -> ModelConfig {
        let mut md = Metadata::new();
        let mut put = |k: &str, v: u32| assert!(md.insert(format!("qwen2.{k}"), GgufValue::U32(v)));
        put("embedding_length", 3584);
        put("block_count", 28);
        put("feed_forward_length", 18944);
        put("attention.head_count", 28);
        put("attention.head_count_kv", 4);
        put("context_length", 32768);
        put("vocab_size", 152064);
        md.insert("general.architecture".into(), GgufValue::String("qwen2".into()));
        md.insert("qwen2.attention.layer_norm_rms_epsilon".into(), GgufValue::F32(1e-6));
        ModelConfig::from_metadata(&md).expect("config")
    }

    #[test]
    fn batch_rows_halve_until_the_workspace_fits_one_binding() {
        let cfg = qwen_7b();
        let rows = |binding: u64| fit_batch_to_binding(&cfg, GPU_OPTIONS, binding).max_batch;
        // 2,048 rows of the feed-forward are 155 MB: past a 128 MiB binding, 1,024 fit.
        assert_eq!(rows(128 << 20), 1024);
        assert!(workspace_buffers(&cfg, 1024).iter().all(|b| b.bytes() <= 128 << 20));
        assert_eq!(rows(4 << 30), 2048);
        // Never below 64 rows (the allocation then says what does not fit).
        assert_eq!(rows(1 << 20), 64);
        // Rows given below the floor stay as given.
        assert_eq!(fit_batch_to_binding(&cfg, ModelOptions { max_batch: 8 }, 1 << 20).max_batch, 8);
        // A session takes no more rows than its positions, in whole 64s.
        let session = |positions: usize, binding: u64| gpu_options(&cfg, positions, binding).max_batch;
        assert_eq!(session(4096, 4 << 30), 2048);
        assert_eq!(session(4096, 128 << 20), 1024);
        assert_eq!(
            (session(1000, 4 << 30), session(512, 4 << 30), session(100, 4 << 30), session(0, 4 << 30)),
            (1024, 512, 128, 64)
        );
    }

    #[test]
    fn reads_an_openai_request() {
        let req = ChatRequest::from_openai(&json!({
            "model": "any",
            "messages": [
                { "role": "user", "content": [{ "type": "text", "text": "2+2?" }] },
                { "role": "assistant", "content": null, "tool_calls": [
                    { "id": "call_1", "type": "function", "function": { "name": "add", "arguments": "{\"a\":2,\"b\":2}" } }
                ] },
                { "role": "tool", "tool_call_id": "call_1", "content": "4" },
            ],
            "tools": [{ "type": "function", "function": { "name": "add", "parameters": { "type": "object" } } }],
            "max_tokens": 20, "temperature": 0, "seed": 7, "stop": "\n\n",
        }))
        .unwrap();
        assert_eq!(req.tool_choice, ToolChoice::Auto);
        assert_eq!(req.messages[0]["content"], json!("2+2?"));
        assert_eq!(req.messages[1]["tool_calls"][0]["function"]["arguments"], json!({ "a": 2, "b": 2 }));
        assert_eq!(req.sampler(1).seed, 7);
        assert_eq!(req.sampler(1).temperature, 0.0);
        assert_eq!(req.stop, vec!["\n\n".to_string()]);

        let bad = |v: Value| ChatRequest::from_openai(&v).unwrap_err().to_string();
        assert!(bad(json!({ "messages": [], "tool_choice": "required" })).contains("no tools"));
        assert!(bad(json!({ "messages": [], "max_tokens": -1 })).contains("max_tokens"));
        assert!(bad(json!({ "messages": [{ "content": "x" }] })).contains("role"));
        assert!(bad(json!({ "messages": [], "response_format": { "type": "xml" } })).contains("xml"));
    }
}
