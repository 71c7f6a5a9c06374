//! An encoder's weight table (`arch::Block::Encoder`): the tensors llama.cpp's BERT
//! family names (`token_types`, `token_embd_norm`, `attn_output_norm`,
//! `layer_output_norm`, optional `position_embd` and biases), their shapes, and the
//! handles they were loaded into. `weights.rs` plans and loads them like a decoder's.

use crate::arch::{Positions, Presence, Storage};
use crate::config::ModelConfig;
use crate::error::{ModelError, Result};
use crate::weights::Wanted;

/// A LayerNorm's scale and shift, `[d_model]` each.
#[derive(Debug)]
pub struct LayerNorm<W> {
    pub weight: W,
    pub bias: W,
}

/// One post-norm encoder block.
#[derive(Debug)]
pub struct EncoderLayerWeights<W> {
    /// `[q_width, d_model]`, `[kv_width, d_model]` ×2 (split from `attn_qkv` when fused).
    pub attn_q: W,
    pub attn_k: W,
    pub attn_v: W,
    /// q/k/v biases (BERT).
    pub attn_qkv_bias: Option<[W; 3]>,
    /// `[d_model, q_width]` and its bias (BERT).
    pub attn_output: W,
    pub attn_output_bias: Option<W>,
    /// LayerNorm of `x + attention`.
    pub attn_output_norm: LayerNorm<W>,
    /// `[ffn, d_model]`: the gate of a gated feed-forward (Nomic's SwiGLU).
    pub ffn_gate: Option<W>,
    /// `[ffn, d_model]` and its bias (BERT).
    pub ffn_up: W,
    pub ffn_up_bias: Option<W>,
    /// `[d_model, ffn]` and its bias (BERT).
    pub ffn_down: W,
    pub ffn_down_bias: Option<W>,
    /// LayerNorm of `x + ffn`.
    pub layer_output_norm: LayerNorm<W>,
}

#[derive(Debug)]
pub struct EncoderWeights<W> {
    /// `[vocab, d_model]`
    pub token_embd: W,
    /// Row 0 of `token_types` (`[d_model]`): every input is token type 0.
    pub token_type: W,
    /// `[context, d_model]` learned positions (BERT).
    pub position_embd: Option<W>,
    /// LayerNorm of the summed embeddings.
    pub token_embd_norm: LayerNorm<W>,
    pub layers: Vec<EncoderLayerWeights<W>>,
}

/// Every tensor an encoder's description reads, with its shape.
pub(crate) fn wanted(cfg: &ModelConfig) -> Vec<Wanted> {
    let spec = cfg.architecture.spec();
    let d = cfg.embedding_length as u64;
    let q = cfg.q_width() as u64;
    let kv = cfg.kv_width() as u64;
    let ffn = cfg.feed_forward_length as u64;
    let vocab = cfg.vocab_size as u64;
    let one = |name: String, dims: Vec<u64>| Wanted::one(name, dims, true);

    let mut w = vec![
        one("token_embd.weight".into(), vec![d, vocab]),
        Wanted::first_row("token_types.weight".into(), d),
        one("token_embd_norm.weight".into(), vec![d]),
        one("token_embd_norm.bias".into(), vec![d]),
    ];
    if spec.positions == Positions::Learned {
        w.push(one("position_embd.weight".into(), vec![d, cfg.context_length as u64]));
    }
    for i in 0..cfg.block_count {
        let t = |s: &str, kind: &str| format!("blk.{i}.{s}.{kind}");
        let b = |s: &str| t(s, "weight");
        match spec.qkv {
            Storage::Separate => {
                w.extend([one(b("attn_q"), vec![d, q]), one(b("attn_k"), vec![d, kv]), one(b("attn_v"), vec![d, kv])])
            }
            Storage::Fused => {
                w.push(Wanted::fused(b("attn_qkv"), d, vec![(b("attn_q"), q), (b("attn_k"), kv), (b("attn_v"), kv)]))
            }
        }
        if spec.qkv_bias == Presence::Required {
            w.extend([
                one(t("attn_q", "bias"), vec![q]),
                one(t("attn_k", "bias"), vec![kv]),
                one(t("attn_v", "bias"), vec![kv]),
            ]);
        }
        w.push(one(b("attn_output"), vec![q, d]));
        w.extend([one(b("attn_output_norm"), vec![d]), one(t("attn_output_norm", "bias"), vec![d])]);
        if spec.ffn_gate == Presence::Required {
            w.push(one(b("ffn_gate"), vec![d, ffn]));
        }
        w.push(one(b("ffn_up"), vec![d, ffn]));
        w.push(one(b("ffn_down"), vec![ffn, d]));
        if spec.out_biases == Presence::Required {
            w.extend([
                one(t("attn_output", "bias"), vec![d]),
                one(t("ffn_up", "bias"), vec![ffn]),
                one(t("ffn_down", "bias"), vec![d]),
            ]);
        }
        w.extend([one(b("layer_output_norm"), vec![d]), one(t("layer_output_norm", "bias"), vec![d])]);
    }
    w
}

