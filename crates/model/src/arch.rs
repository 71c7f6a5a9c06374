//! One description per architecture: everything that differs between the families we
//! run, in one table. `ModelConfig::from_metadata` resolves a description against a
//! file's metadata, `weights::plan` reads its tensor layout, and the forward pass its
//! block options; nothing else branches on the architecture.
//!
//! Adding an architecture whose block is the pre-norm decoder (`forward/decoder.rs`) is
//! a new entry in `ARCHITECTURES`; a different block is a new `Block` variant with its
//! own forward file.

use crate::config::{Activation, RopeStyle};

/// The architecture families we run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Architecture {
    /// Llama-style decoders: SmolLM2, TinyLlama, Llama 2 and Llama 3.x (with
    /// `rope_freqs` scaling and tied embeddings).
    Llama,
    /// Qwen2 / Qwen2.5: biases on the q/k/v projections.
    Qwen2,
    /// Qwen3: per-head q/k RMS norms, no biases.
    Qwen3,
    /// Phi-3 / Phi-3.5: fused q/k/v and gate/up tensors, LongRoPE factors.
    Phi3,
    /// Gemma 2: post-norms, attention-logit and final-logit soft-capping, sliding
    /// window on alternate layers.
    Gemma2,
    /// Gemma 3 (text): q/k norms, post-norms, 5 sliding-window layers to 1 global.
    Gemma3,
    /// Nomic Embed (`nomic-bert`): a BERT encoder with fused q/k/v, rotary positions
    /// and a SwiGLU feed-forward, no biases but the LayerNorms'.
    NomicBert,
    /// Classic BERT (`bert`): learned absolute positions, q/k/v and output biases,
    /// a GELU feed-forward with biases.
    Bert,
}

impl Architecture {
    /// The description of this architecture.
    pub fn spec(self) -> &'static ArchSpec {
        // Every variant has exactly one entry (checked by a test).
        ARCHITECTURES.iter().find(|s| s.arch == self).unwrap_or(&ARCHITECTURES[0])
    }

    /// The `general.architecture` value.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The description named by a `general.architecture` value.
    pub fn from_name(name: &str) -> Option<&'static ArchSpec> {
        ARCHITECTURES.iter().find(|s| s.name == name)
    }

    /// Every supported `general.architecture` value, for error messages.
    pub fn supported() -> String {
        ARCHITECTURES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
    }
}

/// Which forward file runs the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// `x += post(attn(norm(x))); x += post(ffn(norm(x)))` (`forward/decoder.rs`): the
    /// optional pieces (biases, q/k norms, post-norms, softcaps) come from the
    /// description and the weights.
    PreNorm,
    /// BERT's post-norm encoder block (`forward/encoder.rs`): the embeddings plus token
    /// type (and learned positions) are LayerNormed, then per layer
    /// `x = LN(x + attn(x)); x = LN(x + ffn(x))`, attention not causal. The model
    /// embeds text (`Model::embed`); it does not generate.
    Encoder,
}

/// Where a model's positions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Positions {
    /// RoPE on q and k, in the description's `rope_style`.
    Rotary,
    /// A learned table `position_embd` `[context, d_model]` added to the embeddings
    /// (BERT).
    Learned,
}

/// How a group of projections is stored in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// One tensor each (`attn_q`, `attn_k`, `attn_v`; `ffn_gate`, `ffn_up`).
    Separate,
    /// One tensor whose rows are the projections one after another (`attn_qkv`: q, k,
    /// v rows; `ffn_up`: gate rows, then up rows). The loader splits it by rows into
    /// the separate weights as the bytes arrive: nothing is copied.
    Fused,
}

/// Whether an optional tensor group is part of the architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    Absent,
    /// Must be in the file: a missing one is an error naming it.
    Required,
}

/// RoPE frequency factors (`n_rot / 2` values dividing each pair's frequency).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopeFactors {
    None,
    /// Llama 3.x scaling: the converter bakes the `llama3` formula into an optional
    /// `rope_freqs.weight`.
    Freqs,
    /// Phi-3 LongRoPE: optional `rope_factors_short` / `rope_factors_long`; the long
    /// ones apply when a session holds more than `rope.scaling.original_context_length`
    /// positions (as llama.cpp chooses by its context size), and
    /// `rope.scaling.attn_factor` scales cos/sin.
    LongRope,
}

/// Layers with a sliding attention window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Windows {
    None,
    /// `attention.sliding_window` positions on every layer except each
    /// `attention.sliding_window_pattern`-th (default `default_pattern`), which is
    /// global. Local layers may use their own RoPE base.
    Pattern {
        default_pattern: usize,
        local_rope_base: Option<f32>,
    },
}

/// What the embedding rows are multiplied by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbeddingScale {
    One,
    /// sqrt(d_model) (Gemma).
    SqrtWidth,
}

