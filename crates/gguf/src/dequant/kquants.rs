//! The K-quant super-block types (256 values): Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K.
//!
//! Layouts and formulas are ggml's (`block_q*_K`, `dequantize_row_q*_K`); the arithmetic
//! is done in f32 in ggml's order without fused multiply-add, matching PyPI `gguf` bit for
//! bit. Each function walks the block the way ggml does, in 128- or 64-value chunks, so a
//! SIMD or WGSL kernel can follow the same index arithmetic.

use super::float::f16_to_f32;
use crate::types::QK_K;

/// Q2_K, 84 bytes; 16 groups of 16 values, each with a 4-bit scale and 4-bit min:
/// ```text
/// [0..16)   scales  byte g: scale (low nibble) | min (high nibble) of group g
/// [16..80)  qs      2-bit values: value 128h + 32j + l (h<2, j<4, l<32) is
///                   (qs[32h + l] >> 2j) & 3
/// [80..82)  d       f16 super-scale of the scales
/// [82..84)  dmin    f16 super-scale of the mins
/// y = (d * scale_g) * q - (dmin * min_g),  g = value index / 16
/// ```
pub fn q2_k_block(b: &[u8; 84], y: &mut [f32; QK_K]) {
    let (scales, qs) = (&b[0..16], &b[16..80]);
    let d = f16_to_f32(b[80], b[81]);
    let dmin = f16_to_f32(b[82], b[83]);
    for h in 0..2 {
        let q = &qs[32 * h..32 * h + 32];
        for j in 0..4 {
            let shift = 2 * j;
            for half in 0..2 {
                let sc = scales[8 * h + 2 * j + half];
                let dl = d * (sc & 0x0f) as f32;
                let ml = dmin * (sc >> 4) as f32;
                for l in 0..16 {
                    let i = 16 * half + l;
                    y[128 * h + 32 * j + i] = dl * ((q[i] >> shift) & 3) as f32 - ml;
                }
            }
        }
    }
}

/// The sixteen 6-bit signed scales of a Q3_K block, from its 12 packed bytes:
/// scale g = (low 4 bits: nibble g/8 of byte g%8) | (high 2 bits: bits 2(g/4).. of byte
/// 8 + g%4), minus 32.
pub fn q3_k_scales(s: &[u8]) -> [i32; 16] {
    let mut out = [0i32; 16];
    for (g, o) in out.iter_mut().enumerate() {
        let lo = (s[g % 8] >> (4 * (g / 8))) & 0x0f;
        let hi = (s[8 + g % 4] >> (2 * (g / 4))) & 0x03;
        *o = (lo | (hi << 4)) as i32 - 32;
    }
    out
}

/// Q3_K, 110 bytes; 16 groups of 16 values with 6-bit signed scales:
/// ```text
/// [0..32)    hmask   high bit: bit (4h + j) of hmask[l] belongs to value 128h + 32j + l
/// [32..96)   qs      low 2 bits: value 128h + 32j + l is (qs[32h + l] >> 2j) & 3
/// [96..108)  scales  12 bytes of packed 6-bit scales (see `q3_k_scales`)
/// [108..110) d       f16
/// q = low2 - (high bit set ? 0 : 4);  y = (d * scale_g) * q
/// ```
pub fn q3_k_block(b: &[u8; 110], y: &mut [f32; QK_K]) {
    let (hmask, qs) = (&b[0..32], &b[32..96]);
    let scales = q3_k_scales(&b[96..108]);
    let d = f16_to_f32(b[108], b[109]);
    for h in 0..2 {
        let q = &qs[32 * h..32 * h + 32];
        for j in 0..4 {
            let shift = 2 * j;
            let bit = 4 * h + j;
            for half in 0..2 {
                let dl = d * scales[8 * h + 2 * j + half] as f32;
                for l in 0..16 {
                    let i = 16 * half + l;
                    let lo = ((q[i] >> shift) & 3) as i32;
                    let sub = if (hmask[i] >> bit) & 1 == 1 { 0 } else { 4 };
                    y[128 * h + 32 * j + i] = dl * (lo - sub) as f32;
                }
            }
        }
    }
}

/// Scale and min of 32-value group `j` (0..8) of a Q4_K/Q5_K block, from its 12 packed
/// bytes (ggml's `get_scale_min_k4`): groups 0..4 keep 6 bits in bytes j and j+4;
/// groups 4..8 take 4 bits from byte j+4 and their top 2 bits from bytes j-4 / j.
pub fn k4_scale_min(s: &[u8], j: usize) -> (u8, u8) {
    if j < 4 {
        (s[j] & 63, s[j + 4] & 63)
    } else {
        ((s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4))
    }
}

