//! WebAssembly memory for the CPU backend, checked before the weights download.
//!
//! With the CPU backend the weights, the KV cache and the activations all live in the
//! module's linear memory: 4 GiB at most for wasm32, less where the browser or the
//! device gives less. Growing it past what the browser allows fails an allocation, and
//! an infallible Rust allocation that fails aborts the whole module (the tab's model is
//! gone, with "unreachable executed"). So a CPU load first asks for the memory it will
//! need, through fallible reservations that are freed at once (the allocator keeps the
//! grown memory, and the weights and caches that follow reuse it), and refuses with an
//! `OutOfMemoryError` naming the need when it is not there:
//!
//! - when the loader is created, if the file length is known: the weights (≈ the file);
//! - once the header has arrived (a few MiB, before any weight byte): the KV cache of
//!   the session's context and the activations of a batch.

use kindling_model::ModelConfig;

use crate::error::{ErrorName, WebError};

const MIB: u64 = 1 << 20;

/// Room for what the estimate leaves out: the CPU matmuls' scratch, the header's
/// strings, the allocator's slack.
pub(crate) const SLACK: u64 = 16 * MIB;

/// Bytes of WebAssembly memory now.
pub(crate) fn memory_bytes() -> u64 {
    crate::memory_bytes() as u64
}

/// Makes sure `bytes` more can be allocated: reserves them in pieces of at most 256 MiB
/// (one Rust allocation stops at 2 GiB on wasm32, while memory reaches 4 GiB) and
/// frees them. On failure returns the memory size at which growing stopped.
pub(crate) fn reserve(bytes: u64) -> Result<(), u64> {
    const PIECE: u64 = 256 * MIB;
    let mut held: Vec<Vec<u8>> = Vec::new();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(PIECE);
        let mut piece: Vec<u8> = Vec::new();
        if held.try_reserve(1).is_err() || piece.try_reserve_exact(n as usize).is_err() {
            let reached = memory_bytes();
            drop(held);
            return Err(reached);
        }
        held.push(piece);
        left -= n;
    }
    Ok(())
}

pub(crate) fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(MIB)
}

/// What a model on the CPU backend keeps in WebAssembly memory besides the tokenizer
/// and header (which are built by the time the header has arrived).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CpuNeed {
    /// Tensor data, as allocated at the header.
    pub weights: u64,
    /// f32 keys and values of every layer for `positions`.
    pub kv_cache: u64,
    pub positions: usize,
    /// The engine's activations for a batch of `batch` rows (`kindling_model`'s
    /// `Workspace`: residual, q/k/v, attention, FFN, last-row and logits rows), as
    /// `kindling_model::workspace_bytes` counts them.
    pub activations: u64,
}

impl CpuNeed {
    pub fn new(cfg: &ModelConfig, weights: u64, positions: usize, batch: usize) -> CpuNeed {
        let activations = kindling_model::workspace_bytes(cfg, batch);
        let kv_cache = 4 * 2 * cfg.block_count as u64 * positions as u64 * cfg.kv_width() as u64;
        CpuNeed { weights, kv_cache, positions, activations }
    }

    /// What is still to be allocated after the weights.
    pub fn after_weights(&self) -> u64 {
        self.kv_cache + self.activations + SLACK
    }

    pub fn total(&self) -> u64 {
        self.weights + self.after_weights()
    }
}

fn advice() -> &'static str {
    "WebAssembly memory is 4 GiB at most (wasm32), and browsers may give less; use WebGPU (backend: 'webgpu'), \
     a smaller contextLength or a smaller model"
}

/// The refusal when the file itself is larger than the memory the browser gives.
pub(crate) fn weights_do_not_fit(file_len: u64, reached: u64) -> WebError {
    WebError::new(
        ErrorName::OutOfMemory,
        format!(
            "the model does not fit in WebAssembly memory for the CPU backend: it needs at least {} MiB \
             (its file is {} MiB, and the weights stay in memory), but WebAssembly memory stopped growing \
             at {} MiB. {}",
            mib(file_len + SLACK),
            mib(file_len),
            mib(reached),
            advice()
        ),
    )
}

/// The refusal once the header says what the model needs.
pub(crate) fn model_does_not_fit(name: &str, need: &CpuNeed, reached: u64) -> WebError {
    WebError::new(
        ErrorName::OutOfMemory,
        format!(
            "the model{} does not fit in WebAssembly memory for the CPU backend: it needs about {} MiB \
             (weights {} MiB, KV cache for {} positions {} MiB, activations {} MiB, {} MiB slack) besides \
             its tokenizer, but WebAssembly memory stopped growing at {} MiB. {}",
            if name.is_empty() { String::new() } else { format!(" '{name}'") },
            mib(need.total()),
            mib(need.weights),
            need.positions,
            mib(need.kv_cache),
            mib(need.activations),
            mib(SLACK),
            mib(reached),
            advice()
        ),
    )
}
