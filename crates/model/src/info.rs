//! `ModelInfo`: the facts about a loaded model a person wants to see.

use kindling_gguf::Header;

use crate::config::ModelConfig;
use crate::embed::ModelKind;

#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    pub architecture: String,
    /// Generates text (decoder) or embeds it (encoder).
    pub kind: ModelKind,
    pub name: String,
    /// Total number of weight values in the file.
    pub parameters: u64,
    /// The file's quantization as its converter named it (`general.file_type`, e.g.
    /// "Q4_K_M"), else the dominant weight type by bytes of 2-D tensors (e.g. "Q4_1").
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
        let dominant = by_type.iter().max_by_key(|(_, n)| *n).map_or("F32", |(ty, _)| ty.name());
        let named = header.metadata.get_u64("general.file_type").and_then(file_type_name);
        let quantization = named.unwrap_or(dominant).to_string();
        ModelInfo {
            architecture: cfg.architecture.name().to_string(),
            kind: cfg.kind,
            name: cfg.name.clone(),
            parameters: header.tensors.iter().map(|t| t.n_elems).sum(),
            quantization,
            context_length: cfg.context_length,
            data_bytes: header.data_size(),
        }
    }
}

/// llama.cpp's names of its `general.file_type` values (the mixes its quantizer makes:
/// a Q4_K_M file also holds Q6_K, Q5_0 and Q8_0 tensors).
fn file_type_name(id: u64) -> Option<&'static str> {
    Some(match id {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        32 => "BF16",
        _ => return None,
    })
}
