//! Little-endian reads from a byte slice, and bounded growth of the vectors that
//! metadata arrays are read into.

use crate::value::{Array, Value, ValueType};

pub(crate) fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The `N` bytes at `inp[at..]` (the caller has checked they are there).
pub(crate) fn bytes<const N: usize>(inp: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&inp[at..at + N]);
    a
}

pub(crate) fn read_u32(inp: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes(inp, at))
}

pub(crate) fn read_u64(inp: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes(inp, at))
}

/// A scalar value of type `ty` at the start of `inp` (checked to be long enough).
pub(crate) fn read_scalar(ty: ValueType, inp: &[u8]) -> Value {
    match ty {
        ValueType::U8 => Value::U8(inp[0]),
        ValueType::I8 => Value::I8(inp[0] as i8),
        ValueType::Bool => Value::Bool(inp[0] != 0),
        ValueType::U16 => Value::U16(u16::from_le_bytes(bytes(inp, 0))),
        ValueType::I16 => Value::I16(i16::from_le_bytes(bytes(inp, 0))),
        ValueType::U32 => Value::U32(u32::from_le_bytes(bytes(inp, 0))),
        ValueType::I32 => Value::I32(i32::from_le_bytes(bytes(inp, 0))),
        ValueType::F32 => Value::F32(f32::from_le_bytes(bytes(inp, 0))),
        ValueType::U64 => Value::U64(u64::from_le_bytes(bytes(inp, 0))),
        ValueType::I64 => Value::I64(i64::from_le_bytes(bytes(inp, 0))),
        ValueType::F64 => Value::F64(f64::from_le_bytes(bytes(inp, 0))),
        // Not scalars; never called with these.
        ValueType::String | ValueType::Array => Value::U8(0),
    }
}

/// Makes room for `k` more elements: at least doubling (amortised O(1) pushes), but never
/// past the declared count, so capacity stays within twice what has actually arrived.
pub(crate) fn grow<T>(v: &mut Vec<T>, k: usize, declared_remaining: u64) {
    if v.capacity() - v.len() >= k {
        return;
    }
    let extra = k.max(v.len()).max(16).min(to_usize(declared_remaining)).max(k);
    v.reserve_exact(extra);
}

/// Appends the little-endian scalars in `raw` (whole elements) to `arr`.
pub(crate) fn read_scalars(arr: &mut Array, raw: &[u8], remaining: u64) {
    macro_rules! ext {
        ($v:expr, $t:ty) => {{
            const N: usize = std::mem::size_of::<$t>();
            grow($v, raw.len() / N, remaining);
            $v.extend(raw.chunks_exact(N).map(|c| <$t>::from_le_bytes(bytes(c, 0))));
        }};
    }
    match arr {
        Array::U8(v) => {
            grow(v, raw.len(), remaining);
            v.extend_from_slice(raw);
        }
        Array::Bool(v) => {
            grow(v, raw.len(), remaining);
            v.extend(raw.iter().map(|&b| b != 0));
        }
        Array::I8(v) => ext!(v, i8),
        Array::U16(v) => ext!(v, u16),
        Array::I16(v) => ext!(v, i16),
        Array::U32(v) => ext!(v, u32),
        Array::I32(v) => ext!(v, i32),
        Array::F32(v) => ext!(v, f32),
        Array::U64(v) => ext!(v, u64),
        Array::I64(v) => ext!(v, i64),
        Array::F64(v) => ext!(v, f64),
        Array::String(_) | Array::Array(_) => {}
    }
}
