//! The weight table: which GGUF tensors an architecture's description asks for, their
//! expected shapes, how fused tensors are split, and the backend handles they were
//! loaded into.

use kindling_gguf::{Header, TensorInfo};

use crate::arch::{Block, Presence, RopeFactors, Storage};
use crate::backend::WeightSpec;
use crate::config::ModelConfig;
pub use crate::encoder_weights::{EncoderLayerWeights, EncoderWeights};
use crate::error::{ModelError, Result};

/// A model's weights: a decoder's or an encoder's, as its block (`arch::Block`) reads them.
#[derive(Debug)]
pub enum ModelWeights<W> {
    Decoder(Weights<W>),
    Encoder(EncoderWeights<W>),
}

/// One transformer block's weights. Optional ones exist only in some architectures
/// (the loader requires exactly those the architecture's description names).
#[derive(Debug)]
pub struct LayerWeights<W> {
    pub attn_norm: W,
    /// `[q_width, d_model]`
    pub attn_q: W,
    /// `[kv_width, d_model]`
    pub attn_k: W,
    /// `[kv_width, d_model]`
    pub attn_v: W,
    /// Projection biases `[q_width]`, `[kv_width]`, `[kv_width]` (Qwen2).
    pub attn_qkv_bias: Option<[W; 3]>,
    /// `[d_model, q_width]`
    pub attn_output: W,
    /// Per-head RMS norm weights `[head_dim]` (Qwen3, Gemma 3).
    pub attn_q_norm: Option<W>,
    pub attn_k_norm: Option<W>,
    /// Norm applied to the attention output before the residual add (Gemma 2/3).
    pub post_attention_norm: Option<W>,
    pub ffn_norm: W,
    /// `[ffn, d_model]`
    pub ffn_gate: W,
    /// `[ffn, d_model]`
    pub ffn_up: W,
    /// `[d_model, ffn]`
    pub ffn_down: W,
    /// Norm applied to the FFN output before the residual add (Gemma 2/3).
    pub post_ffw_norm: Option<W>,
}

#[derive(Debug)]
pub struct Weights<W> {
    /// `[vocab, d_model]`
    pub token_embd: W,
    pub output_norm: W,
    /// `[vocab, d_model]`; `None` when tied to `token_embd`.
    pub output: Option<W>,
    /// RoPE frequency factors `[n_rot / 2]`: Llama 3's `rope_freqs`, or LongRoPE's
    /// short factors.
    pub rope_factors: Option<W>,
    /// LongRoPE's long factors `[n_rot / 2]`, for sessions past the original context.
    pub rope_factors_long: Option<W>,
    pub layers: Vec<LayerWeights<W>>,
}

impl<W> Weights<W> {
    /// The logits projection (the embedding when tied).
    pub fn output(&self) -> &W {
        self.output.as_ref().unwrap_or(&self.token_embd)
    }

    /// The frequency factors for a session of `capacity` positions.
    pub fn rope_factors_for(&self, cfg: &ModelConfig, capacity: usize) -> Option<&W> {
        match (cfg.rope_long_after, &self.rope_factors_long) {
            (Some(orig), Some(long)) if capacity > orig => Some(long),
            _ => self.rope_factors.as_ref(),
        }
    }
}

/// A weight the model will load: a whole file tensor, or a run of rows of a fused one.
#[derive(Clone, Debug)]
pub struct PlannedTensor {
    /// The file tensor's index in the header.
    pub index: usize,
    /// Where this weight's bytes start within the file tensor's data.
    pub offset: u64,
    /// The backend spec; its name is the weight's (unfused) name.
    pub spec: WeightSpec,
}

/// A tensor the description asks for: name, expected dims in GGUF order (ne0 first),
/// and the weights it holds (one, several row runs of a fused tensor, or its first
/// rows only).
pub(crate) struct Wanted {
    name: String,
    dims: Vec<u64>,
    required: bool,
    /// (weight name, rows) in row order; a single entry for an unfused tensor. Rows
    /// past the last entry are not loaded.
    split: Vec<(String, u64)>,
    /// Only the row width is checked (the file may have any number of rows).
    any_rows: bool,
}

impl Wanted {
    pub(crate) fn one(name: String, dims: Vec<u64>, required: bool) -> Self {
        let rows = dims.iter().skip(1).product();
        Wanted { split: vec![(name.clone(), rows)], name, dims, required, any_rows: false }
    }

