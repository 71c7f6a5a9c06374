//! Errors of the model layer: what a person loading or running a model can act on.

use std::fmt;

use kindling_gguf::GgufError;
use kindling_tokenizer::TokenizerError;

#[derive(Debug)]
pub enum ModelError {
    /// The file is not a valid GGUF file.
    Gguf(GgufError),
    /// The tokenizer section of the metadata is unusable.
    Tokenizer(TokenizerError),
    /// The architecture named by `general.architecture` is not one we run.
    UnsupportedArchitecture(String),
    /// A metadata key the architecture needs is absent.
    MissingMetadata(String),
    /// A metadata key is present but its value is unusable.
    BadMetadata { key: String, why: String },
    /// A tensor the architecture needs is absent.
    MissingTensor(String),
    /// A tensor has the wrong shape for the configuration.
    TensorShape { name: String, expected: Vec<u64>, found: Vec<u64> },
    /// The byte stream ended before all tensor data arrived.
    TruncatedData { expected: u64, received: u64 },
    /// The request does not fit the session (context full, empty prompt, ...).
    InvalidRequest(String),
    /// The backend failed (device lost, out of memory, ...).
    Backend(String),
    /// The caller cancelled the work.
    Aborted,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Gguf(e) => write!(f, "invalid GGUF file: {e}"),
            ModelError::Tokenizer(e) => write!(f, "unusable tokenizer: {e}"),
            ModelError::UnsupportedArchitecture(a) => {
                write!(f, "unsupported architecture '{a}' (supported: llama, gemma3)")
            }
            ModelError::MissingMetadata(k) => write!(f, "missing required metadata key '{k}'"),
            ModelError::BadMetadata { key, why } => write!(f, "bad metadata '{key}': {why}"),
            ModelError::MissingTensor(n) => write!(f, "missing required tensor '{n}'"),
            ModelError::TensorShape { name, expected, found } => {
                write!(f, "tensor '{name}' has shape {found:?}, expected {expected:?}")
            }
            ModelError::TruncatedData { expected, received } => write!(
                f,
                "the file ends early: tensor data needs {expected} bytes, only {received} arrived"
            ),
            ModelError::InvalidRequest(m) => f.write_str(m),
            ModelError::Backend(m) => write!(f, "backend error: {m}"),
            ModelError::Aborted => f.write_str("aborted"),
        }
    }
}

impl std::error::Error for ModelError {}

impl From<GgufError> for ModelError {
    fn from(e: GgufError) -> Self {
        ModelError::Gguf(e)
    }
}

impl From<TokenizerError> for ModelError {
    fn from(e: TokenizerError) -> Self {
        ModelError::Tokenizer(e)
    }
}

pub type Result<T, E = ModelError> = std::result::Result<T, E>;
