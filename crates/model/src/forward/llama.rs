//! Llama-family decoder (SmolLM2, TinyLlama, Llama 2/3):
//! `x += attn(norm(x)); x += ffn(norm(x))`, SiLU-gated FFN, "normal" RoPE.

use super::{blocks, Pass};
use crate::backend::Backend;
use crate::error::Result;

pub fn record<B: Backend>(p: &mut Pass<B>) -> Result<()> {
    let Pass { b, cfg, w, ws, caches } = p;
    let b: &mut B = b;
    let (d, eps) = (cfg.embedding_length, cfg.rms_norm_eps);
    b.embed(&w.token_embd, cfg.embedding_scale, ws.x);
    for ((lw, lc), cache) in w.layers.iter().zip(&cfg.layers).zip(caches.iter_mut()) {
        b.rms_norm(ws.x, &lw.attn_norm, d, eps, ws.h);
        blocks::attention(b, cfg, lc, lw, ws, cache, w.rope_freqs.as_ref());
        b.add(ws.x, ws.proj);
        b.rms_norm(ws.x, &lw.ffn_norm, d, eps, ws.h);
        blocks::feed_forward(b, cfg, lw, ws);
        b.add(ws.x, ws.proj);
    }
    Ok(())
}