/// Builds the encoder's weight table from the loaded handles, by weight name.
pub(crate) fn assemble<W>(cfg: &ModelConfig, mut take: impl FnMut(&str) -> Option<W>) -> Result<EncoderWeights<W>> {
    let spec = cfg.architecture.spec();
    let mut req = |name: String| take(&name).ok_or(ModelError::MissingTensor(name));
    let token_embd = req("token_embd.weight".into())?;
    let token_type = req("token_types.weight".into())?;
    let position_embd = match spec.positions {
        Positions::Learned => Some(req("position_embd.weight".into())?),
        Positions::Rotary => None,
    };
    let token_embd_norm =
        LayerNorm { weight: req("token_embd_norm.weight".into())?, bias: req("token_embd_norm.bias".into())? };
    let mut layers = Vec::with_capacity(cfg.block_count);
    for i in 0..cfg.block_count {
        let t = |s: &str, kind: &str| format!("blk.{i}.{s}.{kind}");
        let b = |s: &str| t(s, "weight");
        let mut when = |p: Presence, name: String| match p {
            Presence::Required => req(name).map(Some),
            Presence::Absent => Ok(None),
        };
        let attn_qkv_bias = match (
            when(spec.qkv_bias, t("attn_q", "bias"))?,
            when(spec.qkv_bias, t("attn_k", "bias"))?,
            when(spec.qkv_bias, t("attn_v", "bias"))?,
        ) {
            (Some(q), Some(k), Some(v)) => Some([q, k, v]),
            _ => None,
        };
        let attn_output_bias = when(spec.out_biases, t("attn_output", "bias"))?;
        let ffn_up_bias = when(spec.out_biases, t("ffn_up", "bias"))?;
        let ffn_down_bias = when(spec.out_biases, t("ffn_down", "bias"))?;
        let ffn_gate = when(spec.ffn_gate, b("ffn_gate"))?;
        layers.push(EncoderLayerWeights {
            attn_q: req(b("attn_q"))?,
            attn_k: req(b("attn_k"))?,
            attn_v: req(b("attn_v"))?,
            attn_qkv_bias,
            attn_output: req(b("attn_output"))?,
            attn_output_bias,
            attn_output_norm: LayerNorm {
                weight: req(b("attn_output_norm"))?,
                bias: req(t("attn_output_norm", "bias"))?,
            },
            ffn_gate,
            ffn_up: req(b("ffn_up"))?,
            ffn_up_bias,
            ffn_down: req(b("ffn_down"))?,
            ffn_down_bias,
            layer_output_norm: LayerNorm {
                weight: req(b("layer_output_norm"))?,
                bias: req(t("layer_output_norm", "bias"))?,
            },
        });
    }
    Ok(EncoderWeights { token_embd, token_type, position_embd, token_embd_norm, layers })
}
