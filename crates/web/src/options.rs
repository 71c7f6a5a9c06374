//! JS option objects read into Rust settings, with a clear error for each bad field.
//! Defaults live here (the JS wrapper passes through what the caller gave).

use js_sys::Reflect;
use kindling_model::{policy, ConstraintSpec, GenerateOptions, SamplerConfig};
use kindling_tokenizer::ChatMessage;
use wasm_bindgen::JsValue;

use crate::error::{JsResult, WebError};

use policy::{MAX_TOKENS, MIN_P, TEMPERATURE, TOP_K, TOP_P};

fn field(obj: &JsValue, key: &str) -> JsValue {
    if !obj.is_object() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

fn number(obj: &JsValue, key: &str) -> JsResult<Option<f64>> {
    let v = field(obj, key);
    if absent(&v) {
        return Ok(None);
    }
    match v.as_f64() {
        Some(n) if n.is_finite() => Ok(Some(n)),
        _ => Err(WebError::usage(format!("option '{key}' must be a finite number"))),
    }
}

fn count(obj: &JsValue, key: &str) -> JsResult<Option<usize>> {
    match number(obj, key)? {
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64 => Ok(Some(n as usize)),
        Some(n) => Err(WebError::usage(format!("option '{key}' must be a whole number ≥ 0, got {n}"))),
        None => Ok(None),
    }
}

fn flag(obj: &JsValue, key: &str) -> JsResult<bool> {
    let v = field(obj, key);
    if absent(&v) {
        return Ok(false);
    }
    v.as_bool().ok_or_else(|| WebError::usage(format!("option '{key}' must be true or false")))
}

fn strings(obj: &JsValue, key: &str) -> JsResult<Vec<String>> {
    let v = field(obj, key);
    if absent(&v) {
        return Ok(Vec::new());
    }
    if let Some(s) = v.as_string() {
        return Ok(vec![s]);
    }
    if !js_sys::Array::is_array(&v) {
        return Err(WebError::usage(format!("option '{key}' must be a string or an array of strings")));
    }
    js_sys::Array::from(&v)
        .iter()
        .map(|s| s.as_string().ok_or_else(|| WebError::usage(format!("option '{key}' must hold only strings"))))
        .collect()
}

/// `{ maxTokens, temperature, topK, topP, minP, repetitionPenalty, seed, stop, ignoreEos,
/// jsonSchema | regex | grammar | responseFormat }`.
pub fn generate(obj: &JsValue) -> JsResult<GenerateOptions> {
    let seed = match number(obj, "seed")? {
        Some(s) if s >= 0.0 && s.fract() == 0.0 => s as u64,
        Some(s) => return Err(WebError::usage(format!("option 'seed' must be a whole number ≥ 0, got {s}"))),
        None => (js_sys::Math::random() * 9007199254740991.0) as u64,
    };
    let sampler = SamplerConfig {
        temperature: number(obj, "temperature")?.map_or(TEMPERATURE, |t| t as f32),
        top_k: count(obj, "topK")?.unwrap_or(TOP_K),
        top_p: number(obj, "topP")?.map_or(TOP_P, |p| p as f32),
        min_p: number(obj, "minP")?.map_or(MIN_P, |p| p as f32),
        repetition_penalty: number(obj, "repetitionPenalty")?.map_or(1.0, |p| p as f32),
        seed,
        ..SamplerConfig::default()
    };
    sampler.validate().map_err(WebError::usage)?;
    Ok(GenerateOptions {
        max_tokens: count(obj, "maxTokens")?.unwrap_or(MAX_TOKENS),
        sampler,
        stop: strings(obj, "stop")?,
        // `ignoreEos`: run to maxTokens through end-of-generation tokens (benchmarks).
        stop_at_eog: !flag(obj, "ignoreEos")?,
        constraint: constraint(obj)?,
        tool_calls: None,
    })
}

/// The output constraint: `jsonSchema` (an object or its JSON text), `regex` or
/// `grammar` (Lark text), or `responseFormat` (OpenAI's `response_format`); one at most.
fn constraint(obj: &JsValue) -> JsResult<Option<ConstraintSpec>> {
    let given: Vec<&str> =
        ["jsonSchema", "regex", "grammar", "responseFormat"].into_iter().filter(|k| !absent(&field(obj, k))).collect();
    if given.len() > 1 {
        return Err(WebError::invalid_request(format!("give one output constraint, not {}", given.join(" and "))));
    }
    match given.first().copied() {
        None => Ok(None),
        Some("jsonSchema") => json_schema(&field(obj, "jsonSchema"), "jsonSchema").map(Some),
        Some("responseFormat") => response_format(&field(obj, "responseFormat")),
        Some(key) => field(obj, key)
            .as_string()
            .map(|text| Some(if key == "regex" { ConstraintSpec::Regex(text) } else { ConstraintSpec::Grammar(text) }))
            .ok_or_else(|| WebError::invalid_request(format!("option '{key}' must be a string"))),
    }
}

/// A JSON schema given as an object or as JSON text.
fn json_schema(v: &JsValue, what: &str) -> JsResult<ConstraintSpec> {
    let text = match v.as_string() {
        Some(text) => text,
        None if v.is_object() => js_sys::JSON::stringify(v)
            .ok()
            .and_then(|s| s.as_string())
            .ok_or_else(|| WebError::invalid_request(format!("{what} cannot be written as JSON")))?,
        None => return Err(WebError::invalid_request(format!("{what} must be a JSON schema object or its JSON text"))),
    };
    ConstraintSpec::json_schema_text(&text).map_err(WebError::constraint)
}

/// OpenAI's `response_format` (kindling-model's `policy::response_format` reads it).
fn response_format(v: &JsValue) -> JsResult<Option<ConstraintSpec>> {
    let text = js_sys::JSON::stringify(v)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| WebError::invalid_request("response_format cannot be written as JSON"))?;
    let value = serde_json::from_str(&text).map_err(|e| WebError::invalid_request(format!("response_format: {e}")))?;
    policy::response_format(&value).map_err(WebError::constraint)
}

/// `[{ role, content }]`.
pub fn messages(v: &JsValue) -> JsResult<Vec<ChatMessage>> {
    if !js_sys::Array::is_array(v) {
        return Err(WebError::usage("messages must be an array of { role, content }"));
    }
    js_sys::Array::from(v)
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let role = field(&m, "role").as_string();
            let content = field(&m, "content").as_string();
            match (role, content) {
                (Some(r), Some(c)) => Ok(ChatMessage::new(r, c)),
                _ => Err(WebError::usage(format!("messages[{i}] must be {{ role: string, content: string }}"))),
            }
        })
        .collect()
}
