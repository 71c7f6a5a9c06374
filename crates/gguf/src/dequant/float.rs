//! Float "block" types: one value per block.

/// An IEEE half (`f16`) stored little-endian, widened exactly to f32.
#[inline]
pub fn f16_to_f32(lo: u8, hi: u8) -> f32 {
    half::f16::from_bits(u16::from_le_bytes([lo, hi])).to_f32()
}

/// A bfloat16 stored little-endian: the top 16 bits of an f32.
#[inline]
pub fn bf16_to_f32(lo: u8, hi: u8) -> f32 {
    f32::from_bits(u32::from(u16::from_le_bytes([lo, hi])) << 16)
}

/// F32: 4 bytes little-endian per value.
pub fn f32_row(bytes: &[u8], y: &mut [f32]) {
    for (c, y) in bytes.chunks_exact(4).zip(y.iter_mut()) {
        *y = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
}

/// F16: 2 bytes little-endian per value.
pub fn f16_row(bytes: &[u8], y: &mut [f32]) {
    for (c, y) in bytes.chunks_exact(2).zip(y.iter_mut()) {
        *y = f16_to_f32(c[0], c[1]);
    }
}

/// BF16: 2 bytes little-endian per value, the high half of an f32.
pub fn bf16_row(bytes: &[u8], y: &mut [f32]) {
    for (c, y) in bytes.chunks_exact(2).zip(y.iter_mut()) {
        *y = bf16_to_f32(c[0], c[1]);
    }
}
