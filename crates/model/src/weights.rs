//! The weight table: which GGUF tensors an architecture uses, their expected shapes,
//! and the backend handles they were loaded into.

use kindling_gguf::{Header, TensorInfo};

use crate::backend::WeightSpec;
use crate::config::{Architecture, ModelConfig};
use crate::error::{ModelError, Result};

/// One transformer block's weights. Optional ones exist only in some architectures
/// (the loader requires exactly those the configuration's architecture uses).
#[derive(Debug)]
pub struct LayerWeights<W> {
    pub attn_norm: W,
    /// `[q_width, d_model]`
    pub attn_q: W,
    /// `[kv_width, d_model]`
    pub attn_k: W,
    /// `[kv_width, d_model]`
    pub attn_v: W,
    /// `[d_model, q_width]`
    pub attn_output: W,
    /// Per-head RMS norm weights `[head_dim]` (Gemma 3).
    pub attn_q_norm: Option<W>,
    pub attn_k_norm: Option<W>,
    /// Norm applied to the attention output before the residual add (Gemma 3).
    pub post_attention_norm: Option<W>,
    pub ffn_norm: W,
    /// `[ffn, d_model]`
    pub ffn_gate: W,
    /// `[ffn, d_model]`
    pub ffn_up: W,
    /// `[d_model, ffn]`
    pub ffn_down: W,
    /// Norm applied to the FFN output before the residual add (Gemma 3).
    pub post_ffw_norm: Option<W>,
}

#[derive(Debug)]
pub struct Weights<W> {
    /// `[vocab, d_model]`
    pub token_embd: W,
    pub output_norm: W,
    /// `[vocab, d_model]`; `None` when tied to `token_embd`.
    pub output: Option<W>,
    /// Llama 3.1-style RoPE frequency divisors `[n_rot / 2]`.
    pub rope_freqs: Option<W>,
    pub layers: Vec<LayerWeights<W>>,
}

impl<W> Weights<W> {
    /// The logits projection (the embedding when tied).
    pub fn output(&self) -> &W {
        self.output.as_ref().unwrap_or(&self.token_embd)
    }
}

/// A tensor the model will load: its index in the header and its backend spec.
#[derive(Clone, Debug)]
pub struct PlannedTensor {
    pub index: usize,
    pub spec: WeightSpec,
}

/// Decides which tensors of the file are loaded and checks their shapes; the order of
/// `tensors` is the order of their data in the file.
pub fn plan(header: &Header, cfg: &ModelConfig) -> Result<Vec<PlannedTensor>> {
    let d = cfg.embedding_length as u64;
    let q = cfg.q_width() as u64;
    let kv = cfg.kv_width() as u64;
    let ffn = cfg.feed_forward_length as u64;
    let hd = cfg.head_dim as u64;
    let gemma = cfg.architecture == Architecture::Gemma3;

    // (name, expected dims in GGUF order (ne0 first), required)
    let mut wanted: Vec<(String, Vec<u64>, bool)> = vec![
        ("token_embd.weight".into(), vec![d, cfg.vocab_size as u64], true),
        ("output_norm.weight".into(), vec![d], true),
        ("output.weight".into(), vec![d, cfg.vocab_size as u64], false),
    ];
    if cfg.architecture == Architecture::Llama {
        let n_rot = cfg.layers.first().map_or(0, |l| l.rope.n_rot) as u64;
        wanted.push(("rope_freqs.weight".into(), vec![n_rot / 2], false));
    }
    for i in 0..cfg.block_count {
        let b = |s: &str| format!("blk.{i}.{s}.weight");
        wanted.extend([
            (b("attn_norm"), vec![d], true),
            (b("attn_q"), vec![d, q], true),
            (b("attn_k"), vec![d, kv], true),
            (b("attn_v"), vec![d, kv], true),
            (b("attn_output"), vec![q, d], true),
            (b("ffn_norm"), vec![d], true),
            (b("ffn_gate"), vec![d, ffn], true),
            (b("ffn_up"), vec![d, ffn], true),
            (b("ffn_down"), vec![ffn, d], true),
        ]);
        if gemma {
            wanted.extend([
                (b("attn_q_norm"), vec![hd], true),
                (b("attn_k_norm"), vec![hd], true),
                (b("post_attention_norm"), vec![d], true),
                (b("post_ffw_norm"), vec![d], true),
            ]);
        }
    }

    let mut planned = Vec::with_capacity(wanted.len());
    for (name, dims, required) in wanted {
        let Some(index) = header.tensors.iter().position(|t| t.name == name) else {
            if required {
                return Err(ModelError::MissingTensor(name));
            }
            continue;
        };
        let info = &header.tensors[index];
        if trimmed(&info.dims) != trimmed(&dims) {
            return Err(ModelError::TensorShape { name, expected: dims, found: info.dims.clone() });
        }
        planned.push(PlannedTensor { index, spec: spec_of(info) });
    }
    planned.sort_by_key(|p| header.tensors[p.index].offset);
    Ok(planned)
}

/// Dims without trailing 1s (GGUF writers differ on whether they store them).
fn trimmed(dims: &[u64]) -> &[u64] {
    let mut n = dims.len();
    while n > 1 && dims[n - 1] == 1 {
        n -= 1;
    }
    &dims[..n]
}

fn spec_of(info: &TensorInfo) -> WeightSpec {
    WeightSpec {
        name: info.name.clone(),
        ty: info.ty,
        cols: info.row_len() as usize,
        rows: info.n_rows() as usize,
        n_bytes: info.n_bytes,
    }
}

/// Builds the weight table from the loaded handles, by name.
pub fn assemble<W>(cfg: &ModelConfig, mut take: impl FnMut(&str) -> Option<W>) -> Result<Weights<W>> {
    let mut req = |name: String| take(&name).ok_or(ModelError::MissingTensor(name));
    let token_embd = req("token_embd.weight".into())?;
    let output_norm = req("output_norm.weight".into())?;
    let mut layers = Vec::with_capacity(cfg.block_count);
    for i in 0..cfg.block_count {
        let b = |s: &str| format!("blk.{i}.{s}.weight");
        let gemma = cfg.architecture == Architecture::Gemma3;
        let mut opt = |s: &str| -> Result<Option<W>> { if gemma { req(b(s)).map(Some) } else { Ok(None) } };
        let attn_q_norm = opt("attn_q_norm")?;
        let attn_k_norm = opt("attn_k_norm")?;
        let post_attention_norm = opt("post_attention_norm")?;
        let post_ffw_norm = opt("post_ffw_norm")?;
        layers.push(LayerWeights {
            attn_norm: req(b("attn_norm"))?,
            attn_q: req(b("attn_q"))?,
            attn_k: req(b("attn_k"))?,
            attn_v: req(b("attn_v"))?,
            attn_output: req(b("attn_output"))?,
            attn_q_norm,
            attn_k_norm,
            post_attention_norm,
            ffn_norm: req(b("ffn_norm"))?,
            ffn_gate: req(b("ffn_gate"))?,
            ffn_up: req(b("ffn_up"))?,
            ffn_down: req(b("ffn_down"))?,
            post_ffw_norm,
        });
    }
    Ok(Weights {
        token_embd,
        output_norm,
        output: take("output.weight"),
        rope_freqs: take("rope_freqs.weight"),
        layers,
    })
}
