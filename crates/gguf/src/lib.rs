//! The GGUF file format: header, metadata, tensor table, block layouts and
//! dequantization. No I/O and no GPU: bytes in, typed values out.

mod types;
mod value;

pub use types::{GgmlType, QK_K};
pub use value::{Array, Metadata, Value};
