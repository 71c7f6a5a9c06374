//! The pre-norm decoder block every architecture we run shares (`arch::Block::PreNorm`):
//!
//! ```text
//! x = embed(tokens) * embedding_scale
//! per layer:  x += post_attn_norm?(attention(attn_norm(x)))
//!             x += post_ffw_norm?(ffn(ffn_norm(x)))
//! ```
//!
//! What differs between families is data, not code: projection biases, q/k norms,
//! post-norms, windows, RoPE style and factors and soft caps come from the
//! architecture's description (through `ModelConfig`) and the weights it loaded. Norm
//! weights are used as stored: llama.cpp's converter already added Gemma's `1 +`.
//!
//! The op order is the one the GPU backend fuses (norm into the matvecs reading it,
//! the residual add into the projection or post-norm before it): keep it.

use super::{blocks, Pass};
use crate::backend::Backend;
use crate::error::Result;

pub fn record<B: Backend>(p: &mut Pass<B>) -> Result<()> {
    let Pass { b, cfg, w, ws, caches, capacity } = p;
    let b: &mut B = b;
    let (d, eps) = (cfg.embedding_length, cfg.rms_norm_eps);
    let rope_factors = w.rope_factors_for(cfg, *capacity);
    b.embed(&w.token_embd, cfg.embedding_scale, ws.x);
    for ((lw, lc), cache) in w.layers.iter().zip(&cfg.layers).zip(caches.iter_mut()) {
        b.rms_norm(ws.x, &lw.attn_norm, d, eps, ws.h);
        blocks::attention(b, cfg, lc, lw, ws, cache, rope_factors);
        residual(b, ws.x, ws.proj, lw.post_attention_norm.as_ref(), d, eps, ws.h);
        b.rms_norm(ws.x, &lw.ffn_norm, d, eps, ws.h);
        blocks::feed_forward(b, cfg, lw, ws);
        residual(b, ws.x, ws.proj, lw.post_ffw_norm.as_ref(), d, eps, ws.h);
    }
    Ok(())
}

/// `x += y`, or `x += norm(y)` through `tmp` when the block has a post-norm.
fn residual<B: Backend>(
    b: &mut B,
    x: B::Activation,
    y: B::Activation,
    post_norm: Option<&B::Weight>,
    d: usize,
    eps: f32,
    tmp: B::Activation,
) {
    match post_norm {
        Some(n) => {
            b.rms_norm(y, n, d, eps, tmp);
            b.add(x, tmp);
        }
        None => b.add(x, y),
    }
}