    pub(crate) fn fused(name: String, cols: u64, split: Vec<(String, u64)>) -> Self {
        let rows = split.iter().map(|s| s.1).sum();
        Wanted { name, dims: vec![cols, rows], required: true, split, any_rows: false }
    }

    /// The first row of a `[cols, any rows]` tensor, loaded as a one-row weight of the
    /// same name (BERT's token types: every input is type 0; Nomic's file has two rows
    /// although its `tokenizer.ggml.token_type_count` says 1).
    pub(crate) fn first_row(name: String, cols: u64) -> Self {
        Wanted { split: vec![(name.clone(), 1)], name, dims: vec![cols], required: true, any_rows: true }
    }
}

/// Every tensor the configuration's architecture reads, with its shape.
fn wanted(cfg: &ModelConfig) -> Vec<Wanted> {
    let spec = cfg.architecture.spec();
    if spec.block == Block::Encoder {
        return crate::encoder_weights::wanted(cfg);
    }
    let d = cfg.embedding_length as u64;
    let q = cfg.q_width() as u64;
    let kv = cfg.kv_width() as u64;
    let ffn = cfg.feed_forward_length as u64;
    let hd = cfg.head_dim as u64;
    let vocab = cfg.vocab_size as u64;
    let half_rot = cfg.layers.first().map_or(0, |l| l.rope.n_rot) as u64 / 2;

    let mut w = vec![
        Wanted::one("token_embd.weight".into(), vec![d, vocab], true),
        Wanted::one("output_norm.weight".into(), vec![d], true),
        Wanted::one("output.weight".into(), vec![d, vocab], false),
    ];
    match spec.rope_factors {
        RopeFactors::None => {}
        RopeFactors::Freqs => w.push(Wanted::one("rope_freqs.weight".into(), vec![half_rot], false)),
        RopeFactors::LongRope => {
            w.push(Wanted::one("rope_factors_short.weight".into(), vec![half_rot], false));
            w.push(Wanted::one("rope_factors_long.weight".into(), vec![half_rot], false));
        }
    }
    for i in 0..cfg.block_count {
        let b = |s: &str| format!("blk.{i}.{s}.weight");
        let one = |s: &str, dims: Vec<u64>| Wanted::one(b(s), dims, true);
        w.push(one("attn_norm", vec![d]));
        match spec.qkv {
            Storage::Separate => {
                w.extend([one("attn_q", vec![d, q]), one("attn_k", vec![d, kv]), one("attn_v", vec![d, kv])])
            }
            Storage::Fused => {
                w.push(Wanted::fused(b("attn_qkv"), d, vec![(b("attn_q"), q), (b("attn_k"), kv), (b("attn_v"), kv)]))
            }
        }
        if spec.qkv_bias == Presence::Required {
            let bias = |s: &str, n| Wanted::one(format!("blk.{i}.{s}.bias"), vec![n], true);
            w.extend([bias("attn_q", q), bias("attn_k", kv), bias("attn_v", kv)]);
        }
        if spec.qk_norm == Presence::Required {
            w.extend([one("attn_q_norm", vec![hd]), one("attn_k_norm", vec![hd])]);
        }
        w.push(one("attn_output", vec![q, d]));
        w.push(one("ffn_norm", vec![d]));
        match spec.gate_up {
            Storage::Separate => w.extend([one("ffn_gate", vec![d, ffn]), one("ffn_up", vec![d, ffn])]),
            // Gate rows first, then up rows (llama.cpp's fused SwiGLU order).
            Storage::Fused => w.push(Wanted::fused(b("ffn_up"), d, vec![(b("ffn_gate"), ffn), (b("ffn_up"), ffn)])),
        }
        w.push(one("ffn_down", vec![ffn, d]));
        if spec.post_norms == Presence::Required {
            w.extend([one("post_attention_norm", vec![d]), one("post_ffw_norm", vec![d])]);
        }
    }
    w
}

/// Decides which tensors of the file are loaded (fused ones as row runs) and checks
/// their shapes; the order of the result is the order of their data in the file.
pub fn plan(header: &Header, cfg: &ModelConfig) -> Result<Vec<PlannedTensor>> {
    plan_tensors(&header.tensors, cfg, true)
}

/// As `plan`, for one shard of a split model: the wanted tensors among `tensors`
/// (one shard's table), shape-checked; whether each required tensor is somewhere is
/// for `check_required` once every shard's table has been read.
pub fn plan_shard(tensors: &[TensorInfo], cfg: &ModelConfig) -> Result<Vec<PlannedTensor>> {
    plan_tensors(tensors, cfg, false)
}

