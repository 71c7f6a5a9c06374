//! Everything that can be wrong with a GGUF file, each error naming what and where.

use std::fmt;

use crate::types::GgmlType;
use crate::value::Value;

/// The part of the header the parser was reading when something went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Section {
    /// Magic, version and the two counts (the first 24 bytes).
    Preamble,
    /// Key/value pair `index` (0-based) of `count`; `key` once its key has been read.
    Metadata { index: u64, count: u64, key: Option<String> },
    /// Tensor info `index` (0-based) of `count`.
    TensorTable { index: u64, count: u64 },
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Section::Preamble => f.write_str("the header (magic, version and counts)"),
            Section::Metadata { index, count, key: None } => {
                write!(f, "the metadata (key/value {} of {count})", index + 1)
            }
            Section::Metadata { index, count, key: Some(k) } => {
                write!(f, "the metadata (key/value {} of {count}, key '{k}')", index + 1)
            }
            Section::TensorTable { index, count } => {
                write!(f, "the tensor table (tensor info {} of {count})", index + 1)
            }
        }
    }
}

/// Why a GGUF file (or a buffer handed to the dequantizer) was rejected.
///
/// Errors compare equal when they describe the same problem at the same place, so a
/// streamed parse and a whole-file parse of the same bytes can be checked to agree.
#[derive(Clone, Debug, PartialEq)]
pub enum GgufError {
    /// The input holds no bytes at all.
    Empty,
    /// The first bytes are not `GGUF` (`found` holds up to 4 bytes).
    BadMagic { found: Vec<u8> },
    /// A GGUF version other than 2 or 3.
    UnsupportedVersion { version: u32 },
    /// The input ends before the item being read; `offset` is where it ends and
    /// `need` how many more bytes are needed at least.
    Truncated { section: Section, offset: u64, need: u64 },
    /// The tensor count is above `Limits::max_tensors`.
    TooManyTensors { count: u64, limit: u64 },
    /// The key/value count is above `Limits::max_kv`.
    TooManyKeys { count: u64, limit: u64 },
    /// A string (key, value or tensor name) longer than `Limits::max_string_len`.
    StringTooLong { section: Section, len: u64, offset: u64, limit: u64 },
    /// An array with more elements than `Limits::max_array_len`.
    ArrayTooLong { key: String, len: u64, offset: u64, limit: u64 },
    /// Arrays nested deeper than `Limits::max_array_depth`.
    ArrayTooDeep { key: String, offset: u64, limit: u32 },
    /// A value type id GGUF does not define.
    UnknownValueType { key: String, id: u32, offset: u64 },
    /// A key, string value or tensor name that is not UTF-8.
    InvalidUtf8 { section: Section, offset: u64 },
    /// The same key appears twice.
    DuplicateKey { key: String },
    /// The same tensor name appears twice.
    DuplicateTensor { name: String },
    /// `general.alignment` is not a nonzero power-of-two u32.
    BadAlignment { found: Value },
    /// A tensor with more dimensions than `Limits::max_dims`.
    TooManyDims { tensor: String, n_dims: u32, limit: u32 },
    /// A tensor with a zero-sized dimension.
    ZeroDim { tensor: String, dims: Vec<u64> },
    /// The element count (product of the dims) does not fit in an i64, or the byte size
    /// or end offset overflows.
    ElementCountOverflow { tensor: String, dims: Vec<u64> },
    /// A ggml type this crate cannot read (`type_name` is ggml's name or "unknown").
    UnsupportedType { tensor: String, type_name: &'static str, id: u32 },
    /// A row length that is not a whole number of blocks of the tensor's type.
    RowNotBlockMultiple { tensor: String, row_len: u64, ty: GgmlType },
    /// A tensor offset that is not a multiple of the file's alignment.
    MisalignedOffset { tensor: String, offset: u64, alignment: u64 },
    /// A tensor whose data `[start, end)` (absolute file offsets) lies past the file end.
    TensorOutOfBounds { tensor: String, start: u64, end: u64, file_len: u64 },
    /// Two tensors whose data ranges (relative to the data section) overlap.
    Overlap { a: String, a_range: (u64, u64), b: String, b_range: (u64, u64) },
    /// `dequantize`: the input is not whole blocks, or the output length does not match.
    DequantSize { ty: GgmlType, bytes: usize, out: usize },
    /// `dequantize_row`: the row index or the tensor data size does not match the tensor.
    RowOutOfRange { tensor: String, row: u64, n_rows: u64, data_len: usize },
    /// `GgufWriter::add_tensor`: the data is not the tensor's size (`None`: it overflows).
    TensorDataSize { tensor: String, expected: Option<u64>, found: u64 },
    /// `HeaderParser::feed`/`finish` after the header was already returned.
    AlreadyDone,
}

impl GgufError {
    /// A short stable name of the variant (for tests, logs and JS error names).
    pub fn kind(&self) -> &'static str {
        match self {
            GgufError::Empty => "Empty",
            GgufError::BadMagic { .. } => "BadMagic",
            GgufError::UnsupportedVersion { .. } => "UnsupportedVersion",
            GgufError::Truncated { .. } => "Truncated",
            GgufError::TooManyTensors { .. } => "TooManyTensors",
            GgufError::TooManyKeys { .. } => "TooManyKeys",
            GgufError::StringTooLong { .. } => "StringTooLong",
            GgufError::ArrayTooLong { .. } => "ArrayTooLong",
            GgufError::ArrayTooDeep { .. } => "ArrayTooDeep",
            GgufError::UnknownValueType { .. } => "UnknownValueType",
            GgufError::InvalidUtf8 { .. } => "InvalidUtf8",
            GgufError::DuplicateKey { .. } => "DuplicateKey",
            GgufError::DuplicateTensor { .. } => "DuplicateTensor",
            GgufError::BadAlignment { .. } => "BadAlignment",
            GgufError::TooManyDims { .. } => "TooManyDims",
            GgufError::ZeroDim { .. } => "ZeroDim",
            GgufError::ElementCountOverflow { .. } => "ElementCountOverflow",
            GgufError::UnsupportedType { .. } => "UnsupportedType",
            GgufError::RowNotBlockMultiple { .. } => "RowNotBlockMultiple",
            GgufError::MisalignedOffset { .. } => "MisalignedOffset",
            GgufError::TensorOutOfBounds { .. } => "TensorOutOfBounds",
            GgufError::Overlap { .. } => "Overlap",
            GgufError::DequantSize { .. } => "DequantSize",
            GgufError::RowOutOfRange { .. } => "RowOutOfRange",
            GgufError::TensorDataSize { .. } => "TensorDataSize",
            GgufError::AlreadyDone => "AlreadyDone",
        }
    }
}

