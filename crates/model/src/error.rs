//! Errors of the model layer: what a person loading or running a model can act on.

use std::fmt;

use kindling_gguf::GgufError;
use kindling_tokenizer::TokenizerError;

/// What kind of backend failure a `ModelError::Backend` is, set where the backend
/// knows it (an allocation, a device limit, the device's lost callback), so callers
/// branch on it instead of on message text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendFailure {
    /// A buffer could not be allocated, or the model (a tensor, the KV cache, a
    /// workspace) does not fit the device's limits: another backend may manage.
    OutOfMemory,
    /// The device was lost, or reported an error that leaves its work undefined: the
    /// model must be loaded again.
    DeviceLost,
    /// Anything else (an internal inconsistency, an unusable adapter).
    Other,
}

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
    /// The files of a split model do not make one model (a shard other than the first
    /// loaded first, shards missing, one ending before its tensors).
    BadShards(String),
    /// The request does not fit the session (context full, empty prompt, ...).
    InvalidRequest(String),
    /// The backend failed; `kind` says whether retrying elsewhere (out of memory) or
    /// reloading (device lost) can help.
    Backend { kind: BackendFailure, message: String },
    /// The caller cancelled the work.
    Aborted,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Gguf(e) => write!(f, "invalid GGUF file: {e}"),
            ModelError::Tokenizer(e) => write!(f, "unusable tokenizer: {e}"),
            ModelError::UnsupportedArchitecture(a) => {
                write!(f, "unsupported architecture '{a}' (supported: {})", crate::Architecture::supported())
            }
            ModelError::MissingMetadata(k) => write!(f, "missing required metadata key '{k}'"),
            ModelError::BadMetadata { key, why } => write!(f, "bad metadata '{key}': {why}"),
            ModelError::MissingTensor(n) => write!(f, "missing required tensor '{n}'"),
            ModelError::TensorShape { name, expected, found } => {
                write!(f, "tensor '{name}' has shape {found:?}, expected {expected:?}")
            }
            ModelError::TruncatedData { expected, received } => {
                write!(f, "the file ends early: tensor data needs {expected} bytes, only {received} arrived")
            }
            ModelError::InvalidRequest(m) => f.write_str(m),
            ModelError::BadShards(m) => f.write_str(m),
            ModelError::Backend { kind: BackendFailure::OutOfMemory, message } => write!(f, "out of memory: {message}"),
            ModelError::Backend { kind: BackendFailure::DeviceLost, message } => write!(f, "device lost: {message}"),
            ModelError::Backend { kind: BackendFailure::Other, message } => write!(f, "backend error: {message}"),
            ModelError::Aborted => f.write_str("aborted"),
        }
    }
}

impl std::error::Error for ModelError {}

impl ModelError {
    /// The request cannot be done as asked (a bad option, schema or tool list).
    pub fn invalid_request(message: impl Into<String>) -> Self {
        ModelError::InvalidRequest(message.into())
    }

    /// A backend failure of no particular kind.
    pub fn backend(message: impl Into<String>) -> Self {
        ModelError::Backend { kind: BackendFailure::Other, message: message.into() }
    }

    /// An allocation failed, or something does not fit the device's limits.
    pub fn out_of_memory(message: impl Into<String>) -> Self {
        ModelError::Backend { kind: BackendFailure::OutOfMemory, message: message.into() }
    }

    /// The device is gone (or its work is undefined).
    pub fn device_lost(message: impl Into<String>) -> Self {
        ModelError::Backend { kind: BackendFailure::DeviceLost, message: message.into() }
    }

    /// The kind of a backend failure; `None` for every other error.
    pub fn backend_failure(&self) -> Option<BackendFailure> {
        match self {
            ModelError::Backend { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}

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
