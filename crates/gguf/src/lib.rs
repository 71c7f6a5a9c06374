//! The GGUF file format: header, metadata, tensor table, block layouts and
//! dequantization. No I/O and no GPU: bytes in, typed values out.
//!
//! - [`parse_header`] reads a whole file; [`HeaderParser`] reads one chunk at a time and
//!   says how many more bytes it needs.
//! - [`dequantize`] / [`dequantize_row`] turn any supported type into f32 (the reference
//!   the kernels are tested against); [`dequant`] has the per-block functions.
//! - [`writer::GgufWriter`] builds files in memory for tests.

pub mod dequant;
mod error;
mod header;
mod limits;
mod parser;
mod primitives;
mod tensors;
mod types;
mod value;
pub mod writer;

pub use dequant::{dequantize, dequantize_row};
pub use error::{GgufError, Section};
pub use header::{Header, TensorInfo, DEFAULT_ALIGNMENT};
pub use limits::Limits;
pub use parser::{parse_header, parse_header_with_limits, HeaderParser, Progress};
pub use types::{GgmlType, QK_K};
pub use value::{Array, Metadata, Value, ValueType};
