//! `ModelInfo`: the facts about a loaded model a person wants to see.

use kindling_gguf::Header;

use crate::config::ModelConfig;

#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    pub architecture: String,
    pub name: String,
    /// Total number of weight values in the file.
    pub parameters: u64,
    /// The dominant weight type, e.g. "Q4_1" or "Q4_K" (by bytes of 2-D tensors).
    pub quantization: String,
    pub context_length: usize,
    /// Bytes of tensor data.
    pub data_bytes: u64,
}

impl ModelInfo {
    pub fn from_header(header: &Header, cfg: &ModelConfig) -> ModelInfo {
        let mut by_type: Vec<(kindling_gguf::GgmlType, u64)> = Vec::new();
        for t in header.tensors.iter().filter(|t| t.dims.len() >= 2) {
            match by_type.iter_mut().find(|(ty, _)| *ty == t.ty) {
                Some((_, n)) => *n += t.n_bytes,
                None => by_type.push((t.ty, t.n_bytes)),
            }
        }
        let quantization = by_type.iter().max_by_key(|(_, n)| *n).map_or("F32", |(ty, _)| ty.name()).to_string();
        ModelInfo {
            architecture: cfg.architecture.name().to_string(),
            name: cfg.name.clone(),
            parameters: header.tensors.iter().map(|t| t.n_elems).sum(),
            quantization,
            context_length: cfg.context_length,
            data_bytes: header.data_size(),
        }
    }
}
