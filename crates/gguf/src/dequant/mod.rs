//! Dequantization of every supported ggml type to f32: the reference every kernel is
//! tested against. `legacy` holds the 32-value block types, `kquants` the 256-value
//! super-block types, `float` F32/F16/BF16; each block function documents its layout.

pub mod float;
pub mod kquants;
pub mod legacy;

use crate::error::GgufError;
use crate::header::TensorInfo;
use crate::types::GgmlType;

/// Dequantizes whole blocks of `ty` from `bytes` into `out`
/// (`out.len()` = number of blocks × `ty.block_elems()`).
pub fn dequantize(ty: GgmlType, bytes: &[u8], out: &mut [f32]) -> Result<(), GgufError> {
    let (bb, be) = (ty.block_bytes(), ty.block_elems());
    if bytes.len() % bb != 0 || out.len() / be != bytes.len() / bb || out.len() % be != 0 {
        return Err(GgufError::DequantSize { ty, bytes: bytes.len(), out: out.len() });
    }
    match ty {
        GgmlType::F32 => float::f32_row(bytes, out),
        GgmlType::F16 => float::f16_row(bytes, out),
        GgmlType::BF16 => float::bf16_row(bytes, out),
        GgmlType::Q4_0 => blocks(bytes, out, legacy::q4_0_block),
        GgmlType::Q4_1 => blocks(bytes, out, legacy::q4_1_block),
        GgmlType::Q5_0 => blocks(bytes, out, legacy::q5_0_block),
        GgmlType::Q5_1 => blocks(bytes, out, legacy::q5_1_block),
        GgmlType::Q8_0 => blocks(bytes, out, legacy::q8_0_block),
        GgmlType::Q2K => blocks(bytes, out, kquants::q2_k_block),
        GgmlType::Q3K => blocks(bytes, out, kquants::q3_k_block),
        GgmlType::Q4K => blocks(bytes, out, kquants::q4_k_block),
        GgmlType::Q5K => blocks(bytes, out, kquants::q5_k_block),
        GgmlType::Q6K => blocks(bytes, out, kquants::q6_k_block),
        GgmlType::Q8K => blocks(bytes, out, kquants::q8_k_block),
    }
    Ok(())
}

/// Dequantizes row `row` of a tensor whose data (`tensor.n_bytes` bytes, or at least the
/// rows up to `row`) is `data` into `out` (`out.len()` = `tensor.row_len()`). The row a
/// matvec kernel needs, without dequantizing the rest.
pub fn dequantize_row(tensor: &TensorInfo, data: &[u8], row: u64, out: &mut [f32]) -> Result<(), GgufError> {
    let row_bytes = tensor.row_bytes();
    let range = row
        .checked_mul(row_bytes)
        .and_then(|start| Some(start..start.checked_add(row_bytes)?))
        .filter(|r| row < tensor.n_rows() && r.end <= data.len() as u64);
    let Some(range) = range else {
        return Err(GgufError::RowOutOfRange {
            tensor: tensor.name.clone(),
            row,
            n_rows: tensor.n_rows(),
            data_len: data.len(),
        });
    };
    dequantize(tensor.ty, &data[range.start as usize..range.end as usize], out)
}

/// Runs a block function over every block (the lengths are checked by the caller). The
/// function is a type parameter, not a pointer, so that it is inlined into the loop
/// (the CPU's prefill panels dequantize every weight once per matmul).
#[inline(always)]
fn blocks<const B: usize, const E: usize>(bytes: &[u8], out: &mut [f32], f: impl Fn(&[u8; B], &mut [f32; E])) {
    for (b, y) in bytes.chunks_exact(B).zip(out.chunks_exact_mut(E)) {
        if let (Ok(b), Ok(y)) = (<&[u8; B]>::try_from(b), <&mut [f32; E]>::try_from(y)) {
            f(b, y);
        }
    }
}
