//! A small in-memory GGUF writer, for tests, fuzz seeds and synthetic models.
//!
//! ```
//! use kindling_gguf::{writer::GgufWriter, GgmlType, Value, parse_header};
//! let mut w = GgufWriter::new(3);
//! w.add_kv("general.architecture", Value::String("llama".into()));
//! w.add_tensor("x", &[4, 2], GgmlType::F32, &[0u8; 32]).unwrap();
//! let bytes = w.to_bytes();
//! let header = parse_header(&bytes).unwrap();
//! assert_eq!(header.tensors[0].dims, [4, 2]);
//! ```
//!
//! Besides well-formed files it can write deliberately broken ones: raw key/value bytes,
//! tensor infos with any type id, dims and offset, and no data.

use crate::error::GgufError;
use crate::header::DEFAULT_ALIGNMENT;
use crate::types::GgmlType;
use crate::value::{Array, Value};

enum Kv {
    Typed(String, Value),
    /// Key bytes, then value type id + value bytes as given.
    Raw(Vec<u8>, Vec<u8>),
}

struct Tensor {
    name: Vec<u8>,
    dims: Vec<u64>,
    type_id: u32,
    /// `None`: placed after the previous tensor, aligned.
    offset: Option<u64>,
    data: Vec<u8>,
}

/// Builds a GGUF file in memory.
pub struct GgufWriter {
    version: u32,
    kvs: Vec<Kv>,
    tensors: Vec<Tensor>,
}

impl GgufWriter {
    /// A writer for GGUF `version` (written as given: 2 and 3 are the valid ones).
    pub fn new(version: u32) -> Self {
        GgufWriter { version, kvs: Vec::new(), tensors: Vec::new() }
    }

    /// Adds a key/value pair of any type (arrays of arrays included).
    pub fn add_kv(&mut self, key: impl Into<String>, value: Value) -> &mut Self {
        self.kvs.push(Kv::Typed(key.into(), value));
        self
    }

    /// Adds a key/value pair from raw bytes: the key's bytes (any, even invalid UTF-8) and
    /// everything after the key (u32 value type id, then the value) verbatim.
    pub fn add_raw_kv(&mut self, key: &[u8], type_and_value: &[u8]) -> &mut Self {
        self.kvs.push(Kv::Raw(key.to_vec(), type_and_value.to_vec()));
        self
    }

    /// Sets `general.alignment` (as u32, as GGUF requires).
    pub fn alignment(&mut self, alignment: u32) -> &mut Self {
        self.add_kv("general.alignment", Value::U32(alignment))
    }

    /// Adds a tensor with its data; `data` must be exactly the tensor's size.
    pub fn add_tensor(&mut self, name: &str, dims: &[u64], ty: GgmlType, data: &[u8]) -> Result<&mut Self, GgufError> {
        let n = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        let size = n.and_then(|n| ty.bytes_for(n));
        if size != Some(data.len() as u64) {
            return Err(GgufError::TensorDataSize {
                tensor: name.to_owned(),
                expected: size,
                found: data.len() as u64,
            });
        }
        self.tensors.push(Tensor {
            name: name.as_bytes().to_vec(),
            dims: dims.to_vec(),
            type_id: ty.id(),
            offset: None,
            data: data.to_vec(),
        });
        Ok(self)
    }

    /// Adds a tensor info exactly as given (any name bytes, dims, type id and offset
    /// relative to the data section) with no data: for writing invalid files.
    pub fn add_raw_tensor_info(&mut self, name: &[u8], dims: &[u64], type_id: u32, offset: u64) -> &mut Self {
        self.tensors.push(Tensor {
            name: name.to_vec(),
            dims: dims.to_vec(),
            type_id,
            offset: Some(offset),
            data: Vec::new(),
        });
        self
    }

    /// The alignment the data section will use: the last `general.alignment` u32 added if
    /// it is a nonzero power of two, else 32.
    pub fn data_alignment(&self) -> u64 {
        self.kvs
            .iter()
            .rev()
            .find_map(|kv| match kv {
                Kv::Typed(k, Value::U32(a)) if k == "general.alignment" && a.is_power_of_two() => Some(u64::from(*a)),
                _ => None,
            })
            .unwrap_or(DEFAULT_ALIGNMENT)
    }

    /// The file: header, tensor table, padding, and each tensor's data at its offset.
    pub fn to_bytes(&self) -> Vec<u8> {
        let align = self.data_alignment();
        // Place the tensors that have data and no explicit offset one after the other.
        let mut next = 0u64;
        let offsets: Vec<u64> = self
            .tensors
            .iter()
            .map(|t| match t.offset {
                Some(o) => o,
                None => {
                    let o = next.div_ceil(align) * align;
                    next = o + t.data.len() as u64;
                    o
                }
            })
            .collect();

        let mut out = Vec::new();
        out.extend_from_slice(b"GGUF");
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.kvs.len() as u64).to_le_bytes());
        for kv in &self.kvs {
            match kv {
                Kv::Typed(k, v) => {
                    put_str(&mut out, k.as_bytes());
                    out.extend_from_slice(&v.value_type().id().to_le_bytes());
                    put_value(&mut out, v);
                }
                Kv::Raw(k, rest) => {
                    put_str(&mut out, k);
                    out.extend_from_slice(rest);
                }
            }
        }
        for (t, offset) in self.tensors.iter().zip(&offsets) {
            put_str(&mut out, &t.name);
            out.extend_from_slice(&(t.dims.len() as u32).to_le_bytes());
            for d in &t.dims {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(&t.type_id.to_le_bytes());
            out.extend_from_slice(&offset.to_le_bytes());
        }
        let data_offset = (out.len() as u64).div_ceil(align) * align;
        out.resize(data_offset as usize, 0);
        for (t, offset) in self.tensors.iter().zip(&offsets) {
            if t.data.is_empty() {
                continue;
            }
            let start = (data_offset + offset) as usize;
            let end = start + t.data.len();
            if out.len() < end {
                out.resize(end, 0);
            }
            out[start..end].copy_from_slice(&t.data);
        }
        out
    }
}

fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s);
}

/// Writes a value's payload (its type id is written by the caller).
fn put_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::U8(x) => out.push(*x),
        Value::I8(x) => out.push(*x as u8),
        Value::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::Bool(x) => out.push(u8::from(*x)),
        Value::String(s) => put_str(out, s.as_bytes()),
        Value::Array(a) => put_array(out, a),
    }
}

/// Writes an array: element type id, count, elements.
fn put_array(out: &mut Vec<u8>, a: &Array) {
    out.extend_from_slice(&a.element_type().id().to_le_bytes());
    out.extend_from_slice(&(a.len() as u64).to_le_bytes());
    macro_rules! le {
        ($v:expr) => {
            for x in $v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        };
    }
    match a {
        Array::U8(v) => out.extend_from_slice(v),
        Array::I8(v) => le!(v),
        Array::U16(v) => le!(v),
        Array::I16(v) => le!(v),
        Array::U32(v) => le!(v),
        Array::I32(v) => le!(v),
        Array::U64(v) => le!(v),
        Array::I64(v) => le!(v),
        Array::F32(v) => le!(v),
        Array::F64(v) => le!(v),
        Array::Bool(v) => out.extend(v.iter().map(|&b| u8::from(b))),
        Array::String(v) => {
            for s in v {
                put_str(out, s.as_bytes());
            }
        }
        Array::Array(v) => {
            for inner in v {
                put_array(out, inner);
            }
        }
    }
}
