//! Activations as exact integer planes, for the kernels of the 32-value-group types.
//!
//! Multiplying a code by an f32 activation costs a widen, a convert, a multiply and an
//! add per value; multiplying it by a 16-bit integer is one `i32x4.dot_i16x8_s` per
//! eight values, exact. So each 32-value block of an activation row is written once
//! (per matmul, shared by every weight row) as `x ≈ (H·2^15 + L)·2^-k` with `H` a
//! signed and `L` an unsigned 15-bit plane, `k` chosen so the block's largest
//! magnitude uses 30 bits. That is 30 bits of mantissa for the block maximum (f32 has
//! 24) and an absolute error of at most 2^-30 of the block maximum for every value:
//! the activations keep (more than) f32 precision; nothing like llama.cpp's 8-bit
//! activations. The code·plane sums are exact integers; only their conversion to f32
//! and the accumulation across groups round, as any f32 dot product does.

use super::simd::{I16x8, I32x4, F4};

/// Values per activation block (and per integer group of every kernel using planes).
pub const BLOCK: usize = 32;

/// Writes `x`'s planes (`planes.len() = 2 · x.len()`: per block 32 high values, then
/// 32 low) and block scales `2^-k` (`scales.len() = x.len() / 32`). A block holding
/// inf or NaN gets a NaN scale (its dot products become NaN, as the f32 ones would
/// be, or inf); an all-zero block a zero scale. Blocks whose largest magnitude is
/// below 2^-120 are scaled as if it were 2^-120 (their products vanish in f32 anyway).
pub fn x_planes(x: &[f32], planes: &mut [i16], scales: &mut [f32]) {
    for ((xb, pb), s) in x.chunks_exact(BLOCK).zip(planes.chunks_exact_mut(2 * BLOCK)).zip(scales.iter_mut()) {
        let max = xb.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        if xb.iter().any(|v| !v.is_finite()) || max == 0.0 {
            pb.fill(0);
            *s = if max == 0.0 { 0.0 } else { f32::NAN };
            continue;
        }
        // floor(log2(max)), exact from the f64 exponent (f32 subnormals are f64 normals).
        let e = (((max as f64).to_bits() >> 52) as i32 - 1023).max(-120);
        let k = 29 - e; // max · 2^k < 2^30
        let up = 2f64.powi(k);
        let (hi, lo) = pb.split_at_mut(BLOCK);
        for ((v, h), l) in xb.iter().zip(hi).zip(lo) {
            let q = round_half_away(*v as f64 * up);
            *h = (q >> 15) as i16;
            *l = (q & 0x7fff) as i16;
        }
        *s = 2f64.powi(-k) as f32;
    }
}

/// `y.round()` for a `y` of at most 24 significant bits below 2^30 in magnitude (an f32
/// times a power of two), without the call to libm's `round` that baseline x86_64 (no
/// SSE4.1 `roundsd`) makes per value. Exact: `y ± 0.5` needs at most 32 of f64's 53 bits
/// for `|y| ≥ 0.5`, and below that stays under 1 whatever it rounds to, so truncating it
/// rounds halves away from zero as `round` does (`tests::planes_round_as_libm_does`).
#[inline(always)]
pub(super) fn round_half_away(y: f64) -> i64 {
    (y + 0.5f64.copysign(y)) as i64
}

/// `Σ q·x` over one 32-value group in units of its block scale: `q` holds the 32
/// codes as 16-bit lanes, `p[at..at + 64]` the block's planes.
#[inline(always)]
pub fn int_dot32(q: [I16x8; 4], p: &[i16], at: usize) -> F4 {
    let (h, l) = (plane_dot(q, p, at), plane_dot(q, p, at + BLOCK));
    h.to_f32().mul(F4::splat(32768.0)).add(l.to_f32())
}

/// Σ q·plane over 32 values, as four exact i32 lanes.
#[inline(always)]
fn plane_dot(q: [I16x8; 4], p: &[i16], at: usize) -> I32x4 {
    let m0 = q[0].madd(I16x8::load(p, at));
    let m1 = q[1].madd(I16x8::load(p, at + 8));
    let m2 = q[2].madd(I16x8::load(p, at + 16));
    let m3 = q[3].madd(I16x8::load(p, at + 24));
    m0.add(m1).add(m2.add(m3))
}
