//! Python's `json.dumps` and `repr(float)` over MiniJinja values, for the `tojson`
//! filter that `transformers` installs in its chat-template environment:
//!
//! ```python
//! def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
//!     return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
//!                       separators=separators, sort_keys=sort_keys)
//! ```
//!
//! MiniJinja's own `tojson` (like Jinja2's) writes compact JSON and escapes `<`, `>`,
//! `&` and `'` for HTML; `transformers`' writes `{"a": 1, "b": [1, 2]}` with Python's
//! default separators, keeps non-ASCII text as it is, keeps map keys in insertion
//! order, and escapes nothing for HTML. Chat templates print tool schemas and call
//! arguments through it, so the prompt the model sees depends on every byte.

use minijinja::value::{from_args, Kwargs, Rest, ValueKind};
use minijinja::{Error, ErrorKind, Value};

/// `json.dumps` options.
struct Options {
    ensure_ascii: bool,
    /// `None`: one line. `Some(s)`: newlines, and `s` repeated per nesting level.
    indent: Option<String>,
    item_sep: String,
    key_sep: String,
    sort_keys: bool,
}

/// The `tojson` filter: `value | tojson(ensure_ascii=False, indent=None,
/// separators=None, sort_keys=False)`, positionally or by keyword, as in
/// `transformers`.
pub(crate) fn tojson(value: &Value, args: Rest<Value>) -> Result<String, Error> {
    let (positional, kwargs): (&[Value], Kwargs) = from_args(&args)?;
    if positional.len() > 4 {
        return Err(Error::new(ErrorKind::TooManyArguments, "tojson() takes at most 4 arguments"));
    }
    let mut positional = positional.iter().cloned();
    let (ensure_ascii, indent, separators, sort_keys) =
        (positional.next(), positional.next(), positional.next(), positional.next());
    let pick = |positional: Option<Value>, name: &str| -> Result<Option<Value>, Error> {
        match positional {
            Some(v) => {
                if kwargs.has(name) {
                    return Err(Error::new(
                        ErrorKind::TooManyArguments,
                        format!("tojson() got multiple values for argument '{name}'"),
                    ));
                }
                Ok(Some(v))
            }
            None => kwargs.get::<Option<Value>>(name),
        }
    };
    let ensure_ascii = pick(ensure_ascii, "ensure_ascii")?.is_some_and(|v| v.is_true());
    let indent = match pick(indent, "indent")? {
        None => None,
        Some(v) if v.is_none() || v.is_undefined() => None,
        Some(v) => Some(match v.kind() {
            ValueKind::String => v.as_str().unwrap_or_default().to_string(),
            // Python: `' ' * indent`; a bool is an int there (True is 1).
            ValueKind::Bool => " ".repeat(usize::from(v.is_true())),
            ValueKind::Number if v.is_integer() => {
                let n = i64::try_from(v.clone()).unwrap_or(0);
                " ".repeat(n.clamp(0, 1 << 16) as usize)
            }
            _ => return Err(Error::new(ErrorKind::InvalidOperation, "tojson: indent must be an int or a string")),
        }),
    };
    let (item_sep, key_sep) = match pick(separators, "separators")? {
        Some(v) if !v.is_none() && !v.is_undefined() => {
            let parts: Vec<Value> = v.try_iter()?.collect();
            match parts.as_slice() {
                [a, b] if a.as_str().is_some() && b.as_str().is_some() => {
                    (a.as_str().unwrap_or_default().to_string(), b.as_str().unwrap_or_default().to_string())
                }
                _ => return Err(Error::new(ErrorKind::InvalidOperation, "tojson: separators must be two strings")),
            }
        }
        // Python's defaults: (', ', ': '), or (',', ': ') with an indent.
        _ => ((if indent.is_some() { "," } else { ", " }).to_string(), ": ".to_string()),
    };
    let sort_keys = pick(sort_keys, "sort_keys")?.is_some_and(|v| v.is_true());
    kwargs.assert_all_used()?;
    let opts = Options { ensure_ascii, indent, item_sep, key_sep, sort_keys };
    let mut out = String::new();
    dump(value, &opts, 0, &mut out)?;
    Ok(out)
}

