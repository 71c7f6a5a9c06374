//! `ModelConfig`: every hyperparameter the forward pass needs, resolved from GGUF
//! metadata once at load time. Nothing after this module reads a metadata string.

use kindling_gguf::{Metadata, Value};

pub use crate::arch::Architecture;
use crate::arch::{ArchSpec, Block, EmbeddingScale, RopeFactors, Windows};
use crate::embed::{ModelKind, Pooling};
use crate::error::{ModelError, Result};

/// How RoPE pairs up the dimensions of a head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopeStyle {
    /// Adjacent pairs (x[2i], x[2i+1]): llama.cpp's "normal" rope. GGUF llama weights
    /// were permuted by the converter so that this matches the original model.
    Normal,
    /// Pairs half a rotary span apart (x[i], x[i + n_rot/2]): "neox" rope (Gemma).
    Neox,
}

/// The gated FFN's activation: `down(act(gate(x)) * up(x))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    Silu,
    /// GELU with the tanh approximation.
    GeluTanh,
}

/// RoPE parameters of one layer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RopeConfig {
    pub style: RopeStyle,
    /// Rotated dimensions per head (≤ head_dim; the rest pass through).
    pub n_rot: usize,
    /// θ base: dimension pair i turns by `pos * base^(-2i/n_rot)`.
    pub base: f32,
    /// Linear position scaling (1 / scaling factor): positions are multiplied by it.
    pub freq_scale: f32,
    /// Multiplies cos and sin, so q·k by its square (LongRoPE's attention factor;
    /// 1.0 otherwise).
    pub attn_factor: f32,
}

impl RopeConfig {
    /// (cos, sin) of pair `i` at position `pos`, `factor` dividing its frequency (the
    /// model's frequency factors). Angles in f64, so long positions stay exact; every
    /// backend takes its rotations from here.
    pub fn cos_sin(&self, pos: usize, i: usize, factor: Option<f32>) -> (f32, f32) {
        self.cos_sin_at(pos, self.pair_frequency(i), factor)
    }

    /// Pair `i`'s frequency before scaling and factors: `base^(−2i / n_rot)`.
    pub fn pair_frequency(&self, i: usize) -> f64 {
        (self.base as f64).powf(-2.0 * i as f64 / self.n_rot as f64)
    }

    /// `cos_sin` with the pair's `pair_frequency` given: a table over many positions
    /// takes each pair's power once (the same operations in the same order, so the same
    /// values).
    pub fn cos_sin_at(&self, pos: usize, frequency: f64, factor: Option<f32>) -> (f32, f32) {
        let mut theta = pos as f64 * self.freq_scale as f64 * frequency;
        if let Some(f) = factor {
            theta /= f as f64;
        }
        let (sin, cos) = theta.sin_cos();
        ((cos * self.attn_factor as f64) as f32, (sin * self.attn_factor as f64) as f32)
    }
}

/// Per-layer attention settings (Gemma 3 alternates local and global layers).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerConfig {
    /// Attend to at most this many most recent positions (incl. the current one).
    pub sliding_window: Option<usize>,
    pub rope: RopeConfig,
}

