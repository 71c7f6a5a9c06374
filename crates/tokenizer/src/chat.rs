//! Chat templates: the GGUF's `tokenizer.chat_template` (a Hugging Face Jinja
//! template) rendered with MiniJinja, set up the way `transformers`'
//! `apply_chat_template` sets up Jinja: `trim_blocks`, `lstrip_blocks`, loop controls,
//! `raise_exception`, `strftime_now`, and Python string/dict methods (`.strip()`,
//! `.startswith()`, `.items()`, ...) through `minijinja-contrib`'s pycompat callback.
//!
//! A GGUF without a template (Gemma 3's here) gets `None` from
//! [`ChatTemplate::from_metadata`]. llama.cpp's chat layer then falls back to ChatML,
//! which is wrong for Gemma; llama.cpp also has a built-in `gemma` format (chosen by
//! name, or when a template mentions `<start_of_turn>`). [`ChatTemplate::builtin`]
//! offers those two formats as Jinja templates that render what llama.cpp's built-ins
//! produce, and [`ChatTemplate::fallback_for`] picks `gemma` for a vocabulary that
//! has `<start_of_turn>`, otherwise ChatML when it has `<|im_start|>`.

use minijinja::{context, Environment, Error, ErrorKind};
use serde::Serialize;

use crate::vocab::{get_str, key};
use crate::{Tokenizer, TokenizerError};

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
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", raise_exception);
        env.add_template_owned(NAME, source.clone()).map_err(template_error)?;
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
        let mut env = self.env.clone();
        let now = self.now_unix.unwrap_or_else(now_unix);
        env.add_function("strftime_now", move |fmt: String| -> String { strftime(now, &fmt) });
        let tmpl = env.get_template(NAME).map_err(template_error)?;
        tmpl.render(context! {
            messages => messages,
            add_generation_prompt => add_generation_prompt,
            bos_token => bos_token,
            eos_token => eos_token,
        })
        .map_err(template_error)
    }
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
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
fn now_unix() -> i64 {
    0
}

/// Python's `strftime` for the common directives, in UTC.
fn strftime(unix: i64, fmt: &str) -> String {
    const MONTHS: [&str; 12] = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September",
        "October", "November", "December",
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
        assert_eq!(c, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>assistant\n");
        assert!(ChatTemplate::builtin("nope").is_none());
    }
}