/// `json.dumps(value)` with the defaults `transformers` uses.
#[cfg(test)]
pub(crate) fn dumps(value: &Value) -> Result<String, Error> {
    let opts =
        Options { ensure_ascii: false, indent: None, item_sep: ", ".into(), key_sep: ": ".into(), sort_keys: false };
    let mut out = String::new();
    dump(value, &opts, 0, &mut out)?;
    Ok(out)
}

fn newline(opts: &Options, level: usize, out: &mut String) {
    if let Some(ind) = &opts.indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str(ind);
        }
    }
}

fn dump(v: &Value, opts: &Options, level: usize, out: &mut String) -> Result<(), Error> {
    if level > 500 {
        return Err(Error::new(ErrorKind::InvalidOperation, "tojson: nesting too deep"));
    }
    match v.kind() {
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
        ValueKind::Number => number(v, out),
        ValueKind::String => string(v.as_str().unwrap_or_default(), opts.ensure_ascii, out),
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Vec<Value> = v.try_iter()?.collect();
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(&opts.item_sep);
                }
                newline(opts, level + 1, out);
                dump(item, opts, level + 1, out)?;
            }
            newline(opts, level, out);
            out.push(']');
        }
        ValueKind::Map => {
            let mut entries: Vec<(String, Value)> = Vec::new();
            for k in v.try_iter()? {
                let item = v.get_item(&k)?;
                entries.push((key_text(&k)?, item));
            }
            if entries.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            if opts.sort_keys {
                // Python compares str keys by code point, as Rust compares `String`s.
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            out.push('{');
            for (i, (k, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(&opts.item_sep);
                }
                newline(opts, level + 1, out);
                string(k, opts.ensure_ascii, out);
                out.push_str(&opts.key_sep);
                dump(item, opts, level + 1, out)?;
            }
            newline(opts, level, out);
            out.push('}');
        }
        ValueKind::Undefined => {
            return Err(Error::new(
                ErrorKind::UndefinedError,
                "tojson: Object of type Undefined is not JSON serializable",
            ))
        }
        other => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson: Object of type {other} is not JSON serializable"),
            ))
        }
    }
    Ok(())
}

/// A dict key as `json.dumps` writes it: strings as they are, numbers, booleans and
/// None converted to their JSON text.
fn key_text(k: &Value) -> Result<String, Error> {
    Ok(match k.kind() {
        ValueKind::String => k.as_str().unwrap_or_default().to_string(),
        ValueKind::None => "null".into(),
        ValueKind::Bool => (if k.is_true() { "true" } else { "false" }).into(),
        ValueKind::Number => {
            let mut s = String::new();
            number(k, &mut s);
            s
        }
        other => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson: keys must be str, int, float, bool or None, not {other}"),
            ))
        }
    })
}

fn number(v: &Value, out: &mut String) {
    if v.is_integer() {
        // Integers print the same in Rust and Python.
        out.push_str(&v.to_string());
    } else {
        let f = f64::try_from(v.clone()).unwrap_or(f64::NAN);
        if f.is_nan() {
            out.push_str("NaN");
        } else if f.is_infinite() {
            out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
        } else {
            out.push_str(&float_repr(f));
        }
    }
}

/// Python's `repr(float)` for a finite value: the shortest digits that round-trip,
/// in fixed notation when the decimal exponent is in -4..16, otherwise `1.5e+16`.
pub(crate) fn float_repr(f: f64) -> String {
    // Rust's `{:e}` gives the same shortest round-trip digits: "-1.2345e-7".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut out = String::from(sign);
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    }
    out
}

/// A JSON string as Python's encoder writes it (`ensure_ascii` escapes everything past
/// ASCII as `\uXXXX`, astral characters as surrogate pairs; hex digits lowercase).
fn string(s: &str, ensure_ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ensure_ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_python() {
        for (f, want) in [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (-0.0, "-0.0"),
            (100.0, "100.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (123.456, "123.456"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e300, "1e+300"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
        ] {
            assert_eq!(float_repr(f), want, "{f:e}");
        }
    }

    #[test]
    fn dumps_like_python() {
        let v: Value =
            serde_json::from_str(r#"{"z": 1, "a": [true, false, null, 1.5, "é<>&'\"\\\n\u0001"], "m": {}, "l": []}"#)
                .unwrap();
        assert_eq!(
            dumps(&v).unwrap(),
            r#"{"z": 1, "a": [true, false, null, 1.5, "é<>&'\"\\\n\u0001"], "m": {}, "l": []}"#
        );
    }
}
