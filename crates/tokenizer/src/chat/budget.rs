//! What one render of a chat template may spend. The template comes out of a
//! downloaded file, so it is untrusted code, and MiniJinja alone stops only huge
//! `range`s, deep recursion and `'x' * huge`. Three bounds are added:
//!
//! - Work: MiniJinja's fuel counts instructions, which stops nested loops and
//!   long recursion.
//! - Text: fuel does not stop a string doubled through a `namespace` sixty times
//!   (about ten instructions a doubling), and MiniJinja has no hook on `~`, `+` or
//!   `*`. So the compiled template's `StringConcat`, `Add` and `Mul` instructions
//!   are swapped one for one for calls to checked functions (MiniJinja's
//!   `unstable_machinery`, hence the exact version in Cargo.toml), and the filters
//!   and Python methods whose output can outgrow their input (`replace`, `join`,
//!   `format`, `escape`, `indent`, `split`, ...) are checked before they build
//!   anything. Every piece of text is at most [`MAX_TEXT`] bytes and all text
//!   built in one render at most [`MAX_WORK`] bytes; printing a value (into the
//!   output or a `{% set %}` capture) counts too.
//! - Literal text is emitted without any hook, one instruction a chunk: the fuel
//!   is lowered for a template whose longest chunk times the fuel would pass
//!   [`MAX_WORK`].
//!
//! Lists grow by `+` and `*` only (MiniJinja caps `range`), so those check the
//! number of items against [`MAX_ITEMS`].

use std::fmt::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use minijinja::machinery::{
    make_string_output, CompiledTemplate, Instruction, Instructions, TemplateConfig, Vm, WhitespaceConfig,
};
use minijinja::value::{Rest, ValueKind};
use minijinja::{context, AutoEscape, Environment, Error, ErrorKind, State, Value};

use crate::TokenizerError;

/// Instructions one render may run. Measured for 17 to 23 messages (with a tool
/// schema and tool calls where the template takes them; tests/chat_budget.rs prints
/// the figures): Qwen2.5-Coder's template 979, SmolLM2's 404, the built-in `gemma`
/// 581 and `chatml` 261, about 40 a message at most. This is 100 times the largest,
/// room for about 2,500 messages, and a few tens of milliseconds of work.
pub(crate) const FUEL: u64 = 100_000;
/// The longest piece of text, and the longest rendered prompt: about four
/// million tokens of English.
pub(crate) const MAX_TEXT: usize = 16 << 20;
/// The longest printing of a value that is not a string (a list, a map) but for
/// `tojson`: none in a chat template comes near, and walking a nested one is slow
/// (about 16 MB/s).
pub(crate) const MAX_PRINTED: usize = 1 << 20;
/// The deepest value printed: JSON schemas nest a few levels.
pub(crate) const MAX_DEPTH: usize = 64;
/// All text one render may build, copies included.
pub(crate) const MAX_WORK: usize = 256 << 20;
/// The longest list `+` or `*` may build.
pub(crate) const MAX_ITEMS: usize = 1 << 20;

const CONCAT: &str = "~concat";
const ADD: &str = "~add";
const MUL: &str = "~mul";

/// Filters that may build more text than they are given, checked by
/// [`Budget::check_growth`] before the builtin runs. `pprint` (Rust's debug
/// format, which no chat template uses) is removed instead: its indentation
/// grows with nesting.
const GROWING_FILTERS: [&str; 10] =
    ["replace", "join", "format", "indent", "escape", "e", "string", "split", "lines", "list"];

/// One render's spending, shared by the functions, filters and formatter it installs.
#[derive(Default)]
pub(crate) struct Budget {
    /// Bytes of text built so far.
    work: AtomicUsize,
    /// The limit that stopped the render, for the error.
    tripped: OnceLock<String>,
}

impl Budget {
    fn over(&self, what: String) -> Error {
        let err = Error::new(ErrorKind::InvalidOperation, format!("ran past {what}"));
        let _ = self.tripped.set(what);
        err
    }

    fn too_much_text(&self, limit: usize) -> Error {
        self.over(format!("{limit} bytes of text"))
    }