/// A guess at what a non-GGUF file is, from its first bytes.
fn guess_format(found: &[u8]) -> &'static str {
    const GUESSES: &[(&[u8], &str)] = &[
        (b"\x7fELF", "an ELF executable"),
        (b"\x89PNG", "a PNG image"),
        (b"PK\x03\x04", "a zip archive"),
        (b"\x1f\x8b", "a gzip archive"),
        (b"lmgg", "a pre-GGUF GGML file; convert it with llama.cpp"),
        (b"fmgg", "a pre-GGUF GGMF file; convert it with llama.cpp"),
        (b"tjgg", "a pre-GGUF GGJT file; convert it with llama.cpp"),
        (b"<", "HTML or XML text"),
        (b"{", "JSON text"),
    ];
    for (prefix, what) in GUESSES {
        if found.len() >= prefix.len().min(2) && found.starts_with(&prefix[..prefix.len().min(found.len())]) {
            return what;
        }
    }
    if !found.is_empty() && found.iter().all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace()) {
        return "text";
    }
    "not a GGUF file"
}

/// A value in a few characters, for messages.
struct Short<'a>(&'a Value);

impl fmt::Display for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::U8(v) => write!(f, "{v}"),
            Value::I8(v) => write!(f, "{v}"),
            Value::U16(v) => write!(f, "{v}"),
            Value::I16(v) => write!(f, "{v}"),
            Value::U32(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
            Value::U64(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::String(s) if s.chars().count() > 40 => {
                write!(f, "{:?}...", s.chars().take(40).collect::<String>())
            }
            Value::String(s) => write!(f, "{s:?}"),
            Value::Array(a) => write!(f, "(an array of {} {} values)", a.len(), a.type_name()),
        }
    }
}