/// One architecture's description.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArchSpec {
    pub arch: Architecture,
    /// `general.architecture`, also the prefix of its metadata keys.
    pub name: &'static str,
    pub block: Block,
    pub rope_style: RopeStyle,
    pub activation: Activation,
    pub embedding_scale: EmbeddingScale,
    /// `attn_q` / `attn_k` / `attn_v` or `attn_qkv`.
    pub qkv: Storage,
    /// `ffn_gate` / `ffn_up` or gate and up in `ffn_up`.
    pub gate_up: Storage,
    /// `attn_q.bias`, `attn_k.bias`, `attn_v.bias`.
    pub qkv_bias: Presence,
    /// Per-head `attn_q_norm` / `attn_k_norm` (before RoPE).
    pub qk_norm: Presence,
    /// `post_attention_norm` / `post_ffw_norm` on the block outputs.
    pub post_norms: Presence,
    /// Reads `attn_logit_softcapping` and `final_logit_softcapping`.
    pub softcaps: bool,
    pub windows: Windows,
    pub rope_factors: RopeFactors,
    pub positions: Positions,
    /// `ffn_gate`: a gated feed-forward `down(act(gate(x)) * up(x))`; absent, the
    /// plain `down(act(up(x)))` (BERT).
    pub ffn_gate: Presence,
    /// Biases on `attn_output`, `ffn_up` and `ffn_down` (BERT).
    pub out_biases: Presence,
}

const LLAMA: ArchSpec = ArchSpec {
    arch: Architecture::Llama,
    name: "llama",
    block: Block::PreNorm,
    // GGUF llama q/k weights were permuted by the converter for this pairing.
    rope_style: RopeStyle::Normal,
    activation: Activation::Silu,
    embedding_scale: EmbeddingScale::One,
    qkv: Storage::Separate,
    gate_up: Storage::Separate,
    qkv_bias: Presence::Absent,
    qk_norm: Presence::Absent,
    post_norms: Presence::Absent,
    softcaps: false,
    windows: Windows::None,
    rope_factors: RopeFactors::Freqs,
    positions: Positions::Rotary,
    ffn_gate: Presence::Required,
    out_biases: Presence::Absent,
};

/// Every architecture we run.
pub const ARCHITECTURES: &[ArchSpec] = &[
    LLAMA,
    ArchSpec {
        arch: Architecture::Qwen2,
        name: "qwen2",
        rope_style: RopeStyle::Neox,
        qkv_bias: Presence::Required,
        rope_factors: RopeFactors::None,
        ..LLAMA
    },
    ArchSpec {
        arch: Architecture::Qwen3,
        name: "qwen3",
        rope_style: RopeStyle::Neox,
        qk_norm: Presence::Required,
        rope_factors: RopeFactors::None,
        ..LLAMA
    },
    ArchSpec {
        arch: Architecture::Phi3,
        name: "phi3",
        rope_style: RopeStyle::Neox,
        qkv: Storage::Fused,
        gate_up: Storage::Fused,
        rope_factors: RopeFactors::LongRope,
        ..LLAMA
    },
    ArchSpec {
        arch: Architecture::Gemma2,
        name: "gemma2",
        rope_style: RopeStyle::Neox,
        activation: Activation::GeluTanh,
        embedding_scale: EmbeddingScale::SqrtWidth,
        post_norms: Presence::Required,
        softcaps: true,
        // Even layers are local (llama.cpp and transformers alike).
        windows: Windows::Pattern { default_pattern: 2, local_rope_base: None },
        rope_factors: RopeFactors::None,
        ..LLAMA
    },
    ArchSpec {
        arch: Architecture::Gemma3,
        name: "gemma3",
        rope_style: RopeStyle::Neox,
        activation: Activation::GeluTanh,
        embedding_scale: EmbeddingScale::SqrtWidth,
        qk_norm: Presence::Required,
        post_norms: Presence::Required,
        // Local layers use θ = 10,000 without scaling; global ones the file's base.
        windows: Windows::Pattern { default_pattern: 6, local_rope_base: Some(10_000.0) },
        rope_factors: RopeFactors::None,
        ..LLAMA
    },
    // Encoders: LayerNorms with biases (`attention.layer_norm_epsilon`), token types,
    // pooling from `pooling_type` (llama.cpp's `build_bert`).
    ArchSpec {
        arch: Architecture::NomicBert,
        name: "nomic-bert",
        block: Block::Encoder,
        rope_style: RopeStyle::Neox,
        qkv: Storage::Fused,
        rope_factors: RopeFactors::None,
        ..LLAMA
    },
    ArchSpec {
        arch: Architecture::Bert,
        name: "bert",
        block: Block::Encoder,
        rope_style: RopeStyle::Neox,
        // llama.cpp runs BERT's GELU with the tanh approximation (ggml_gelu).
        activation: Activation::GeluTanh,
        qkv_bias: Presence::Required,
        rope_factors: RopeFactors::None,
        positions: Positions::Learned,
        ffn_gate: Presence::Absent,
        out_biases: Presence::Required,
        ..LLAMA
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_architecture_has_one_distinct_entry() {
        let all = [
            Architecture::Llama,
            Architecture::Qwen2,
            Architecture::Qwen3,
            Architecture::Phi3,
            Architecture::Gemma2,
            Architecture::Gemma3,
            Architecture::NomicBert,
            Architecture::Bert,
        ];
        assert_eq!(ARCHITECTURES.len(), all.len());
        for a in all {
            assert_eq!(ARCHITECTURES.iter().filter(|s| s.arch == a).count(), 1, "{a:?}");
            assert_eq!(a.spec().arch, a);
            assert_eq!(Architecture::from_name(a.name()).map(|s| s.arch), Some(a));
        }
    }
}
