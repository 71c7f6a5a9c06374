//! `kindling chat FILE --messages FILE.json [--tools FILE.json] [--tool-choice C]
//! [--response-format FILE.json] [--max-tokens N] [--temperature T] [--seed S] [--stream]`:
//! one OpenAI chat completion. The files hold the request's `messages` array, `tools`
//! array and `response_format` object; the output is one `chat.completion` object, or
//! with `--stream` its `chat.completion.chunk`s as JSON lines.

use std::io::Write;
use std::path::{Path, PathBuf};

use kindling_model::policy::{self, ChatRequest};
use kindling_model::{Backend, Generation, ToolCall};
use serde_json::{json, Value};

use crate::load::{clock_seed, with_model, Error, Loaded, ModelArgs, ModelTask};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    /// The conversation: a JSON array of OpenAI messages.
    #[arg(long, value_name = "FILE")]
    messages: PathBuf,
    /// Functions the model may call: a JSON array of OpenAI tools.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// `auto` (the default with tools), `none`, `required`, or a function's name.
    #[arg(long, value_name = "CHOICE")]
    tool_choice: Option<String>,
    /// Allow one call only (OpenAI's `parallel_tool_calls: false`).
    #[arg(long)]
    no_parallel_tool_calls: bool,
    /// The reply's format: a JSON file with OpenAI's `response_format` object.
    #[arg(long, value_name = "FILE")]
    response_format: Option<PathBuf>,
    #[arg(long)]
    max_tokens: Option<usize>,
    /// 0 picks the most likely token every step (greedy).
    #[arg(long)]
    temperature: Option<f32>,
    /// Random seed (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// Print `chat.completion.chunk` objects, one JSON line each, as the reply streams.
    #[arg(long)]
    stream: bool,
}

pub fn run(args: Args) -> Result<(), Error> {
    with_model(None, args)
}

impl Args {
    /// The OpenAI request the flags and files spell out.
    fn request(&self) -> Result<Value, Error> {
        let mut req = json!({ "messages": read_json(&self.messages)? });
        if let Some(path) = &self.tools {
            req["tools"] = read_json(path)?;
        }
        if let Some(choice) = &self.tool_choice {
            req["tool_choice"] = match choice.as_str() {
                "none" | "auto" | "required" => json!(choice),
                name => json!({ "type": "function", "function": { "name": name } }),
            };
        }
        if self.no_parallel_tool_calls {
            req["parallel_tool_calls"] = json!(false);
        }
        if let Some(path) = &self.response_format {
            req["response_format"] = read_json(path)?;
        }
        if let Some(n) = self.max_tokens {
            req["max_tokens"] = json!(n);
        }
        if let Some(t) = self.temperature {
            req["temperature"] = json!(t);
        }
        if let Some(s) = self.seed {
            req["seed"] = json!(s);
        }
        Ok(req)
    }
}

impl ModelTask for Args {
    fn model(&self) -> &ModelArgs {
        &self.model
    }

    fn run<B: Backend>(self, loaded: Loaded<B>) -> Result<(), Error> {
        let mut model = loaded.model;
        let request = ChatRequest::from_openai(&self.request()?)?;
        let seed = clock_seed();
        let prepared = policy::prepare_chat(&model, &request, None, seed)?;
        let prompt_tokens = prepared.prompt_ids.len();
        let context = (prompt_tokens + prepared.options.max_tokens).min(model.config().context_length);
        let mut session = model.new_session(context)?;
        let mut generation = Generation::new(prepared.prompt_ids, prepared.options)?;
        // A bad schema or tool list fails here, before the prompt is evaluated.
        generation.compile_constraint(&model)?;

        let head = Head {
            id: format!("chatcmpl-{seed:x}"),
            created: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            model: model.info().name.clone(),
            seed,
        };
        let mut out = std::io::stdout().lock();
        let mut streamed_calls = 0;
        if self.stream {
            writeln!(out, "{}", head.chunk(json!({ "role": "assistant", "content": "" }), None))?;
        }
        while let Some(piece) = pollster::block_on(generation.next(&mut model, &mut session))? {
            if !self.stream {
                continue;
            }
            if !piece.text.is_empty() {
                writeln!(out, "{}", head.chunk(json!({ "content": piece.text }), None))?;
            }
            // Each call is sent whole once its closer has come (OpenAI's streams may split
            // the arguments; a client joins the pieces, so one piece is as valid).
            let calls = generation.tool_calls();
            for (index, call) in calls.iter().enumerate().skip(streamed_calls) {
                writeln!(out, "{}", head.chunk(json!({ "tool_calls": [head.tool_call(index, call, true)] }), None))?;
            }
            streamed_calls = calls.len();
            out.flush()?;
        }
        let finish = generation.finish_reason().map_or("stop", policy::openai_finish_reason);
        let completion_tokens = generation.generated().len();
        let usage = json!({
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        });
        if self.stream {
            let mut last = head.chunk(json!({}), Some(finish));
            last["usage"] = usage;
            writeln!(out, "{last}")?;
            return Ok(());
        }
        let calls = generation.tool_calls();
        let mut message = json!({ "role": "assistant", "content": generation.text() });
        if !calls.is_empty() {
            if generation.text().trim().is_empty() {
                message["content"] = Value::Null;
            }
            message["tool_calls"] = calls.iter().enumerate().map(|(i, c)| head.tool_call(i, c, false)).collect();
        }
        let completion = json!({
            "id": head.id,
            "object": "chat.completion",
            "created": head.created,
            "model": head.model,
            "choices": [{ "index": 0, "message": message, "finish_reason": finish, "logprobs": null }],
            "usage": usage,
        });
        writeln!(out, "{completion}")?;
        Ok(())
    }
}

/// What every chunk of one completion repeats.
struct Head {
    id: String,
    created: u64,
    model: String,
    seed: u64,
}

impl Head {
    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish, "logprobs": null }],
        })
    }

    /// A call in OpenAI's shape, its id unique within the completion; a stream's
    /// chunks also say its `index`.
    fn tool_call(&self, index: usize, call: &ToolCall, streamed: bool) -> Value {
        let mut v = json!({
            "id": format!("call_{:x}_{index}", self.seed),
            "type": "function",
            "function": { "name": call.name, "arguments": call.arguments },
        });
        if streamed {
            v["index"] = json!(index);
        }
        v
    }
}

fn read_json(path: &Path) -> Result<Value, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not valid JSON: {e}", path.display()).into())
}
