//! Chat templates: the GGUF's `tokenizer.chat_template` (a Hugging Face Jinja
//! template) rendered with MiniJinja, set up the way `transformers`'
//! `apply_chat_template` sets up Jinja: `trim_blocks`, `lstrip_blocks`, loop controls,
//! `raise_exception`, `strftime_now`, its `tojson` (Python's `json.dumps`: `", "` and
//! `": "` separators, insertion-ordered keys, no HTML escaping, non-ASCII kept), Python
//! string/dict methods (`.strip()`, `.startswith()`, `.items()`, ...) through
//! `minijinja-contrib`'s pycompat callback, and `None`/`True`/`False` printed as Python
//! prints them.
//!
//! [`ChatTemplate::render`] takes plain role/content messages;
//! [`ChatTemplate::render_json`] takes the conversation (and a tools list) as JSON text
//! in the shape `transformers` takes: messages with `tool_calls`, `tool` messages, and
//! JSON-schema function descriptions, with their key order kept.
//!
//! A GGUF without a template (Gemma 3's here) gets `None` from
//! [`ChatTemplate::from_metadata`]. llama.cpp's chat layer then falls back to ChatML,
//! which is wrong for Gemma; llama.cpp also has a built-in `gemma` format (chosen by
//! name, or when a template mentions `<start_of_turn>`). [`ChatTemplate::builtin`]
//! offers those two formats as Jinja templates that render what llama.cpp's built-ins
//! produce, and [`ChatTemplate::fallback_for`] picks `gemma` for a vocabulary that
//! has `<start_of_turn>`, otherwise ChatML when it has `<|im_start|>`.

use minijinja::value::ValueKind;
use minijinja::{context, Environment, Error, ErrorKind, Value};
use serde::Serialize;

use crate::vocab::{get_str, key};
use crate::{Tokenizer, TokenizerError};

mod budget;

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> ChatMessage {
        ChatMessage { role: role.into(), content: content.into() }
    }
}

/// A parsed chat template, ready to render.
#[derive(Clone)]
pub struct ChatTemplate {
    env: Environment<'static>,
    source: String,
    now_unix: Option<i64>,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").field("source", &self.source).finish_non_exhaustive()
    }
}

const NAME: &str = "chat";

/// llama.cpp's ChatML fallback.
const CHATML: &str = "{%- for message in messages -%}\n\
  {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}\n\
{%- endfor -%}\n\
{%- if add_generation_prompt -%}\n\
  {{- '<|im_start|>assistant\\n' -}}\n\
{%- endif -%}";

/// llama.cpp's built-in `gemma` format: system messages are trimmed and merged into
/// the next user turn, `assistant` is called `model`, every content is trimmed.
const GEMMA: &str = "{%- set ns = namespace(system='') -%}\n\
{%- for message in messages -%}\n\
  {%- if message.role == 'system' -%}\n\
    {%- set ns.system = ns.system + message.content | trim -%}\n\
  {%- else -%}\n\
    {%- set role = 'model' if message.role == 'assistant' else message.role -%}\n\
    {{- '<start_of_turn>' + role + '\\n' -}}\n\
    {%- if ns.system != '' and role != 'model' -%}\n\
      {{- ns.system + '\\n\\n' -}}\n\
      {%- set ns.system = '' -%}\n\
    {%- endif -%}\n\
    {{- message.content | trim + '<end_of_turn>\\n' -}}\n\
  {%- endif -%}\n\
{%- endfor -%}\n\
{%- if add_generation_prompt -%}\n\
  {{- '<start_of_turn>model\\n' -}}\n\
{%- endif -%}";

impl ChatTemplate {
    /// Parses a Jinja chat template.
    pub fn new(source: impl Into<String>) -> Result<ChatTemplate, TokenizerError> {
        let source = source.into();
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        // The `tojson` filter, Python's methods and the formatter (which prints as
        // Python does) are installed per render, with the render's budget.
        env.add_function("raise_exception", raise_exception);
        budget::check_syntax(NAME, &source).map_err(template_error)?;
        Ok(ChatTemplate { env, source, now_unix: None })
    }

    /// `tokenizer.chat_template`, or `None` when the file has none.
    pub fn from_metadata(md: &kindling_gguf::Metadata) -> Result<Option<ChatTemplate>, TokenizerError> {
        match get_str(md, key::CHAT_TEMPLATE)? {
            Some(s) => ChatTemplate::new(s).map(Some),
            None => Ok(None),
        }
    }

