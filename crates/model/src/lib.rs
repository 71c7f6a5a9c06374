//! The model layer: configuration resolved from GGUF metadata, the `Backend` trait,
//! one description per architecture and the forward pass they share, the streaming loader, sessions with their KV
//! caches, sampling and generation. No platform code: it runs wherever a `Backend`
//! does (CPU natively and in WebAssembly, wgpu natively and in the browser).

pub mod arch;
pub mod backend;
mod clock;
pub mod config;
pub mod constraint;
pub mod embed;
mod encoder_weights;
mod engine;
mod error;
mod forward;
pub mod generate;
mod info;
pub mod loader;
pub mod policy;
pub mod sampler;
pub mod tools;
pub mod weights;

pub use arch::{ArchSpec, ARCHITECTURES};
pub use backend::{
    packed_spans, top_k, AttentionParams, Backend, Counters, KernelTime, KvSpec, QkRope, WeightSpec, CHAINED_STEPS,
};
pub use config::{Activation, Architecture, LayerConfig, ModelConfig, RopeConfig, RopeStyle};
pub use constraint::{Constraint, ConstraintSpec, ConstraintVocab, TokenMask};
pub use embed::{embedding_response, EmbeddingRequest, Embeddings, ModelKind, Pooling};
pub use engine::{workspace_rows, EvalOutput, Evaluated, Model, ModelOptions, Session};
pub use error::{BackendFailure, ModelError, Result};
pub use forward::{workspace_buffers, workspace_bytes, LogitRows, WorkspaceBuffer};
pub use generate::{FinishReason, GenerateOptions, Generation, Piece};
pub use info::ModelInfo;
pub use loader::{LoadProgress, LoadedModel, Loader};
pub use policy::{ChatRequest, PreparedChat};
pub use sampler::{Sampler, SamplerConfig};
pub use tools::{Tool, ToolCall, ToolCallGrammar, ToolChoice};
