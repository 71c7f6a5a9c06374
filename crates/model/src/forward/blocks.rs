//! Building blocks shared by the architectures' forward passes.

use super::Workspace;
use crate::backend::{AttentionParams, Backend};
use crate::config::{LayerConfig, ModelConfig};
use crate::weights::LayerWeights;

/// Self-attention of the normalised input `ws.h` into `ws.proj`: q/k/v projections,
/// optional per-head q/k RMS norm, RoPE, cached grouped-query attention, output
/// projection.
pub fn attention<B: Backend>(
    b: &mut B,
    cfg: &ModelConfig,
    layer: &LayerConfig,
    w: &LayerWeights<B::Weight>,
    ws: &Workspace<B::Activation>,
    cache: &mut B::KvCache,
    freq_factors: Option<&B::Weight>,
) {
    let hd = cfg.head_dim;
    b.matmul(ws.h, &w.attn_q, ws.q);
    b.matmul(ws.h, &w.attn_k, ws.k);
    b.matmul(ws.h, &w.attn_v, ws.v);
    if let (Some(qn), Some(kn)) = (&w.attn_q_norm, &w.attn_k_norm) {
        b.rms_norm(ws.q, qn, hd, cfg.rms_norm_eps, ws.q);
        b.rms_norm(ws.k, kn, hd, cfg.rms_norm_eps, ws.k);
    }
    b.rope(ws.q, cfg.head_count, hd, &layer.rope, freq_factors);
    b.rope(ws.k, cfg.head_count_kv, hd, &layer.rope, freq_factors);
    let params = AttentionParams {
        head_count: cfg.head_count,
        head_count_kv: cfg.head_count_kv,
        head_dim: hd,
        scale: cfg.attention_scale,
        sliding_window: layer.sliding_window,
    };
    b.attention(ws.q, ws.k, ws.v, cache, &params, ws.attn);
    b.matmul(ws.attn, &w.attn_output, ws.proj);
}

/// Gated FFN of the normalised input `ws.h` into `ws.proj`.
pub fn feed_forward<B: Backend>(b: &mut B, cfg: &ModelConfig, w: &LayerWeights<B::Weight>, ws: &Workspace<B::Activation>) {
    b.matmul(ws.h, &w.ffn_gate, ws.gate);
    b.matmul(ws.h, &w.ffn_up, ws.up);
    b.gated_activation(ws.gate, ws.up, cfg.activation, ws.act);
    b.matmul(ws.act, &w.ffn_down, ws.proj);
}
