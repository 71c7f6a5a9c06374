//! `ModelConfig`: every hyperparameter the forward pass needs, resolved from GGUF
//! metadata once at load time. Nothing after this module reads a metadata string.

use kindling_gguf::Metadata;

use crate::error::{ModelError, Result};

/// The architecture families we run. Each has one forward pass in `forward/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Architecture {
    /// Llama-style decoders: SmolLM2, TinyLlama, Llama 2/3.x.
    Llama,
    /// Gemma 3 (text): q/k norms, post norms, sliding-window layers, GELU-tanh.
    Gemma3,
}

impl Architecture {
    pub fn name(self) -> &'static str {
        match self {
            Architecture::Llama => "llama",
            Architecture::Gemma3 => "gemma3",
        }
    }
}

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
    /// Width of one query/key head.
    pub head_dim: usize,
    /// Width of one value head.
    pub value_head_dim: usize,
    /// Positions the model was trained for.
    pub context_length: usize,
    pub rms_norm_eps: f32,
    pub activation: Activation,
    /// Multiplies the embedding rows (Gemma: sqrt(d_model)); 1.0 otherwise.
    pub embedding_scale: f32,
    /// Multiplies q·k before softmax.
    pub attention_scale: f32,
    /// Logit soft-capping `cap * tanh(logit / cap)` (none for these families today).
    pub final_logit_softcap: Option<f32>,
    /// One entry per block.
    pub layers: Vec<LayerConfig>,
}

impl ModelConfig {
    /// Resolves the configuration from GGUF metadata.
    pub fn from_metadata(md: &Metadata) -> Result<ModelConfig> {
        let arch_name = md
            .get_str("general.architecture")
            .ok_or_else(|| ModelError::MissingMetadata("general.architecture".into()))?;
        let architecture = match arch_name {
            "llama" => Architecture::Llama,
            "gemma3" => Architecture::Gemma3,
            other => return Err(ModelError::UnsupportedArchitecture(other.to_string())),
        };
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
        let freq_scale = rope_freq_scale(&m)?;
        let rms_norm_eps = m.f32("attention.layer_norm_rms_epsilon")?;
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

        let rope = |base: f32, freq_scale: f32, style| RopeConfig {
            style,
            n_rot,
            base,
            freq_scale,
        };
        let (activation, embedding_scale, attention_scale, layers) = match architecture {
            Architecture::Llama => {
                let layer = LayerConfig { sliding_window: None, rope: rope(rope_base, freq_scale, RopeStyle::Normal) };
                (Activation::Silu, 1.0, 1.0 / (head_dim as f32).sqrt(), vec![layer; block_count])
            }
            Architecture::Gemma3 => {
                // Gemma 3 interleaves 5 sliding-window ("local") layers with 1 global
                // layer; local layers use θ = 10,000 without scaling, global ones the
                // file's base and scaling.
                let window = m.usize("attention.sliding_window")?;
                let pattern = m.opt_usize("attention.sliding_window_pattern")?.unwrap_or(6).max(1);
                let layers = (0..block_count)
                    .map(|i| {
                        if (i + 1) % pattern == 0 {
                            LayerConfig { sliding_window: None, rope: rope(rope_base, freq_scale, RopeStyle::Neox) }
                        } else {
                            LayerConfig { sliding_window: Some(window), rope: rope(10_000.0, 1.0, RopeStyle::Neox) }
                        }
                    })
                    .collect();
                (
                    Activation::GeluTanh,
                    (embedding_length as f32).sqrt(),
                    1.0 / (head_dim as f32).sqrt(),
                    layers,
                )
            }
        };

        Ok(ModelConfig {
            architecture,
            name: md.get_str("general.name").unwrap_or(arch_name).to_string(),
            vocab_size,
            embedding_length,
            block_count,
            feed_forward_length,
            head_count,
            head_count_kv,
            head_dim,
            value_head_dim,
            context_length,
            rms_norm_eps,
            activation,
            embedding_scale,
            attention_scale,
            final_logit_softcap: m.opt_f32("final_logit_softcapping")?.filter(|c| *c > 0.0),
            layers,
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

/// `1 / factor` for linear RoPE scaling; 1.0 when none. Other scaling kinds are refused
/// rather than silently run wrong.
fn rope_freq_scale(m: &Keys) -> Result<f32> {
    let kind = m.opt_str("rope.scaling.type")?;
    let factor = m.opt_f32("rope.scaling.factor")?;
    match (kind, factor) {
        (None | Some("none"), None) => Ok(1.0),
        (None | Some("linear"), Some(f)) if f > 0.0 => Ok(1.0 / f),
        (Some("none"), Some(_)) => Ok(1.0),
        (Some(k), _) => Err(m.bad("rope.scaling.type", format!("RoPE scaling '{k}' is not supported (linear is)"))),
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
                .ok_or_else(|| self.bad(key, format!("expected a non-negative integer, found {}", v.type_name()))),
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
                _ => Err(self.bad(key, format!("expected a finite number, found {}", v.type_name()))),
            },
        }
    }

    fn f32(&self, key: &str) -> Result<f32> {
        self.opt_f32(key)?.ok_or_else(|| ModelError::MissingMetadata(self.full(key)))
    }

    fn opt_str(&self, key: &str) -> Result<Option<&str>> {
        match self.md.get(&self.full(key)) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| self.bad(key, format!("expected a string, found {}", v.type_name()))),
        }
    }
}