/// Everything the forward pass needs, with a shape comment on each field.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelConfig {
    pub architecture: Architecture,
    /// `general.name`, for display.
    pub name: String,
    /// Rows of the token embedding / logits width.
    pub vocab_size: usize,
    /// Width of the residual stream (d_model).
    pub embedding_length: usize,
    pub block_count: usize,
    /// Hidden width of the gated FFN.
    pub feed_forward_length: usize,
    /// Query heads.
    pub head_count: usize,
    /// Key/value heads (grouped-query attention: head_count is a multiple of it).
    pub head_count_kv: usize,
    /// Width of one query, key and value head (a file whose value heads differ in width
    /// is refused).
    pub head_dim: usize,
    /// Positions the model was trained for.
    pub context_length: usize,
    /// Epsilon of the block norms: `attention.layer_norm_rms_epsilon` for a decoder's
    /// RMS norms, `attention.layer_norm_epsilon` for an encoder's LayerNorms.
    pub rms_norm_eps: f32,
    pub activation: Activation,
    /// Multiplies the embedding rows (Gemma: sqrt(d_model)); 1.0 otherwise.
    pub embedding_scale: f32,
    /// Multiplies q·k before softmax.
    pub attention_scale: f32,
    /// Soft-capping `cap * tanh(s / cap)` of the scaled attention scores (Gemma 2).
    pub attn_logit_softcap: Option<f32>,
    /// Soft-capping of the output logits (Gemma 2).
    pub final_logit_softcap: Option<f32>,
    /// LongRoPE: sessions of more positions than this use the long frequency factors.
    pub rope_long_after: Option<usize>,
    /// One entry per block.
    pub layers: Vec<LayerConfig>,
    /// A decoder generates; an encoder embeds (`arch::Block`).
    pub kind: ModelKind,
    /// Encoders: how the last hidden states become one vector (`pooling_type`:
    /// 1 mean, 2 CLS, 3 last; mean when absent). Decoders: `Last` (unused).
    pub pooling: Pooling,
    /// Whether a position attends only to earlier ones (`attention.causal`; decoders
    /// always, encoders when the file says so).
    pub causal: bool,
}