    /// Accounts for one piece of text of `n` bytes about to be built.
    fn spend(&self, n: usize) -> Result<(), Error> {
        if n > MAX_TEXT {
            return Err(self.too_much_text(MAX_TEXT));
        }
        if self.work.fetch_add(n, Ordering::Relaxed).saturating_add(n) > MAX_WORK {
            return Err(self.too_much_text(MAX_WORK));
        }
        Ok(())
    }

    fn items(&self, n: usize) -> Result<(), Error> {
        if n > MAX_ITEMS {
            return Err(self.over(format!("{MAX_ITEMS} list items")));
        }
        Ok(())
    }

    /// The printed length of `v`, walking at most `cap` bytes of it (a list holding
    /// another twice, nested forty deep, prints a terabyte). The walk is charged
    /// as work: it takes the time building would.
    fn measure_within(&self, v: &Value, cap: usize) -> Result<usize, Error> {
        if let Some(s) = v.as_str() {
            return Ok(s.len());
        }
        // A namespace can be stored inside itself: printing it would recurse until
        // the stack overflows, long before `cap` bytes.
        self.walk(v, 0, &mut 0)?;
        let mut w = Capped { len: 0, cap };
        if write!(w, "{v}").is_err() {
            return Err(self.too_much_text(cap));
        }
        self.spend(w.len)?;
        Ok(w.len)
    }

