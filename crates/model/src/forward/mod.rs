//! The forward pass, written once over `Backend`: one file per block kind
//! (`arch::Block`), shared by every architecture whose description names it.
//!
//! A forward pass only *records* ops for the current batch: it never reads anything
//! back, so a GPU backend can put a whole token's work into one submission.

mod blocks;
mod decoder;
pub mod encoder;

use crate::arch::Block;
use crate::backend::Backend;
use crate::config::ModelConfig;
use crate::error::{ModelError, Result};
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

/// One f32 buffer of the [`Workspace`]: the field it is and its shape `[rows, cols]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkspaceBuffer {
    /// The `Workspace` field (`"x"`, `"q"`, `"logits_all"`, ...).
    pub name: &'static str,
    pub rows: usize,
    pub cols: usize,
}

impl WorkspaceBuffer {
    /// Its size in bytes (f32 values).
    pub fn bytes(&self) -> u64 {
        4 * self.rows as u64 * self.cols as u64
    }
}

/// Every buffer [`Workspace::alloc`] makes for a batch of `batch` rows, in the order it
/// makes them. The allocation is made from this list, and the fits-check before a
/// download (kindling-web's `inspect.rs` and `memory.rs`) counts it, so the two cannot
/// drift apart.
pub fn workspace_buffers(cfg: &ModelConfig, batch: usize) -> [WorkspaceBuffer; 14] {
    let buf = |name, rows, cols| WorkspaceBuffer { name, rows, cols };
    let (d, q, kv, ffn, vocab) =
        (cfg.embedding_length, cfg.q_width(), cfg.kv_width(), cfg.feed_forward_length, cfg.vocab_size);
    [
        buf("x", batch, d),
        buf("h", batch, d),
        buf("proj", batch, d),
        buf("q", batch, q),
        buf("k", batch, kv),
        buf("v", batch, kv),
        buf("attn", batch, q),
        buf("gate", batch, ffn),
        buf("up", batch, ffn),
        buf("act", batch, ffn),
        buf("last", 1, d),
        buf("last_normed", 1, d),
        buf("logits_last", 1, vocab),
        buf("logits_all", batch.min(LOGITS_ALL_ROWS), vocab),
    ]
}

/// Bytes of every buffer of [`workspace_buffers`].
pub fn workspace_bytes(cfg: &ModelConfig, batch: usize) -> u64 {
    workspace_buffers(cfg, batch).iter().map(WorkspaceBuffer::bytes).sum()
}

impl<A: Copy> Workspace<A> {
    /// Allocates the buffers [`workspace_buffers`] lists, in its order.
    pub fn alloc<B: Backend<Activation = A>>(b: &mut B, cfg: &ModelConfig, batch: usize) -> Result<Self> {
        let [x, h, proj, q, k, v, attn, gate, up, act, last, last_normed, logits_last, logits_all] =
            workspace_buffers(cfg, batch);
        let mut alloc = |s: WorkspaceBuffer| b.alloc_activation(s.rows, s.cols);
        Ok(Workspace {
            x: alloc(x)?,
            h: alloc(h)?,
            proj: alloc(proj)?,
            q: alloc(q)?,
            k: alloc(k)?,
            v: alloc(v)?,
            attn: alloc(attn)?,
            gate: alloc(gate)?,
            up: alloc(up)?,
            act: alloc(act)?,
            last: alloc(last)?,
            last_normed: alloc(last_normed)?,
            logits_last: alloc(logits_last)?,
            logits_all: alloc(logits_all)?,
            logits_rows: logits_all.rows,
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
            // `Model` refuses to generate with an encoder before it gets here.
            Block::Encoder => Err(ModelError::InvalidRequest(format!(
                "{} is an encoder: it embeds text and does not generate",
                self.cfg.name
            ))),
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