impl ModelConfig {
    /// Resolves the configuration from GGUF metadata.
    pub fn from_metadata(md: &Metadata) -> Result<ModelConfig> {
        let arch_name = md
            .get_str("general.architecture")
            .ok_or_else(|| ModelError::MissingMetadata("general.architecture".into()))?;
        let spec: &ArchSpec = Architecture::from_name(arch_name)
            .ok_or_else(|| ModelError::UnsupportedArchitecture(arch_name.to_string()))?;
        let m = Keys { md, arch: arch_name };

        let embedding_length = m.usize("embedding_length")?;
        let block_count = m.usize("block_count")?;
        let head_count = m.usize("attention.head_count")?;
        let head_count_kv = m.opt_usize("attention.head_count_kv")?.unwrap_or(head_count);
        if head_count == 0 || head_count_kv == 0 || head_count % head_count_kv != 0 {
            return Err(m.bad(
                "attention.head_count_kv",
                format!("{head_count} query heads cannot be grouped over {head_count_kv} key/value heads"),
            ));
        }
        let head_dim = match m.opt_usize("attention.key_length")? {
            Some(d) => d,
            None => {
                if embedding_length % head_count != 0 {
                    return Err(m.bad(
                        "attention.head_count",
                        format!("embedding length {embedding_length} is not a multiple of {head_count} heads"),
                    ));
                }
                embedding_length / head_count
            }
        };
        let value_head_dim = m.opt_usize("attention.value_length")?.unwrap_or(head_dim);
        if value_head_dim != head_dim {
            return Err(m.bad("attention.value_length", "value heads wider than key heads are not supported".into()));
        }
        let n_rot = m.opt_usize("rope.dimension_count")?.unwrap_or(head_dim);
        if n_rot > head_dim || n_rot % 2 != 0 {
            return Err(m.bad("rope.dimension_count", format!("{n_rot} rotary dims for a head of {head_dim}")));
        }
        let rope_base = m.opt_f32("rope.freq_base")?.unwrap_or(10_000.0);
        let freq_scale = rope_freq_scale(&m, spec)?;
        let (attn_factor, rope_long_after) = match spec.rope_factors {
            RopeFactors::LongRope => (
                m.opt_f32("rope.scaling.attn_factor")?.unwrap_or(1.0),
                m.opt_usize("rope.scaling.original_context_length")?,
            ),
            _ => (1.0, None),
        };
        let encoder = spec.block == Block::Encoder;
        let rms_norm_eps =
            m.f32(if encoder { "attention.layer_norm_epsilon" } else { "attention.layer_norm_rms_epsilon" })?;
        let (kind, pooling, causal) = if encoder {
            let pooling = match m.opt_usize("pooling_type")? {
                None | Some(1) => Pooling::Mean,
                Some(2) => Pooling::Cls,
                Some(3) => Pooling::Last,
                Some(p) => {
                    return Err(m.bad(
                        "pooling_type",
                        format!("pooling type {p} is not supported (1 mean, 2 CLS and 3 last are)"),
                    ))
                }
            };
            (ModelKind::Encoder, pooling, m.opt_bool("attention.causal")?.unwrap_or(false))
        } else {
            (ModelKind::Decoder, Pooling::Last, true)
        };
        let vocab_size = match m.opt_usize("vocab_size")? {
            Some(v) => v,
            None => md
                .get("tokenizer.ggml.tokens")
                .and_then(|v| v.as_array())
                .map(|a| a.len())
                .ok_or_else(|| ModelError::MissingMetadata(format!("{arch_name}.vocab_size")))?,
        };
        let context_length = m.usize("context_length")?;
        let feed_forward_length = m.usize("feed_forward_length")?;

        for (key, v) in [
            ("embedding_length", embedding_length),
            ("block_count", block_count),
            ("feed_forward_length", feed_forward_length),
            ("context_length", context_length),
            ("vocab_size", vocab_size),
            ("attention.key_length", head_dim),
        ] {
            if v == 0 || v > 1 << 24 {
                return Err(m.bad(key, format!("{v} is out of range")));
            }
        }

        let rope =
            |base: f32, freq_scale: f32| RopeConfig { style: spec.rope_style, n_rot, base, freq_scale, attn_factor };
        let global = LayerConfig { sliding_window: None, rope: rope(rope_base, freq_scale) };
        let layers = match spec.windows {
            Windows::None => vec![global; block_count],
            Windows::Pattern { default_pattern, local_rope_base } => {
                let window = m.usize("attention.sliding_window")?;
                if window == 0 {
                    return Err(m.bad("attention.sliding_window", "a window of 0 positions".into()));
                }
                let pattern = m.opt_usize("attention.sliding_window_pattern")?.unwrap_or(default_pattern).max(1);
                let local = LayerConfig {
                    sliding_window: Some(window),
                    rope: local_rope_base.map_or(global.rope, |base| rope(base, 1.0)),
                };
                (0..block_count).map(|i| if (i + 1) % pattern == 0 { global } else { local }).collect()
            }
        };
        let embedding_scale = match spec.embedding_scale {
            EmbeddingScale::One => 1.0,
            EmbeddingScale::SqrtWidth => (embedding_length as f32).sqrt(),
        };
        let softcap = |key: &str| -> Result<Option<f32>> {
            if !spec.softcaps {
                return Ok(None);
            }
            match m.opt_f32(key)? {
                Some(c) if c < 0.0 => Err(m.bad(key, format!("a soft cap of {c}"))),
                c => Ok(c.filter(|c| *c > 0.0)),
            }
        };

        Ok(ModelConfig {
            architecture: spec.arch,
            name: md.get_str("general.name").unwrap_or(arch_name).to_string(),
            vocab_size,
            embedding_length,
            block_count,
            feed_forward_length,
            head_count,
            head_count_kv,
            head_dim,
            context_length,
            rms_norm_eps,
            activation: spec.activation,
            embedding_scale,
            attention_scale: 1.0 / (head_dim as f32).sqrt(),
            attn_logit_softcap: softcap("attn_logit_softcapping")?,
            final_logit_softcap: softcap("final_logit_softcapping")?,
            rope_long_after,
            layers,
            kind,
            pooling,
            causal,
        })
    }

    /// Width of all query heads together.
    pub fn q_width(&self) -> usize {
        self.head_count * self.head_dim
    }

    /// Width of all key (or value) heads together: one KV-cache row.
    pub fn kv_width(&self) -> usize {
        self.head_count_kv * self.head_dim
    }
}