    /// Walks the lists and maps inside `v`, failing past [`MAX_DEPTH`] levels or
    /// [`MAX_PRINTED`] values (a list holding another twice, forty deep, is a
    /// trillion values).
    fn walk(&self, v: &Value, depth: usize, seen: &mut usize) -> Result<(), Error> {
        *seen += 1;
        if *seen > MAX_PRINTED {
            return Err(self.too_much_text(MAX_PRINTED));
        }
        if depth > MAX_DEPTH {
            return Err(self.over(format!("{MAX_DEPTH} levels of nesting")));
        }
        match v.kind() {
            ValueKind::Seq | ValueKind::Iterable => {
                for item in v.try_iter()? {
                    self.walk(&item, depth + 1, seen)?;
                }
            }
            ValueKind::Map => {
                for key in v.try_iter()? {
                    self.walk(&v.get_item(&key)?, depth + 1, seen)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// [`measure_within`](Self::measure_within) [`MAX_PRINTED`].
    fn measure(&self, v: &Value) -> Result<usize, Error> {
        self.measure_within(v, MAX_PRINTED)
    }

    /// `a ~ b`.
    fn concat(&self, a: &Value, b: &Value) -> Result<Value, Error> {
        self.spend(self.measure(a)?.saturating_add(self.measure(b)?))?;
        Ok(Value::from(format!("{a}{b}")))
    }

    /// `a + b`: strings as `~`, lists by their length, the rest as MiniJinja adds.
    fn add(&self, a: Value, b: Value) -> Result<Value, Error> {
        if a.kind() == ValueKind::String && b.kind() == ValueKind::String {
            return self.concat(&a, &b);
        }
        if let (Some(x), Some(y)) = (seq_len(&a), seq_len(&b)) {
            self.items(x.saturating_add(y))?;
        }
        plain("a + b", a, b)
    }

    /// `a * b`: a string or a list repeated, by the size of the result.
    fn mul(&self, a: Value, b: Value) -> Result<Value, Error> {
        for (x, n) in [(&a, &b), (&b, &a)] {
            let (Some(n), true) = (n.as_usize(), n.is_integer()) else { continue };
            if let Some(s) = x.as_str() {
                self.spend(s.len().saturating_mul(n))?;
            } else if let Some(len) = seq_len(x) {
                self.items(len.saturating_mul(n))?;
            }
        }
        plain("a * b", a, b)
    }

    /// Checks what filter or method `name` would build from `args` (the value it
    /// applies to first), for those that can build more than they are given.
    fn check_growth(&self, name: &str, method: bool, args: &[Value]) -> Result<(), Error> {
        let [input, rest @ ..] = args else { return Ok(()) };
        // Printed only once measured: a value that is not a string may print huge.
        let text = |v: &Value| -> Result<String, Error> {
            self.measure(v)?;
            Ok(v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()))
        };
        let arg_len = |i: usize| -> Result<usize, Error> { rest.get(i).map_or(Ok(0), |v| self.measure(v)) };
        let bound = match name {
            "replace" => {
                let s = text(input)?;
                let old = rest.first().map(text).transpose()?.unwrap_or_default();
                let count = if old.is_empty() { s.len() + 1 } else { s.matches(old.as_str()).count() };
                s.len().saturating_add(count.saturating_mul(arg_len(1)?))
            }
            // The filter is `list | join(sep)`; the method is `sep.join(list)`.
            "join" if method => self.join_len(rest.first().unwrap_or(&Value::from(())), input)?,
            "join" => self.join_len(input, rest.first().unwrap_or(&Value::from("")))?,
            "format" => {
                // Widths in the format string (`%-1000000s`, `{:>1000000}`) pad.
                let f = text(input)?;
                let widths: usize = f
                    .split(|c: char| !c.is_ascii_digit())
                    .map(|d| d.parse::<usize>().unwrap_or(usize::MAX))
                    .fold(0, usize::saturating_add);
                let mut n = f.len().saturating_add(widths);
                for v in rest {
                    n = n.saturating_add(self.measure(v)?);
                }
                n
            }
            "indent" => {
                let width = rest.first().and_then(Value::as_usize).unwrap_or(4);
                let s = text(input)?;
                let lines = s.matches('\n').count() + 1;
                s.len().saturating_add(lines.saturating_mul(width))
            }
            // `&` becomes `&amp;`, `"` `&quot;`: at most six bytes for one.
            "escape" | "e" => self.measure(input)?.saturating_mul(6),
            "string" => self.measure(input)?,
            // Each piece is a value of its own, about 32 bytes beside its text.
            "split" | "lines" | "splitlines" | "list" if input.kind() == ValueKind::String => {
                let s = text(input)?;
                let pieces = match rest.first().and_then(Value::as_str) {
                    Some(sep) if !sep.is_empty() && name == "split" => s.matches(sep).count(),
                    _ if name == "list" => s.chars().count(),
                    _ => s.chars().filter(|c| c.is_whitespace()).count(),
                };
                self.items(pieces)?;
                s.len().saturating_add(pieces.saturating_mul(32))
            }
            _ => 0,
        };
        self.spend(bound)
    }

    fn join_len(&self, list: &Value, sep: &Value) -> Result<usize, Error> {
        let sep = self.measure(sep)?;
        let mut n = 0usize;
        if let Ok(items) = list.try_iter() {
            for item in items {
                n = n.saturating_add(self.measure(&item)?).saturating_add(sep);
                if n > MAX_TEXT {
                    return Err(self.too_much_text(MAX_TEXT));
                }
            }
        }
        Ok(n)
    }

    /// What stopped the render, when a limit did.
    fn tripped(&self) -> Option<String> {
        self.tripped.get().cloned()
    }
}

/// A `fmt::Write` that counts, and gives up past `cap` bytes.
struct Capped {
    len: usize,
    cap: usize,
}

impl Write for Capped {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.len = self.len.saturating_add(s.len());
        if self.len > self.cap {
            return Err(fmt::Error);
        }
        Ok(())
    }
}

fn seq_len(v: &Value) -> Option<usize> {
    matches!(v.kind(), ValueKind::Seq | ValueKind::Iterable).then(|| v.len()).flatten()
}

/// An environment with MiniJinja's own filters and operators, for what the
/// checked versions hand on once they have checked.
fn builtin_env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(Environment::new)
}

/// `expr` (`a + b`, `a * b`) evaluated as MiniJinja would. A failure is made anew so
/// that it names the template's line rather than this expression.
fn plain(expr: &'static str, a: Value, b: Value) -> Result<Value, Error> {
    builtin_env()
        .compile_expression(expr)?
        .eval(context! { a, b })
        .map_err(|e| Error::new(e.kind(), e.detail().unwrap_or_default().to_string()))
}

/// Installs the checked operators, filters, methods and printing on `env`.
pub(crate) fn install(env: &mut Environment<'_>, budget: &Arc<Budget>) {
    let b = budget.clone();
    env.add_function(CONCAT, move |a: Value, c: Value| b.concat(&a, &c));
    let b = budget.clone();
    env.add_function(ADD, move |a: Value, c: Value| b.add(a, c));
    let b = budget.clone();
    env.add_function(MUL, move |a: Value, c: Value| b.mul(a, c));
    for name in GROWING_FILTERS {
        let b = budget.clone();
        env.add_filter(name, move |args: Rest<Value>| -> Result<Value, Error> {
            b.check_growth(name, false, &args)?;
            builtin_env().empty_state().apply_filter(name, &args)
        });
    }
    env.remove_filter("pprint");
    let b = budget.clone();
    env.add_filter("tojson", move |value: Value, args: Rest<Value>| -> Result<String, Error> {
        // JSON escapes at most six bytes for one (`\u001f`); an indent is checked
        // on the result. A template may well print the whole conversation so.
        b.spend(b.measure_within(&value, MAX_TEXT)?.saturating_mul(6))?;
        let out = crate::pyjson::tojson(&value, args)?;
        b.spend(out.len())?;
        Ok(out)
    });
    let b = budget.clone();
    env.set_unknown_method_callback(move |state: &State, value: &Value, method: &str, args: &[Value]| {
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(value.clone());
        all.extend_from_slice(args);
        b.check_growth(method, true, &all)?;
        minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
    });
    let b = budget.clone();
    env.set_formatter(move |out, state, value| {
        // Printing into a `{% set %}` capture builds text as `~` does.
        b.spend(b.measure(value)?)?;
        super::python_formatter(out, state, value)
    });
}

/// Compiles `source` as the chat environment would, with `~`, `+` and `*` swapped
/// for the checked functions. Returns it with the longest literal chunk's length.
fn compile<'s>(name: &'s str, source: &'s str) -> Result<(CompiledTemplate<'s>, usize), Error> {
    let config = TemplateConfig {
        syntax_config: Default::default(),
        ws_config: WhitespaceConfig { keep_trailing_newline: false, lstrip_blocks: true, trim_blocks: true },
        default_auto_escape: Arc::new(|_: &str| AutoEscape::None),
    };
    let mut compiled = CompiledTemplate::new(name, source, &config)?;
    let mut longest = swap_operators(&mut compiled.instructions);
    for block in compiled.blocks.values_mut() {
        longest = longest.max(swap_operators(block));
    }
    Ok((compiled, longest))
}