/// Q4_K, 144 bytes; 8 groups of 32 values with 6-bit scales and mins:
/// ```text
/// [0..2)     d       f16 super-scale of the scales
/// [2..4)     dmin    f16 super-scale of the mins
/// [4..16)    scales  12 bytes of packed 6-bit scales/mins (see `k4_scale_min`)
/// [16..144)  qs      4-bit values: chunk c (64 values) uses qs[32c..32c+32]:
///                    value 64c + l = low nibble (group 2c), 64c + 32 + l = high (2c+1)
/// y = (d * scale_g) * q - (dmin * min_g)
/// ```
pub fn q4_k_block(b: &[u8; 144], y: &mut [f32; QK_K]) {
    let d = f16_to_f32(b[0], b[1]);
    let dmin = f16_to_f32(b[2], b[3]);
    let (scales, qs) = (&b[4..16], &b[16..144]);
    for c in 0..4 {
        let (sc1, m1) = k4_scale_min(scales, 2 * c);
        let (sc2, m2) = k4_scale_min(scales, 2 * c + 1);
        let (d1, m1) = (d * sc1 as f32, dmin * m1 as f32);
        let (d2, m2) = (d * sc2 as f32, dmin * m2 as f32);
        let q = &qs[32 * c..32 * c + 32];
        for l in 0..32 {
            y[64 * c + l] = d1 * (q[l] & 0x0f) as f32 - m1;
            y[64 * c + 32 + l] = d2 * (q[l] >> 4) as f32 - m2;
        }
    }
}

/// Q5_K, 176 bytes; as Q4_K plus a fifth bit per value:
/// ```text
/// [0..2)     d       f16
/// [2..4)     dmin    f16
/// [4..16)    scales  12 bytes of packed 6-bit scales/mins (see `k4_scale_min`)
/// [16..48)   qh      5th bit: bit g of qh[l] belongs to value 32g + l (group g)
/// [48..176)  qs      low 4 bits, as Q4_K
/// y = (d * scale_g) * q - (dmin * min_g)
/// ```
pub fn q5_k_block(b: &[u8; 176], y: &mut [f32; QK_K]) {
    let d = f16_to_f32(b[0], b[1]);
    let dmin = f16_to_f32(b[2], b[3]);
    let (scales, qh, qs) = (&b[4..16], &b[16..48], &b[48..176]);
    for c in 0..4 {
        let (sc1, m1) = k4_scale_min(scales, 2 * c);
        let (sc2, m2) = k4_scale_min(scales, 2 * c + 1);
        let (d1, m1) = (d * sc1 as f32, dmin * m1 as f32);
        let (d2, m2) = (d * sc2 as f32, dmin * m2 as f32);
        let q = &qs[32 * c..32 * c + 32];
        for l in 0..32 {
            let lo = (q[l] & 0x0f) | (((qh[l] >> (2 * c)) & 1) << 4);
            let hi = (q[l] >> 4) | (((qh[l] >> (2 * c + 1)) & 1) << 4);
            y[64 * c + l] = d1 * lo as f32 - m1;
            y[64 * c + 32 + l] = d2 * hi as f32 - m2;
        }
    }
}

/// Q6_K, 210 bytes; 16 groups of 16 values with 8-bit signed scales:
/// ```text
/// [0..128)    ql      low 4 bits: half h (128 values) uses ql[64h..64h+64]:
///                     value 128h + l      = low nibble of ql[64h + l]       (l < 64)
///                     value 128h + 64 + l = high nibble of ql[64h + l]
/// [128..192)  qh      high 2 bits: value 128h + 32s + l = (qh[32h + l] >> 2s) & 3
/// [192..208)  scales  16 x i8, one per 16 values
/// [208..210)  d       f16
/// y = (d * scale_g) * (q - 32)
/// ```
pub fn q6_k_block(b: &[u8; 210], y: &mut [f32; QK_K]) {
    let d = f16_to_f32(b[208], b[209]);
    for h in 0..2 {
        let ql = &b[64 * h..64 * h + 64];
        let qh = &b[128 + 32 * h..128 + 32 * h + 32];
        let sc = &b[192 + 8 * h..192 + 8 * h + 8];
        let out = &mut y[128 * h..128 * h + 128];
        for l in 0..32 {
            let is = l / 16;
            let q1 = ((ql[l] & 0x0f) | ((qh[l] & 3) << 4)) as i32 - 32;
            let q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
            let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
            let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
            out[l] = d * (sc[is] as i8) as f32 * q1 as f32;
            out[l + 32] = d * (sc[is + 2] as i8) as f32 * q2 as f32;
            out[l + 64] = d * (sc[is + 4] as i8) as f32 * q3 as f32;
            out[l + 96] = d * (sc[is + 6] as i8) as f32 * q4 as f32;
        }
    }
}

/// Q8_K, 292 bytes (used for activations in ggml's dot products):
/// ```text
/// [0..4)      d      f32 (not f16)
/// [4..260)    qs     256 x i8
/// [260..292)  bsums  16 x i16, sums of groups of 16 (not needed to dequantize)
/// y = d * q
/// ```
pub fn q8_k_block(b: &[u8; 292], y: &mut [f32; QK_K]) {
    let d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    for (i, y) in y.iter_mut().enumerate() {
        *y = d * (b[4 + i] as i8) as f32;
    }
}