/// `1 / factor` for linear RoPE scaling; 1.0 when none. Llama 3 and LongRoPE scaling
/// come as frequency-factor tensors (the factor key then only describes them); other
/// scaling kinds (YaRN, ...) are refused rather than silently run wrong.
fn rope_freq_scale(m: &Keys, spec: &ArchSpec) -> Result<f32> {
    let kind = m.opt_str("rope.scaling.type")?;
    let factor = m.opt_f32("rope.scaling.factor")?;
    let by_factors = match spec.rope_factors {
        RopeFactors::None => None,
        RopeFactors::Freqs => Some("llama3"),
        RopeFactors::LongRope => Some("longrope"),
    };
    match (kind, factor) {
        (Some(k), _) if Some(k) == by_factors => Ok(1.0),
        (None | Some("none"), None) => Ok(1.0),
        (None | Some("linear"), Some(f)) if f > 0.0 => Ok(1.0 / f),
        (Some("none"), Some(_)) => Ok(1.0),
        (Some(k), _) => {
            let known = by_factors.map_or(String::new(), |b| format!(", {b}"));
            Err(m.bad("rope.scaling.type", format!("RoPE scaling '{k}' is not supported (none, linear{known} are)")))
        }
        (_, Some(f)) => Err(m.bad("rope.scaling.factor", format!("{f} is not a positive factor"))),
    }
}

/// Typed access to `<arch>.<key>` metadata with errors that name the key.
struct Keys<'a> {
    md: &'a Metadata,
    arch: &'a str,
}

impl Keys<'_> {
    fn full(&self, key: &str) -> String {
        format!("{}.{}", self.arch, key)
    }

    fn bad(&self, key: &str, why: String) -> ModelError {
        ModelError::BadMetadata { key: self.full(key), why }
    }

    fn opt_usize(&self, key: &str) -> Result<Option<usize>> {
        let full = self.full(key);
        match self.md.get(&full) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|v| usize::try_from(v).ok())
                .map(Some)
                .ok_or_else(|| self.bad(key, format!("expected a non-negative integer, found {}", shown(v)))),
        }
    }

    fn usize(&self, key: &str) -> Result<usize> {
        self.opt_usize(key)?.ok_or_else(|| ModelError::MissingMetadata(self.full(key)))
    }

    fn opt_f32(&self, key: &str) -> Result<Option<f32>> {
        match self.md.get(&self.full(key)) {
            None => Ok(None),
            Some(v) => match v.as_f32() {
                Some(x) if x.is_finite() => Ok(Some(x)),
                _ => Err(self.bad(key, format!("expected a finite number, found {}", shown(v)))),
            },
        }
    }

    fn f32(&self, key: &str) -> Result<f32> {
        self.opt_f32(key)?.ok_or_else(|| ModelError::MissingMetadata(self.full(key)))
    }

    fn opt_bool(&self, key: &str) -> Result<Option<bool>> {
        match self.md.get(&self.full(key)) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.bad(key, format!("expected a bool, found {}", shown(v)))),
        }
    }

    fn opt_str(&self, key: &str) -> Result<Option<&str>> {
        match self.md.get(&self.full(key)) {
            None => Ok(None),
            Some(v) => {
                v.as_str().map(Some).ok_or_else(|| self.bad(key, format!("expected a string, found {}", shown(v))))
            }
        }
    }
}

/// A metadata value as an error message shows it: its type, and the value itself when
/// it is a scalar or a short string (`string 'high'`, `f32 NaN`, `array of 3 u32`).
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) if s.chars().count() <= 40 => format!("string '{s}'"),
        Value::String(s) => format!("string '{}...'", s.chars().take(40).collect::<String>()),
        Value::Array(a) => format!("array of {} {}", a.len(), a.type_name()),
        Value::U8(x) => format!("u8 {x}"),
        Value::I8(x) => format!("i8 {x}"),
        Value::U16(x) => format!("u16 {x}"),
        Value::I16(x) => format!("i16 {x}"),
        Value::U32(x) => format!("u32 {x}"),
        Value::I32(x) => format!("i32 {x}"),
        Value::U64(x) => format!("u64 {x}"),
        Value::I64(x) => format!("i64 {x}"),
        Value::F32(x) => format!("f32 {x}"),
        Value::F64(x) => format!("f64 {x}"),
        Value::Bool(x) => format!("bool {x}"),
    }
}