/// The first tensor the architecture requires that `present` says no shard had.
pub fn check_required(cfg: &ModelConfig, present: impl Fn(&str) -> bool) -> Result<()> {
    match wanted(cfg).into_iter().find(|w| w.required && !present(&w.name)) {
        Some(w) => Err(ModelError::MissingTensor(w.name)),
        None => Ok(()),
    }
}

fn plan_tensors(tensors: &[TensorInfo], cfg: &ModelConfig, require: bool) -> Result<Vec<PlannedTensor>> {
    let mut planned = Vec::new();
    for want in wanted(cfg) {
        let Some(index) = tensors.iter().position(|t| t.name == want.name) else {
            if want.required && require {
                return Err(ModelError::MissingTensor(want.name));
            }
            continue;
        };
        let info = &tensors[index];
        let shape_ok = if want.any_rows {
            info.dims.first() == want.dims.first() && info.n_rows() >= 1
        } else {
            trimmed(&info.dims) == trimmed(&want.dims)
        };
        if !shape_ok {
            return Err(ModelError::TensorShape { name: want.name, expected: want.dims, found: info.dims.clone() });
        }
        // The header parser checked that the rows are whole blocks: each row is
        // `n_bytes / rows` bytes, so a run of rows is a contiguous byte range.
        let row_bytes = info.n_bytes / info.n_rows().max(1);
        let mut offset = 0;
        for (name, rows) in want.split {
            let n_bytes = rows * row_bytes;
            let spec = WeightSpec { name, ty: info.ty, cols: info.row_len() as usize, rows: rows as usize, n_bytes };
            planned.push(PlannedTensor { index, offset, spec });
            offset += n_bytes;
        }
    }
    planned.sort_by_key(|p| tensors[p.index].offset + p.offset);
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

/// Builds the weight table from the loaded handles, by weight name.
pub fn assemble<W>(cfg: &ModelConfig, take: impl FnMut(&str) -> Option<W>) -> Result<ModelWeights<W>> {
    Ok(match cfg.architecture.spec().block {
        Block::PreNorm => ModelWeights::Decoder(assemble_decoder(cfg, take)?),
        Block::Encoder => ModelWeights::Encoder(crate::encoder_weights::assemble(cfg, take)?),
    })
}

fn assemble_decoder<W>(cfg: &ModelConfig, mut take: impl FnMut(&str) -> Option<W>) -> Result<Weights<W>> {
    let spec = cfg.architecture.spec();
    let mut req = |name: String| take(&name).ok_or(ModelError::MissingTensor(name));
    let token_embd = req("token_embd.weight".into())?;
    let output_norm = req("output_norm.weight".into())?;
    let mut layers = Vec::with_capacity(cfg.block_count);
    for i in 0..cfg.block_count {
        let b = |s: &str| format!("blk.{i}.{s}.weight");
        let mut when = |p: Presence, name: String| match p {
            Presence::Required => req(name).map(Some),
            Presence::Absent => Ok(None),
        };
        let bias = |s: &str| format!("blk.{i}.{s}.bias");
        let attn_qkv_bias = match (
            when(spec.qkv_bias, bias("attn_q"))?,
            when(spec.qkv_bias, bias("attn_k"))?,
            when(spec.qkv_bias, bias("attn_v"))?,
        ) {
            (Some(q), Some(k), Some(v)) => Some([q, k, v]),
            _ => None,
        };
        let attn_q_norm = when(spec.qk_norm, b("attn_q_norm"))?;
        let attn_k_norm = when(spec.qk_norm, b("attn_k_norm"))?;
        let post_attention_norm = when(spec.post_norms, b("post_attention_norm"))?;
        let post_ffw_norm = when(spec.post_norms, b("post_ffw_norm"))?;
        layers.push(LayerWeights {
            attn_norm: req(b("attn_norm"))?,
            attn_q: req(b("attn_q"))?,
            attn_k: req(b("attn_k"))?,
            attn_v: req(b("attn_v"))?,
            attn_qkv_bias,
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
    let (rope_factors, rope_factors_long) = match spec.rope_factors {
        RopeFactors::None => (None, None),
        RopeFactors::Freqs => (take("rope_freqs.weight"), None),
        RopeFactors::LongRope => (take("rope_factors_short.weight"), take("rope_factors_long.weight")),
    };
    Ok(Weights { token_embd, output_norm, output: take("output.weight"), rope_factors, rope_factors_long, layers })
}
