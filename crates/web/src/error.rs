//! Rust errors as JS `Error`s with stable names. One mapping from `ModelError` (which
//! wraps the GGUF, tokenizer and backend errors), so every export reports failures the
//! same way and JS code can branch on `error.name`.

use kindling_gguf::GgufError;
use kindling_model::ModelError;
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
            | ModelError::TruncatedData { .. } => ErrorName::InvalidModel,
            ModelError::InvalidRequest(_) => ErrorName::Usage,
            ModelError::Backend(msg) => backend_name(msg),
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
        TokenizerError::UnsupportedModel(_) | TokenizerError::UnsupportedPreTokenizer(_) => {
            ErrorName::UnsupportedModel
        }
        _ => ErrorName::InvalidModel,
    }
}

/// The GPU backend reports its failures as text (`ModelError::Backend`); these are the
/// phrases it uses for allocation failures and lost devices.
fn backend_name(msg: &str) -> ErrorName {
    let m = msg.to_ascii_lowercase();
    if m.contains("device lost") || m.contains("device is lost") || m.contains("lost the device") {
        ErrorName::DeviceLost
    } else if m.contains("out of memory")
        || m.contains("cannot allocate")
        || m.contains("exceed the gpu")
        || m.contains("exceed the gpu's")
        || m.contains("allocation")
    {
        ErrorName::OutOfMemory
    } else if m.contains("gpu error") || m.contains("reading back from the gpu") || m.contains("waiting for the gpu") {
        // An uncaptured WebGPU error leaves the device's work undefined.
        ErrorName::DeviceLost
    } else {
        ErrorName::Usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_messages_map_to_names() {
        assert_eq!(backend_name("GPU device lost (Unknown): gone"), ErrorName::DeviceLost);
        assert_eq!(backend_name("x: cannot allocate 5 bytes on the GPU: oom"), ErrorName::OutOfMemory);
        assert_eq!(
            backend_name("w: 9 bytes exceed the GPU's largest buffer (4 bytes)"),
            ErrorName::OutOfMemory
        );
        assert_eq!(backend_name("GPU error: validation"), ErrorName::DeviceLost);
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