fn swap_operators(instructions: &mut Instructions<'_>) -> usize {
    let mut longest = 0;
    for i in 0..instructions.len() as u32 {
        let Some(instr) = instructions.get_mut(i) else { break };
        let checked = match instr {
            Instruction::StringConcat => CONCAT,
            Instruction::Add => ADD,
            Instruction::Mul => MUL,
            Instruction::EmitRaw(s) => {
                longest = longest.max(s.len());
                continue;
            }
            _ => continue,
        };
        *instr = Instruction::CallFunction(checked, Some(2));
    }
    longest
}

/// Parses `source`, for the error a template that does not parse gets up front.
pub(crate) fn check_syntax(name: &str, source: &str) -> Result<(), Error> {
    compile(name, source).map(|_| ())
}

/// Renders `source` in `env` (set up as the chat environment, its templates
/// unused) within the budget. Returns the text and the fuel it used.
pub(crate) fn render(
    env: &mut Environment<'_>,
    name: &str,
    source: &str,
    ctx: Value,
) -> Result<(String, u64), TokenizerError> {
    let (compiled, longest) = compile(name, source).map_err(super::template_error)?;
    let fuel = FUEL.min((MAX_WORK / longest.max(1)) as u64);
    env.set_fuel(Some(fuel));
    let budget = Arc::new(Budget::default());
    install(env, &budget);
    let exceeded = |what: String| TokenizerError::TemplateBudget(what);
    let mut text = String::new();
    let result = Vm::new(env).eval(
        &compiled.instructions,
        ctx,
        &compiled.blocks,
        &mut make_string_output(&mut text),
        compiled.initial_auto_escape,
    );
    match result {
        Ok((_, state)) => {
            if text.len() > MAX_TEXT {
                return Err(exceeded(format!("{MAX_TEXT} bytes of text")));
            }
            let used = state.fuel_levels().map_or(0, |(used, _)| used);
            Ok((text, used))
        }
        Err(e) if e.kind() == ErrorKind::OutOfFuel => Err(exceeded(format!("{fuel} instructions"))),
        Err(e) => Err(budget.tripped().map_or_else(|| super::template_error(e), exceeded)),
    }
}