    /// One of llama.cpp's built-in formats by name: `chatml` or `gemma`.
    pub fn builtin(name: &str) -> Option<ChatTemplate> {
        let source = match name {
            "chatml" => CHATML,
            "gemma" => GEMMA,
            _ => return None,
        };
        ChatTemplate::new(source).ok()
    }

    /// A built-in format for a model without a template, chosen by its vocabulary:
    /// `gemma` when it has `<start_of_turn>`, `chatml` when it has `<|im_start|>`.
    pub fn fallback_for(tokenizer: &Tokenizer) -> Option<ChatTemplate> {
        if tokenizer.token_id("<start_of_turn>").is_some() {
            ChatTemplate::builtin("gemma")
        } else if tokenizer.token_id("<|im_start|>").is_some() {
            ChatTemplate::builtin("chatml")
        } else {
            None
        }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Fixes the time `strftime_now` reports (seconds since 1970, UTC). Without it,
    /// native builds use the system clock and `wasm32-unknown-unknown` (which has no
    /// clock) uses 1970-01-01.
    pub fn set_now(&mut self, unix_seconds: i64) {
        self.now_unix = Some(unix_seconds);
    }

    /// Renders the conversation.
    pub fn render(
        &self,
        messages: &[ChatMessage],
        add_generation_prompt: bool,
        bos_token: &str,
        eos_token: &str,
    ) -> Result<String, TokenizerError> {
        self.render_values(messages, None::<&()>, add_generation_prompt, bos_token, eos_token)
    }

    /// Renders a conversation given as JSON text, as `transformers`'
    /// `apply_chat_template(messages, tools=tools)` does: `messages_json` is an array
    /// of message objects (`role`, `content`, and whatever else the template reads:
    /// `tool_calls`, `name`, ...), `tools_json` an array of tool descriptions (JSON
    /// schemas) or `None` (the template sees `tools` as `None`). Object keys keep the
    /// order they have in the text, as Python dicts keep theirs, so `tojson` prints
    /// them as `transformers` would. Messages are normalized as `apply_chat_template`
    /// normalizes them: keys whose value is `null` are dropped (OpenAI's
    /// `"content": null` beside `tool_calls` becomes undefined), and reasoning given
    /// as `reasoning_content`, `thinking` or `reasoning` is also offered as
    /// `thinking` and `reasoning_content`.
    pub fn render_json(
        &self,
        messages_json: &str,
        tools_json: Option<&str>,
        add_generation_prompt: bool,
        bos_token: &str,
        eos_token: &str,
    ) -> Result<String, TokenizerError> {
        self.render_json_measured(messages_json, tools_json, add_generation_prompt, bos_token, eos_token)
            .map(|(text, _)| text)
    }

    /// [`render_json`](Self::render_json), also returning the instructions
    /// (MiniJinja's fuel) the render used: the figure the budget is set from.
    #[doc(hidden)]
    pub fn render_json_measured(
        &self,
        messages_json: &str,
        tools_json: Option<&str>,
        add_generation_prompt: bool,
        bos_token: &str,
        eos_token: &str,
    ) -> Result<(String, u64), TokenizerError> {
        let parse = |what: &str, text: &str| -> Result<Value, TokenizerError> {
            serde_json::from_str::<Value>(text).map_err(|e| TokenizerError::Template(format!("{what} JSON: {e}")))
        };
        let messages = parse("messages", messages_json)?;
        if messages.kind() != ValueKind::Seq {
            return Err(TokenizerError::Template("messages JSON: expected an array".into()));
        }
        let messages = normalize_messages(&messages).map_err(template_error)?;
        let tools = tools_json.map(|t| parse("tools", t)).transpose()?;
        self.render_measured(&messages, tools.as_ref(), add_generation_prompt, bos_token, eos_token)
    }

    /// Renders any serializable messages and tools (your own structs, MiniJinja or
    /// `serde_json` values). Map keys come in the order the value serializes them:
    /// `serde_json::Value` without its `preserve_order` feature sorts them, which
    /// changes what `tojson` prints; [`render_json`](Self::render_json) keeps a JSON
    /// text's order.
    pub fn render_values<M, T>(
        &self,
        messages: &M,
        tools: Option<&T>,
        add_generation_prompt: bool,
        bos_token: &str,
        eos_token: &str,
    ) -> Result<String, TokenizerError>
    where
        M: Serialize + ?Sized,
        T: Serialize + ?Sized,
    {
        self.render_measured(messages, tools, add_generation_prompt, bos_token, eos_token).map(|(text, _)| text)
    }

    /// [`render_values`](Self::render_values), also returning the instructions it used.
    fn render_measured<M, T>(
        &self,
        messages: &M,
        tools: Option<&T>,
        add_generation_prompt: bool,
        bos_token: &str,
        eos_token: &str,
    ) -> Result<(String, u64), TokenizerError>
    where
        M: Serialize + ?Sized,
        T: Serialize + ?Sized,
    {
        let mut env = self.env.clone();
        let now = self.now_unix.unwrap_or_else(now_unix);
        env.add_function("strftime_now", move |fmt: String| -> String { strftime(now, &fmt) });
        let tools = match tools {
            Some(t) => Value::from_serialize(t),
            None => Value::from(()),
        };
        // transformers always passes `tools` and `documents`, as None when not given.
        let ctx = context! {
            messages => Value::from_serialize(messages),
            tools => tools,
            documents => Value::from(()),
            add_generation_prompt => add_generation_prompt,
            bos_token => bos_token,
            eos_token => eos_token,
        };
        budget::render(&mut env, NAME, &self.source, ctx)
    }
}

/// `apply_chat_template`'s message clean-up: drop the keys whose value is `None`, then
/// (`_alias_reasoning_fields`) a message with reasoning under `reasoning_content`,
/// `thinking` or `reasoning` (the first one set) becomes
/// `{"thinking": r, **message, "reasoning_content": r}`.
fn normalize_messages(messages: &Value) -> Result<Value, Error> {
    const REASONING: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];
    let mut out = Vec::new();
    for m in messages.try_iter()? {
        if m.kind() != ValueKind::Map {
            return Err(Error::new(ErrorKind::InvalidOperation, format!("chat messages must be objects, got {m}")));
        }
        let mut entries: Vec<(Value, Value)> = Vec::new();
        for k in m.try_iter()? {
            let v = m.get_item(&k)?;
            if !v.is_none() {
                entries.push((k, v));
            }
        }
        let get = |entries: &[(Value, Value)], key: &str| {
            entries.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v.clone())
        };
        if let Some(r) = REASONING.iter().find_map(|key| get(&entries, key)) {
            // Python: {"thinking": r, **message, "reasoning_content": r}
            let mut aliased: Vec<(Value, Value)> = vec![(Value::from("thinking"), r.clone())];
            for (k, v) in entries {
                match aliased.iter_mut().find(|(ak, _)| *ak == k) {
                    Some(slot) => slot.1 = v,
                    None => aliased.push((k, v)),
                }
            }
            match aliased.iter_mut().find(|(k, _)| k.as_str() == Some("reasoning_content")) {
                Some(slot) => slot.1 = r,
                None => aliased.push((Value::from("reasoning_content"), r)),
            }
            entries = aliased;
        }
        out.push(Value::from_iter(entries));
    }
    Ok(Value::from(out))
}