impl fmt::Display for GgufError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GgufError::Empty => f.write_str("empty file: no bytes at all"),
            GgufError::BadMagic { found } => {
                f.write_str("bad magic: expected 'GGUF', found 0x")?;
                for b in found {
                    write!(f, "{b:02x}")?;
                }
                if found.len() < 4 {
                    write!(f, " (only {} bytes; {})", found.len(), guess_format(found))
                } else {
                    write!(f, " ({})", guess_format(found))
                }
            }
            GgufError::UnsupportedVersion { version: 1 } => f.write_str(
                "unsupported version 1: GGUF v1 used 32-bit counts; only versions 2 and 3 are \
                 supported (re-convert the model with a current llama.cpp)",
            ),
            GgufError::UnsupportedVersion { version } if (2..=3).contains(&version.swap_bytes()) => write!(
                f,
                "unsupported version {version}: this looks like a big-endian GGUF v{}; only \
                 little-endian files are supported",
                version.swap_bytes()
            ),
            GgufError::UnsupportedVersion { version } => {
                write!(f, "unsupported version {version}: only GGUF versions 2 and 3 are supported")
            }
            GgufError::Truncated { section, offset, need } => write!(
                f,
                "truncated: the file ends inside {section} (need at least {need} more bytes at offset {offset})"
            ),
            GgufError::TooManyTensors { count, limit } => {
                write!(f, "tensor count {count} exceeds the limit of {limit} (Limits::max_tensors)")
            }
            GgufError::TooManyKeys { count, limit } => {
                write!(f, "key/value count {count} exceeds the limit of {limit} (Limits::max_kv)")
            }
            GgufError::StringTooLong { section, len, offset, limit } => write!(
                f,
                "string length {len} at offset {offset} in {section} exceeds the limit of {limit} bytes \
                 (Limits::max_string_len)"
            ),
            GgufError::ArrayTooLong { key, len, offset, limit } => write!(
                f,
                "array length {len} at offset {offset} (key '{key}') exceeds the limit of {limit} elements \
                 (Limits::max_array_len)"
            ),
            GgufError::ArrayTooDeep { key, offset, limit } => write!(
                f,
                "arrays nested more than {limit} deep at offset {offset} (key '{key}', Limits::max_array_depth)"
            ),
            GgufError::UnknownValueType { key, id, offset } => {
                write!(f, "unknown metadata value type id {id} at offset {offset} (key '{key}')")
            }
            GgufError::InvalidUtf8 { section, offset } => {
                write!(f, "invalid UTF-8 in the string at offset {offset} in {section}")
            }
            GgufError::DuplicateKey { key } => write!(f, "duplicate metadata key '{key}'"),
            GgufError::DuplicateTensor { name } => write!(f, "duplicate tensor name '{name}'"),
            GgufError::BadAlignment { found } => write!(
                f,
                "general.alignment must be a nonzero power of two stored as u32, found {} {}",
                found.type_name(),
                Short(found)
            ),
            GgufError::TooManyDims { tensor, n_dims, limit } => {
                write!(f, "tensor '{tensor}' has {n_dims} dimensions; at most {limit} are allowed")
            }
            GgufError::ZeroDim { tensor, dims } => write!(f, "tensor '{tensor}' has a zero dimension: {dims:?}"),
            GgufError::ElementCountOverflow { tensor, dims } => {
                write!(f, "tensor '{tensor}' is too large: the element count or byte size of dims {dims:?} overflows")
            }
            GgufError::UnsupportedType { tensor, type_name: "unknown", id } => {
                write!(f, "tensor '{tensor}' has unknown type id {id}")
            }
            GgufError::UnsupportedType { tensor, type_name, id } => {
                write!(f, "tensor '{tensor}' has unsupported type {type_name} (id {id})")
            }
            GgufError::RowNotBlockMultiple { tensor, row_len, ty } => write!(
                f,
                "tensor '{tensor}' has row length {row_len}, not a multiple of the {ty} block size {}",
                ty.block_elems()
            ),
            GgufError::MisalignedOffset { tensor, offset, alignment } => {
                write!(f, "tensor '{tensor}' data offset {offset} is not a multiple of the alignment {alignment}")
            }
            GgufError::TensorOutOfBounds { tensor, start, end, file_len } => {
                write!(f, "tensor '{tensor}' data [{start}, {end}) lies outside the file ({file_len} bytes)")
            }
            GgufError::Overlap { a, a_range, b, b_range } => write!(
                f,
                "tensors '{a}' [{}, {}) and '{b}' [{}, {}) overlap (offsets relative to the data section)",
                a_range.0, a_range.1, b_range.0, b_range.1
            ),
            GgufError::DequantSize { ty, bytes, out } => write!(
                f,
                "cannot dequantize {bytes} bytes of {ty} into {out} values: {ty} blocks are {} bytes \
                 holding {} values",
                ty.block_bytes(),
                ty.block_elems()
            ),
            GgufError::RowOutOfRange { tensor, row, n_rows, data_len } => {
                write!(f, "row {row} of tensor '{tensor}' ({n_rows} rows) is not in the {data_len} bytes given")
            }
            GgufError::TensorDataSize { tensor, expected: Some(e), found } => {
                write!(f, "tensor '{tensor}' needs {e} bytes of data, got {found}")
            }
            GgufError::TensorDataSize { tensor, expected: None, found } => {
                write!(f, "tensor '{tensor}' has no valid size (overflow or rows not whole blocks), got {found} bytes")
            }
            GgufError::AlreadyDone => {
                f.write_str("the header parser already returned its header; it takes no more input")
            }
        }
    }
}

impl std::error::Error for GgufError {}
