//! Gemma 3 decoder: embeddings scaled by sqrt(d_model); per-head q/k RMS norms; extra
//! RMS norms on the attention and FFN outputs before each residual add; GELU-tanh
//! gated FFN; neox RoPE with θ = 10,000 on sliding-window layers and the file's base
//! on global ones (the per-layer split lives in `LayerConfig`).
//!
//! GGUF stores Gemma's norm weights with the `1 +` of the original model already
//! added by the converter, so they are used as they are, like any RMS norm weight.

use super::{blocks, Pass};
use crate::backend::Backend;
use crate::error::{ModelError, Result};

pub fn record<B: Backend>(p: &mut Pass<B>) -> Result<()> {
    let Pass { b, cfg, w, ws, caches } = p;
    let b: &mut B = b;
    let (d, eps) = (cfg.embedding_length, cfg.rms_norm_eps);
    b.embed(&w.token_embd, cfg.embedding_scale, ws.x);
    for ((lw, lc), cache) in w.layers.iter().zip(&cfg.layers).zip(caches.iter_mut()) {
        let missing = |n: &str| ModelError::MissingTensor(n.into());
        let post_attn = lw.post_attention_norm.as_ref().ok_or_else(|| missing("post_attention_norm"))?;
        let post_ffw = lw.post_ffw_norm.as_ref().ok_or_else(|| missing("post_ffw_norm"))?;
        b.rms_norm(ws.x, &lw.attn_norm, d, eps, ws.h);
        blocks::attention(b, cfg, lc, lw, ws, cache, None);
        b.rms_norm(ws.proj, post_attn, d, eps, ws.h);
        b.add(ws.x, ws.h);
        b.rms_norm(ws.x, &lw.ffn_norm, d, eps, ws.h);
        blocks::feed_forward(b, cfg, lw, ws);
        b.rms_norm(ws.proj, post_ffw, d, eps, ws.h);
        b.add(ws.x, ws.h);
    }
    Ok(())
}
