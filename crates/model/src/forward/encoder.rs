//! BERT's post-norm encoder block (`arch::Block::Encoder`), as llama.cpp's `build_bert`
//! runs `bert` and `nomic-bert`:
//!
//! ```text
//! x = LN(embed(tokens) + token_types[0] (+ position_embd[pos]))
//! per layer:  x = LN(x + out(attention(x)))        attention not causal (rotary or none)
//!             x = LN(x + ffn(x))                   SwiGLU (Nomic) or GELU with biases (BERT)
//! ```
//!
//! leaving the last hidden states in `ws.x`; pooling and normalisation happen on the
//! host (`embed.rs`). A batch holds one input (`begin_batch` at position 0) or several
//! packed row after row (`begin_packed_batch`): the backend restarts the positions
//! (`rope_qk`, `add_position_embedding`) at each input's first row and confines each
//! row's non-causal attention to its own input's rows, so nothing here depends on how
//! many inputs the batch holds; every other op works row by row.
//!
//! The op orders follow the decoder's where they can so the GPU fuses them the same way:
//! q/k/v matmuls over one input, `rope_qk` then `attention`, and the output matmul
//! straight before the residual `add` (Nomic; BERT's bias sits between).

use super::Workspace;
use crate::arch::Positions;
use crate::backend::{AttentionParams, Backend, QkRope};
use crate::config::{LayerConfig, ModelConfig};
use crate::encoder_weights::{EncoderLayerWeights, EncoderWeights, LayerNorm};
use crate::error::Result;

/// What one batch's forward pass works with (the counterpart of `Pass`).
pub struct EncoderPass<'a, B: Backend> {
    pub b: &'a mut B,
    pub cfg: &'a ModelConfig,
    pub w: &'a EncoderWeights<B::Weight>,
    pub ws: &'a Workspace<B::Activation>,
    pub caches: &'a mut [B::KvCache],
}

/// Records the encoder over the current batch (one whole input from position 0, or
/// several packed by `begin_packed_batch`), leaving its last hidden states in `ws.x`.
pub fn record<B: Backend>(p: &mut EncoderPass<B>) -> Result<()> {
    let EncoderPass { b, cfg, w, ws, caches } = p;
    let b: &mut B = b;
    let eps = cfg.rms_norm_eps;
    b.embed(&w.token_embd, 1.0, ws.x);
    b.add_bias(ws.x, &w.token_type);
    if let Some(pos) = &w.position_embd {
        b.add_position_embedding(ws.x, pos);
    }
    norm(b, ws.x, &w.token_embd_norm, eps);
    for ((lw, lc), cache) in w.layers.iter().zip(&cfg.layers).zip(caches.iter_mut()) {
        attention(b, cfg, lc, lw, ws, cache);
        with_bias(b, ws.proj, lw.attn_output_bias.as_ref());
        b.add(ws.x, ws.proj);
        norm(b, ws.x, &lw.attn_output_norm, eps);
        feed_forward(b, cfg, lw, ws);
        b.add(ws.x, ws.proj);
        norm(b, ws.x, &lw.layer_output_norm, eps);
    }
    Ok(())
}

/// `x = LN(x)` in place.
fn norm<B: Backend>(b: &mut B, x: B::Activation, n: &LayerNorm<B::Weight>, eps: f32) {
    b.layer_norm(x, &n.weight, &n.bias, eps, x);
}

fn with_bias<B: Backend>(b: &mut B, x: B::Activation, bias: Option<&B::Weight>) {
    if let Some(bias) = bias {
        b.add_bias(x, bias);
    }
}

/// Self-attention of `ws.x`, each row over its own input's rows, into `ws.proj`
/// (before the output bias).
fn attention<B: Backend>(
    b: &mut B,
    cfg: &ModelConfig,
    layer: &LayerConfig,
    w: &EncoderLayerWeights<B::Weight>,
    ws: &Workspace<B::Activation>,
    cache: &mut B::KvCache,
) {
    b.matmul(ws.x, &w.attn_q, ws.q);
    b.matmul(ws.x, &w.attn_k, ws.k);
    b.matmul(ws.x, &w.attn_v, ws.v);
    match cfg.architecture.spec().positions {
        Positions::Rotary => {
            let qk = QkRope {
                bias: w.attn_qkv_bias.as_ref(),
                heads: cfg.head_count,
                kv_heads: cfg.head_count_kv,
                head_dim: cfg.head_dim,
                rope: &layer.rope,
                freq_factors: None,
                norm: None,
            };
            b.rope_qk(ws.q, ws.k, ws.v, &qk);
        }
        Positions::Learned => {
            if let Some([bq, bk, bv]) = &w.attn_qkv_bias {
                b.add_bias(ws.q, bq);
                b.add_bias(ws.k, bk);
                b.add_bias(ws.v, bv);
            }
        }
    }
    let params = AttentionParams {
        head_count: cfg.head_count,
        head_count_kv: cfg.head_count_kv,
        head_dim: cfg.head_dim,
        scale: cfg.attention_scale,
        sliding_window: None,
        softcap: None,
        causal: cfg.causal,
    };
    b.attention(ws.q, ws.k, ws.v, cache, &params, ws.attn);
    b.matmul(ws.attn, &w.attn_output, ws.proj);
}

/// The feed-forward of `ws.x` into `ws.proj`: gated (`down(act(gate) * up)`) or plain
/// (`down(act(up + b)) + b`).
fn feed_forward<B: Backend>(
    b: &mut B,
    cfg: &ModelConfig,
    w: &EncoderLayerWeights<B::Weight>,
    ws: &Workspace<B::Activation>,
) {
    match &w.ffn_gate {
        Some(gate) => {
            b.matmul(ws.x, gate, ws.gate);
            b.matmul(ws.x, &w.ffn_up, ws.up);
            b.gated_activation(ws.gate, ws.up, cfg.activation, ws.act);
            b.matmul(ws.act, &w.ffn_down, ws.proj);
        }
        None => {
            b.matmul(ws.x, &w.ffn_up, ws.act);
            with_bias(b, ws.act, w.ffn_up_bias.as_ref());
            b.activation(ws.act, cfg.activation);
            b.matmul(ws.act, &w.ffn_down, ws.proj);
        }
    }
    with_bias(b, ws.proj, w.ffn_down_bias.as_ref());
}
