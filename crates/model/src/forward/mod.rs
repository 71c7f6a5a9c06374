//! The forward pass, written once over `Backend`: one file per block kind
//! (`arch::Block`), shared by every architecture whose description names it.
//!
//! A forward pass only *records* ops for the current batch: it never reads anything
//! back, so a GPU backend can put a whole token's work into one submission.

mod blocks;
mod decoder;

use crate::arch::Block;
use crate::backend::Backend;
use crate::config::ModelConfig;
use crate::error::Result;
use crate::weights::Weights;

/// The activations one batch works in, allocated once per engine.
#[derive(Clone, Copy, Debug)]
pub struct Workspace<A> {
    /// Residual stream `[batch, d_model]`.
    pub x: A,
    /// Normalised input of a block / post-norm output `[batch, d_model]`.
    pub h: A,
    /// Output projection of attention or FFN `[batch, d_model]`.
    pub proj: A,
    /// Queries `[batch, heads × head_dim]`.
    pub q: A,
    /// Keys and values of the batch `[batch, kv_heads × head_dim]`.
    pub k: A,
    pub v: A,
    /// Attention output before projection `[batch, heads × head_dim]`.
    pub attn: A,
    /// FFN gate, up and gated product `[batch, ffn]`.
    pub gate: A,
    pub up: A,
    pub act: A,
    /// The last position's hidden state and its norm `[1, d_model]`.
    pub last: A,
    pub last_normed: A,
    /// Logits of the last position `[1, vocab]`.
    pub logits_last: A,
    /// Logits of every position of a batch `[logits_rows, vocab]` (teacher-forced
    /// evaluation runs in batches of at most `logits_rows`).
    pub logits_all: A,
    pub logits_rows: usize,
}

/// Rows of `Workspace::logits_all`: a whole prompt batch of a 262k vocabulary would be
/// 512 MB at 512 rows, past many devices' storage-binding limits.
const LOGITS_ALL_ROWS: usize = 32;

impl<A: Copy> Workspace<A> {
    pub fn alloc<B: Backend<Activation = A>>(b: &mut B, cfg: &ModelConfig, batch: usize) -> Result<Self> {
        let d = cfg.embedding_length;
        let logits_rows = batch.min(LOGITS_ALL_ROWS);
        Ok(Workspace {
            x: b.alloc_activation(batch, d)?,
            h: b.alloc_activation(batch, d)?,
            proj: b.alloc_activation(batch, d)?,
            q: b.alloc_activation(batch, cfg.q_width())?,
            k: b.alloc_activation(batch, cfg.kv_width())?,
            v: b.alloc_activation(batch, cfg.kv_width())?,
            attn: b.alloc_activation(batch, cfg.q_width())?,
            gate: b.alloc_activation(batch, cfg.feed_forward_length)?,
            up: b.alloc_activation(batch, cfg.feed_forward_length)?,
            act: b.alloc_activation(batch, cfg.feed_forward_length)?,
            last: b.alloc_activation(1, d)?,
            last_normed: b.alloc_activation(1, d)?,
            logits_last: b.alloc_activation(1, cfg.vocab_size)?,
            logits_all: b.alloc_activation(logits_rows, cfg.vocab_size)?,
            logits_rows,
        })
    }
}

/// Which positions of a batch need logits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogitRows {
    /// Only the last (generation).
    Last,
    /// Every position (teacher-forced evaluation).
    All,
}

/// What one batch's forward pass works with: the backend it records on, the model,
/// and the session's KV caches.
pub struct Pass<'a, B: Backend> {
    pub b: &'a mut B,
    pub cfg: &'a ModelConfig,
    pub w: &'a Weights<B::Weight>,
    pub ws: &'a Workspace<B::Activation>,
    pub caches: &'a mut [B::KvCache],
    /// Positions the session holds (LongRoPE picks its factors by it).
    pub capacity: usize,
}

impl<B: Backend> Pass<'_, B> {
    /// Records the transformer blocks, leaving the final hidden states in `ws.x`
    /// (used alone for prompt chunks whose logits nobody needs).
    pub fn record_body(&mut self) -> Result<()> {
        match self.cfg.architecture.spec().block {
            Block::PreNorm => decoder::record(self),
        }
    }

    /// Records the whole forward pass of the current batch of `n` rows and returns
    /// the activation that will hold the logits.
    pub fn record(&mut self, n: usize, rows: LogitRows) -> Result<B::Activation> {
        self.record_body()?;
        let Pass { b, cfg, w, ws, .. } = self;
        let (d, eps) = (cfg.embedding_length, cfg.rms_norm_eps);
        let logits = match rows {
            LogitRows::Last => {
                // A one-row batch (decode) is its own last row: no copy.
                let last = if n == 1 {
                    ws.x
                } else {
                    b.select_row(ws.x, n - 1, ws.last);
                    ws.last
                };
                b.rms_norm(last, &w.output_norm, d, eps, ws.last_normed);
                b.matmul(ws.last_normed, w.output(), ws.logits_last);
                ws.logits_last
            }
            LogitRows::All => {
                b.rms_norm(ws.x, &w.output_norm, d, eps, ws.h);
                b.matmul(ws.h, w.output(), ws.logits_all);
                ws.logits_all
            }
        };
        if let Some(cap) = cfg.final_logit_softcap {
            b.softcap(logits, cap);
        }
        Ok(logits)
    }
}
