//! The parsed header: metadata plus the tensor table.
//!
//! The parser guarantees the sums below do not overflow; they saturate anyway, so a
//! hand-built `TensorInfo` cannot make them panic.

use std::ops::Range;

use crate::types::GgmlType;
use crate::value::Metadata;

/// The alignment of tensor data when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// One entry of the tensor table, validated: nonzero dims, a supported type, a row
/// length that is a whole number of blocks, an aligned offset and a size that fits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    /// ggml order: `dims[0]` is the row length (ne0), the fastest-varying dimension.
    pub dims: Vec<u64>,
    pub ty: GgmlType,
    /// Start of the data, relative to the start of the data section.
    pub offset: u64,
    /// Product of the dims.
    pub n_elems: u64,
    /// Bytes of data (`ty.bytes_for(n_elems)`).
    pub n_bytes: u64,
}

impl TensorInfo {
    /// Values per row (`dims[0]`; 1 for a zero-dimensional tensor).
    pub fn row_len(&self) -> u64 {
        self.dims.first().copied().unwrap_or(1)
    }

    /// Number of rows (product of `dims[1..]`).
    pub fn n_rows(&self) -> u64 {
        self.n_elems / self.row_len().max(1)
    }

    /// Bytes per row.
    pub fn row_bytes(&self) -> u64 {
        self.n_bytes / self.n_rows().max(1)
    }

    /// The data's byte range relative to the data section.
    pub fn data_range(&self) -> Range<u64> {
        self.offset..self.offset.saturating_add(self.n_bytes)
    }
}

/// A parsed and validated GGUF header.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// 2 or 3.
    pub version: u32,
    pub metadata: Metadata,
    /// In file order.
    pub tensors: Vec<TensorInfo>,
    /// `general.alignment`, or 32.
    pub alignment: u64,
    /// Absolute file offset of the data section: the end of the tensor table rounded up
    /// to `alignment`.
    pub data_offset: u64,
}

impl Header {
    /// The tensor called `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// End of the last tensor's data, relative to the data section (0 without tensors).
    pub fn data_size(&self) -> u64 {
        self.tensors.iter().map(|t| t.data_range().end).max().unwrap_or(0)
    }

    /// The smallest file that holds the header and every tensor.
    pub fn file_size_needed(&self) -> u64 {
        self.data_offset.saturating_add(self.data_size())
    }

    /// Absolute file byte range of a tensor's data.
    pub fn tensor_file_range(&self, t: &TensorInfo) -> Range<u64> {
        let r = t.data_range();
        self.data_offset.saturating_add(r.start)..self.data_offset.saturating_add(r.end)
    }
}
