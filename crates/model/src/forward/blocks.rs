//! Building blocks shared by the architectures' forward passes.

use super::Workspace;
use crate::backend::{AttentionParams, Backend, QkRope};
use crate::config::{LayerConfig, ModelConfig};
use crate::weights::LayerWeights;

/// Self-attention of the normalised input `ws.h` into `ws.proj`: q/k/v projections
/// with optional biases, optional per-head q/k RMS norm, RoPE, cached grouped-query
/// attention (optionally windowed and soft-capped), output projection.
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
    b.matmuls(ws.h, &[(&w.attn_q, ws.q), (&w.attn_k, ws.k), (&w.attn_v, ws.v)]);
    let norm = match (&w.attn_q_norm, &w.attn_k_norm) {
        (Some(qn), Some(kn)) => Some((qn, kn, cfg.rms_norm_eps)),
        _ => None,
    };
    let qk = QkRope {
        bias: w.attn_qkv_bias.as_ref(),
        heads: cfg.head_count,
        kv_heads: cfg.head_count_kv,
        head_dim: hd,
        rope: &layer.rope,
        freq_factors,
        norm,
    };
    b.rope_qk(ws.q, ws.k, ws.v, &qk);
    let params = AttentionParams {
        head_count: cfg.head_count,
        head_count_kv: cfg.head_count_kv,
        head_dim: hd,
        scale: cfg.attention_scale,
        sliding_window: layer.sliding_window,
        softcap: cfg.attn_logit_softcap,
        causal: true,
    };
    b.attention(ws.q, ws.k, ws.v, cache, &params, ws.attn);
    b.matmul(ws.attn, &w.attn_output, ws.proj);
}

/// Gated FFN of the normalised input `ws.h` into `ws.proj`.
pub fn feed_forward<B: Backend>(
    b: &mut B,
    cfg: &ModelConfig,
    w: &LayerWeights<B::Weight>,
    ws: &Workspace<B::Activation>,
) {
    b.matmuls(ws.h, &[(&w.ffn_gate, ws.gate), (&w.ffn_up, ws.up)]);
    b.gated_activation(ws.gate, ws.up, cfg.activation, ws.act);
    b.matmul(ws.act, &w.ffn_down, ws.proj);
}
