//! The 32-value block types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (ggml's `block_q*_0/1`).
//!
//! Every block starts with f16 scale(s); the arithmetic is done in f32 in exactly ggml's
//! order (`q * d`, or `q * d + m` for the `_1` types, without fused multiply-add), so
//! results match `ggml`'s reference `dequantize_row_*` and PyPI `gguf` bit for bit.

use super::float::f16_to_f32;

/// Values per block.
pub const QK: usize = 32;

/// Q4_0, 18 bytes:
/// ```text
/// [0..2)   d   f16
/// [2..18)  qs  16 bytes: byte j = value j (low nibble) | value j+16 (high nibble)
/// y[i] = (q[i] - 8) * d
/// ```
#[inline]
pub fn q4_0_block(b: &[u8; 18], y: &mut [f32; QK]) {
    let d = f16_to_f32(b[0], b[1]);
    for j in 0..16 {
        let q = b[2 + j];
        y[j] = ((q & 0x0f) as i32 - 8) as f32 * d;
        y[j + 16] = ((q >> 4) as i32 - 8) as f32 * d;
    }
}

/// Q4_1, 20 bytes:
/// ```text
/// [0..2)   d   f16
/// [2..4)   m   f16 (the block minimum)
/// [4..20)  qs  16 bytes: byte j = value j (low nibble) | value j+16 (high nibble)
/// y[i] = q[i] * d + m
/// ```
#[inline]
pub fn q4_1_block(b: &[u8; 20], y: &mut [f32; QK]) {
    let d = f16_to_f32(b[0], b[1]);
    let m = f16_to_f32(b[2], b[3]);
    for j in 0..16 {
        let q = b[4 + j];
        y[j] = (q & 0x0f) as f32 * d + m;
        y[j + 16] = (q >> 4) as f32 * d + m;
    }
}

/// Q5_0, 22 bytes:
/// ```text
/// [0..2)   d   f16
/// [2..6)   qh  u32 little-endian: bit i = 5th bit of value i
/// [6..22)  qs  16 bytes: low 4 bits, byte j = value j (low nibble) | value j+16 (high)
/// y[i] = ((lo4 | hbit << 4) - 16) * d
/// ```
#[inline]
pub fn q5_0_block(b: &[u8; 22], y: &mut [f32; QK]) {
    let d = f16_to_f32(b[0], b[1]);
    let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
    for j in 0..16 {
        let q = b[6 + j];
        y[j] = (((q & 0x0f) | fifth(qh, j)) as i32 - 16) as f32 * d;
        y[j + 16] = (((q >> 4) | fifth(qh, j + 16)) as i32 - 16) as f32 * d;
    }
}

/// 16 where bit `i` of `qh` is set (the fifth bit of value `i`), else 0. Through a
/// table of the bits rather than `qh >> i`: a loop over `i` then vectorises with
/// SIMD128 and SSE2, which shift all lanes by one amount only.
#[inline(always)]
fn fifth(qh: u32, i: usize) -> u8 {
    const BIT: [u32; 32] = {
        let mut t = [0u32; 32];
        let mut i = 0;
        while i < 32 {
            t[i] = 1 << i;
            i += 1;
        }
        t
    };
    if qh & BIT[i] != 0 {
        16
    } else {
        0
    }
}

/// Q5_1, 24 bytes:
/// ```text
/// [0..2)   d   f16
/// [2..4)   m   f16
/// [4..8)   qh  u32 little-endian: bit i = 5th bit of value i
/// [8..24)  qs  16 bytes: low 4 bits, byte j = value j (low nibble) | value j+16 (high)
/// y[i] = (lo4 | hbit << 4) * d + m
/// ```
#[inline]
pub fn q5_1_block(b: &[u8; 24], y: &mut [f32; QK]) {
    let d = f16_to_f32(b[0], b[1]);
    let m = f16_to_f32(b[2], b[3]);
    let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    for j in 0..16 {
        let q = b[8 + j];
        y[j] = ((q & 0x0f) | fifth(qh, j)) as f32 * d + m;
        y[j + 16] = ((q >> 4) | fifth(qh, j + 16)) as f32 * d + m;
    }
}

/// Q8_0, 34 bytes:
/// ```text
/// [0..2)   d   f16
/// [2..34)  qs  32 x i8
/// y[i] = q[i] * d
/// ```
#[inline]
pub fn q8_0_block(b: &[u8; 34], y: &mut [f32; QK]) {
    let d = f16_to_f32(b[0], b[1]);
    for j in 0..QK {
        y[j] = (b[2 + j] as i8) as f32 * d;
    }
}