/// Prints values as Python's `str()` does where MiniJinja differs: `None`, `True`,
/// `False`, and floats (`1e-05`, `1e+16`). Everything else as MiniJinja prints it.
fn python_formatter(
    out: &mut minijinja::Output<'_>,
    state: &minijinja::State<'_, '_>,
    value: &Value,
) -> Result<(), Error> {
    let text = match value.kind() {
        ValueKind::None => "None".to_string(),
        ValueKind::Bool => (if value.is_true() { "True" } else { "False" }).to_string(),
        ValueKind::Number if !value.is_integer() => match f64::try_from(value.clone()) {
            Ok(f) if f.is_finite() => crate::pyjson::float_repr(f),
            Ok(f) if f.is_nan() => "nan".to_string(),
            Ok(f) => (if f > 0.0 { "inf" } else { "-inf" }).to_string(),
            Err(_) => return minijinja::escape_formatter(out, state, value),
        },
        _ => return minijinja::escape_formatter(out, state, value),
    };
    out.write_str(&text).map_err(Error::from)
}

fn raise_exception(msg: String) -> Result<String, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, msg))
}

fn template_error(e: Error) -> TokenizerError {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    TokenizerError::Template(msg)
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
fn now_unix() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
fn now_unix() -> i64 {
    0
}

/// Python's `strftime` for the common directives, in UTC.
fn strftime(unix: i64, fmt: &str) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    const DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (secs / 3600, secs / 60 % 60, secs % 60);
    // 1970-01-01 was a Thursday.
    let weekday = (days + 3).rem_euclid(7) as usize;
    let yday = days - days_from_civil(y, 1, 1) + 1;
    let month = MONTHS[(m - 1) as usize];
    let day = DAYS[weekday];
    let mut out = String::new();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('Y') => out.push_str(&y.to_string()),
            Some('y') => out.push_str(&format!("{:02}", y.rem_euclid(100))),
            Some('m') => out.push_str(&format!("{m:02}")),
            Some('d') => out.push_str(&format!("{d:02}")),
            Some('e') => out.push_str(&format!("{d:2}")),
            Some('H') => out.push_str(&format!("{hh:02}")),
            Some('I') => out.push_str(&format!("{:02}", if hh % 12 == 0 { 12 } else { hh % 12 })),
            Some('p') => out.push_str(if hh < 12 { "AM" } else { "PM" }),
            Some('M') => out.push_str(&format!("{mm:02}")),
            Some('S') => out.push_str(&format!("{ss:02}")),
            Some('j') => out.push_str(&format!("{yday:03}")),
            Some('B') => out.push_str(month),
            Some('b') | Some('h') => out.push_str(&month[..3]),
            Some('A') => out.push_str(day),
            Some('a') => out.push_str(&day[..3]),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// Days since 1970-01-01 → (year, month 1..=12, day 1..=31), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(strftime(0, "%Y-%m-%d %H:%M:%S %A %j"), "1970-01-01 00:00:00 Thursday 001");
        // 2024-07-26 12:34:56 UTC, a Friday.
        assert_eq!(strftime(1_721_997_296, "%d %b %Y, %a %I%p"), "26 Jul 2024, Fri 12PM");
        assert_eq!(strftime(-1, "%Y-%m-%d %H:%M:%S"), "1969-12-31 23:59:59");
    }

    #[test]
    fn python_methods_and_exceptions() {
        let t = ChatTemplate::new(
            "{% for m in messages %}{{ m.content.strip().upper() }}{% if m.role.startswith('u') %}!{% endif %}{% endfor %}",
        )
        .unwrap();
        let out = t.render(&[ChatMessage::new("user", "  hi  ")], false, "", "").unwrap();
        assert_eq!(out, "HI!");
        let t = ChatTemplate::new("{{ raise_exception('nope') }}").unwrap();
        let err = t.render(&[], false, "", "").unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
        assert!(ChatTemplate::new("{% for %}").is_err());
    }

    #[test]
    fn json_messages_like_transformers() {
        let t = ChatTemplate::new(
            "{% for m in messages %}{{ m.role }}:{{ m.content is defined }}:{{ m.keys() | list | join(',') }}\n{% endfor %}\
             {{ tools | tojson }}|{{ tools[0] | tojson(indent=2) }}|{{ tools | tojson(separators=(',', ':'), sort_keys=true) }}\
             |{{ none }}|{{ true }}|{{ 1e-5 }}|{{ 2.0 }}",
        )
        .unwrap();
        let messages = r#"[
            {"role": "assistant", "content": null, "tool_calls": []},
            {"role": "assistant", "content": "x", "reasoning": "think", "thinking": null}
        ]"#;
        let tools = r#"[{"z": "é<>&'", "a": [1, 2.5, true, null], "m": {}}]"#;
        let out = t.render_json(messages, Some(tools), false, "", "").unwrap();
        assert_eq!(
            out,
            "assistant:False:role,tool_calls\n\
             assistant:True:thinking,role,content,reasoning,reasoning_content\n\
             [{\"z\": \"é<>&'\", \"a\": [1, 2.5, true, null], \"m\": {}}]|\
             {\n  \"z\": \"é<>&'\",\n  \"a\": [\n    1,\n    2.5,\n    true,\n    null\n  ],\n  \"m\": {}\n}|\
             [{\"a\":[1,2.5,true,null],\"m\":{},\"z\":\"é<>&'\"}]|None|True|1e-05|2.0"
        );
        assert!(t.render_json("{}", None, false, "", "").is_err());
        assert!(t.render_json("[1]", None, false, "", "").is_err());
    }

    #[test]
    fn builtins() {
        let msgs = [
            ChatMessage::new("system", " Be brief. "),
            ChatMessage::new("user", "Hi"),
            ChatMessage::new("assistant", "Hello!"),
        ];
        let g = ChatTemplate::builtin("gemma").unwrap().render(&msgs, true, "<bos>", "<eos>").unwrap();
        assert_eq!(
            g,
            "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n<start_of_turn>model\n"
        );
        let c = ChatTemplate::builtin("chatml").unwrap().render(&msgs[1..], true, "", "").unwrap();
        assert_eq!(
            c,
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>assistant\n"
        );
        assert!(ChatTemplate::builtin("nope").is_none());
    }
}
