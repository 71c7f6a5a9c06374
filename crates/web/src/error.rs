//! Rust errors as JS `Error`s with stable names. One mapping from `ModelError` (which
//! wraps the GGUF, tokenizer and backend errors), so every export reports failures the
//! same way and JS code can branch on `error.name`.

use kindling_gguf::GgufError;
use kindling_model::{BackendFailure, ModelError};
use kindling_tokenizer::TokenizerError;
use wasm_bindgen::JsValue;

/// The `name` a JS error gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorName {
    /// WebGPU was asked for and cannot be used here.
    WebGpuUnavailable,
    /// The bytes are not a usable GGUF model (bad magic, cut short, inconsistent).
    InvalidModel,
    /// A valid GGUF file this engine cannot run (architecture, tensor type, tokenizer).
    UnsupportedModel,
    /// A buffer could not be allocated (GPU or WebAssembly memory).
    OutOfMemory,
    /// The GPU device was lost or reported an error; the model must be reloaded.
    DeviceLost,
    /// The caller aborted the work.
    Abort,
    /// The call itself is wrong (empty prompt, context full, disposed model, ...).
    Usage,
    /// The request asks for something that cannot be done as asked: an invalid or
    /// unsupported JSON schema, regex or grammar, a bad `response_format`.
    InvalidRequest,
}

impl ErrorName {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorName::WebGpuUnavailable => "WebGPUUnavailableError",
            ErrorName::InvalidModel => "InvalidModelError",
            ErrorName::UnsupportedModel => "UnsupportedModelError",
            ErrorName::OutOfMemory => "OutOfMemoryError",
            ErrorName::DeviceLost => "DeviceLostError",
            ErrorName::Abort => "AbortError",
            // A plain `Error`: misuse is a programming error, not a condition to branch on.
            ErrorName::Usage => "Error",
            ErrorName::InvalidRequest => "InvalidRequestError",
        }
    }
}

/// An error on its way to JS.
#[derive(Clone, Debug)]
pub struct WebError {
    pub name: ErrorName,
    pub message: String,
}

pub type JsResult<T> = Result<T, WebError>;

impl WebError {
    pub fn new(name: ErrorName, message: impl Into<String>) -> Self {
        WebError { name, message: message.into() }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        WebError::new(ErrorName::Usage, message)
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        WebError::new(ErrorName::InvalidRequest, message)
    }

    /// An error of building a request's constraint: whatever it was, the request is invalid.
    pub fn constraint(e: ModelError) -> Self {
        match e {
            ModelError::InvalidRequest(m) => WebError::invalid_request(m),
            other => WebError::from(other),
        }
    }
}

impl From<WebError> for JsValue {
    fn from(e: WebError) -> JsValue {
        let error = js_sys::Error::new(&e.message);
        error.set_name(e.name.as_str());
        error.into()
    }
}

impl From<ModelError> for WebError {
    fn from(e: ModelError) -> Self {
        let name = match &e {
            ModelError::Gguf(g) => gguf_name(g),
            ModelError::Tokenizer(t) => tokenizer_name(t),
            ModelError::UnsupportedArchitecture(_) => ErrorName::UnsupportedModel,
            ModelError::MissingMetadata(_)
            | ModelError::BadMetadata { .. }
            | ModelError::MissingTensor(_)
            | ModelError::TensorShape { .. }
            | ModelError::TruncatedData { .. }
            | ModelError::BadShards(_) => ErrorName::InvalidModel,
            ModelError::InvalidRequest(_) => ErrorName::Usage,
            ModelError::Backend { kind: BackendFailure::OutOfMemory, .. } => ErrorName::OutOfMemory,
            ModelError::Backend { kind: BackendFailure::DeviceLost, .. } => ErrorName::DeviceLost,
            // An internal failure: a plain Error, as misuse is.
            ModelError::Backend { kind: BackendFailure::Other, .. } => ErrorName::Usage,
            ModelError::Aborted => ErrorName::Abort,
        };
        WebError::new(name, e.to_string())
    }
}

fn gguf_name(e: &GgufError) -> ErrorName {
    match e {
        GgufError::UnsupportedVersion { .. } | GgufError::UnsupportedType { .. } => ErrorName::UnsupportedModel,
        _ => ErrorName::InvalidModel,
    }
}

fn tokenizer_name(e: &TokenizerError) -> ErrorName {
    match e {
        TokenizerError::UnsupportedModel(_) | TokenizerError::UnsupportedPreTokenizer(_) => ErrorName::UnsupportedModel,
        _ => ErrorName::InvalidModel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_failures_map_by_kind_not_text() {
        assert_eq!(WebError::from(ModelError::device_lost("x")).name, ErrorName::DeviceLost);
        assert_eq!(WebError::from(ModelError::out_of_memory("x")).name, ErrorName::OutOfMemory);
        // The text of another kind does not matter.
        assert_eq!(WebError::from(ModelError::backend("device lost, out of memory")).name, ErrorName::Usage);
    }

    #[test]
    fn model_errors_map_to_names() {
        let bad = WebError::from(ModelError::Gguf(GgufError::BadMagic { found: b"PK\x03\x04".to_vec() }));
        assert_eq!(bad.name, ErrorName::InvalidModel);
        let arch = WebError::from(ModelError::UnsupportedArchitecture("rwkv".into()));
        assert_eq!(arch.name, ErrorName::UnsupportedModel);
        assert_eq!(WebError::from(ModelError::Aborted).name, ErrorName::Abort);
    }
}
