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
use super::Lanes;

/// Values per activation block (and per integer group of every kernel using planes).
pub const BLOCK: usize = 32;

/// Writes `x`'s planes (`planes.len() = planes_len(x.len())`, in the order of
/// [`plane_at`]) and block scales `2^-k` (`scales.len() = x.len() / 32`). A block holding
/// inf or NaN gets a NaN scale (its dot products become NaN, as the f32 ones would
/// be, or inf); an all-zero block a zero scale. Blocks whose largest magnitude is
/// below 2^-120 are scaled as if it were 2^-120 (their products vanish in f32 anyway).
///
/// All in f32, so the compiler keeps 4 or 8 values a step in vector lanes (SSE2,
/// SIMD128, AVX2): a decode step prepares every matmul's input on one thread while the
/// others wait, and value by value in f64 this took 2 µs for SmolLM2's 1,536-wide
/// feed-forward row. The integers are those of `round(x · 2^k)` taken in f64
/// (`tests::planes_match_their_f64_definition`): scaling by a power of two is exact
/// wherever the product can round to a nonzero integer, and so is the fraction that
/// decides the rounding.
pub fn x_planes(x: &[f32], planes: &mut [i16], scales: &mut [f32]) {
    // SAFETY: `best` returns only lanes this CPU supports.
    unsafe { planes_unchecked(Lanes::best(), x, planes, scales) }
}

/// [`x_planes`] on the given lanes (the base lanes if this CPU lacks them), as
/// `dot_rows_on` for the kernels: the same integers on every width.
#[cfg(test)]
pub fn x_planes_on(lanes: Lanes, x: &[f32], planes: &mut [i16], scales: &mut [f32]) {
    let lanes = if lanes.supported() { lanes } else { Lanes::Base };
    // SAFETY: checked just above.
    unsafe { planes_unchecked(lanes, x, planes, scales) }
}

/// [`x_planes`] compiled for `lanes`: AVX2 takes eight values a step, a quarter of
/// SSE2's time.
///
/// SAFETY: the CPU must support `lanes` ([`Lanes::supported`]).
#[inline(always)]
unsafe fn planes_unchecked(lanes: Lanes, x: &[f32], planes: &mut [i16], scales: &mut [f32]) {
    match lanes {
        #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
        Lanes::Avx2 | Lanes::Avx2Vnni => {
            #[target_feature(enable = "avx2")]
            unsafe fn wide(x: &[f32], planes: &mut [i16], scales: &mut [f32]) {
                planes_of(x, planes, scales)
            }
            // SAFETY: the caller's promise; both lanes have AVX2.
            unsafe { wide(x, planes, scales) }
        }
        _ => planes_of(x, planes, scales),
    }
}

#[inline(always)]
fn planes_of(x: &[f32], planes: &mut [i16], scales: &mut [f32]) {
    let blocks = scales.len().min(x.len() / BLOCK);
    if planes.len() < planes_len(blocks * BLOCK) {
        return;
    }
    if blocks % 2 == 1 {
        // A last block alone: its pair's other half stays zero.
        planes[planes_len(blocks * BLOCK) - 128..].fill(0);
    }
    for (b, (xb, s)) in x.chunks_exact(BLOCK).zip(scales.iter_mut()).enumerate() {
        let (mut hi, mut lo) = ([0i16; BLOCK], [0i16; BLOCK]);
        // The largest magnitude's bits: magnitudes order as their bits do, and inf and
        // every NaN lie above the finite ones.
        let max = xb.iter().fold(0i32, |m, v| m.max((v.to_bits() & 0x7fff_ffff) as i32));
        if max == 0 || max >= 0x7f80_0000 {
            *s = if max == 0 { 0.0 } else { f32::NAN };
        } else {
            // floor(log2(max)) from the exponent bits; a subnormal maximum (field 0) is
            // below 2^-120 and clamped like any other.
            let e = ((max >> 23) - 127).max(-120);
            // max · 2^k < 2^30; k in -98..=149. 2^k goes in two exact factors, each a
            // normal f32 (2^149 is not one).
            let k = 29 - e;
            let (up_a, up_b) = (pow2(k / 2), pow2(k - k / 2));
            // The block's values in its planes' run order (the evens of 0..16, the odds,
            // then those of 16..32), so the runs are written as they come.
            let mut xr = [0.0f32; BLOCK];
            for (k, v) in xr.iter_mut().enumerate() {
                *v = xb[16 * (k / 16) + 2 * (k % 8) + (k / 8) % 2];
            }
            for i in 0..BLOCK {
                let y = xr[i] * up_a * up_b;
                // SAFETY: y is finite and below 2^30 in magnitude (the block has no inf
                // or NaN, and k is chosen for that), so it truncates to an i32 exactly.
                // (`as` would add a saturating check per value that keeps the loop out
                // of vector lanes.)
                let t = unsafe { y.to_int_unchecked::<i32>() };
                let frac = y - t as f32; // exact: y and t share their high bits
                let q = t + (frac >= 0.5) as i32 - (frac <= -0.5) as i32;
                hi[i] = (q >> 15) as i16;
                lo[i] = (q & 0x7fff) as i16;
            }
            *s = pow2(-k);
        }
        let pair = &mut planes[128 * (b / 2)..128 * (b / 2) + 128];
        if let Ok(pair) = <&mut [i16; 128]>::try_from(pair) {
            place(pair, b % 2, &hi, &lo);
        }
    }
}

/// A block's high and low planes, in their run order, written to their places in its
/// pair (`r`: 0 for A, 1 for B; [`plane_at`]): four runs of eight a plane, B's eight
/// values after A's. (Value by value through `plane_at`, the planes took four times as
/// long.)
#[inline(always)]
fn place(pair: &mut [i16; 128], r: usize, hi: &[i16; BLOCK], lo: &[i16; BLOCK]) {
    let r = 8 * (r & 1);
    for (plane, v) in [(0, hi), (64, lo)] {
        for run in 0..4 {
            let at = plane + r + 16 * run;
            pair[at..at + 8].copy_from_slice(&v[8 * run..8 * run + 8]);
        }
    }
}

/// 2^n for n in -149..=127, exactly (a subnormal below 2^-126), from its bits: no call
/// to `powi` per block.
#[inline(always)]
fn pow2(n: i32) -> f32 {
    if n >= -126 {
        f32::from_bits(((127 + n) as u32) << 23)
    } else {
        f32::from_bits(1 << (n + 149))
    }
}

/// Plane values a row of `cols` activations takes: 128 for each pair of blocks (a
/// last block alone takes a pair's room).
pub const fn planes_len(cols: usize) -> usize {
    128 * (cols / BLOCK).div_ceil(2)
}

/// Where value `i` of block `b` sits in a row's planes (its high plane's value; the
/// low plane's is 64 further). Blocks go in pairs, 128 values a pair, high plane then
/// low; within a plane, runs of eight: A's even values of 0..16, B's, A's odd values of
/// 0..16, B's, then the same of values 16..32. So each 256-bit load holds the same
/// values of both blocks of a pair, in the order that codes split into even and odd
/// bytes (masks and shifts, no shuffles) come in, and the wide lanes multiply and add
/// a pair without moving a value across lanes.
// The layout's definition: `place` writes it run by run, and the tests hold the planes
// to it value by value.
#[cfg_attr(not(test), allow(dead_code))]
pub const fn plane_at(b: usize, i: usize) -> usize {
    128 * (b / 2) + 8 * (b % 2) + 16 * (2 * (i / 16) + i % 2) + (i % 16) / 2
}

/// One group's `Σ q·x` in units of its block scale, four lanes: `q` holds its even and
/// odd codes of values 0..16, then of 16..32 (`B16::split16_u`), and its planes' runs
/// are `p[at + 16k..at + 16k + 8]` for k in 0..4, the low plane's 64 further.
#[inline(always)]
pub fn group_dot(q: [I16x8; 4], p: &[i16], at: usize) -> F4 {
    let (h, l) = (plane_sum(q, p, at), plane_sum(q, p, at + 64));
    h.to_f32().mul(F4::splat(32768.0)).add(l.to_f32())
}

/// Σ q·plane of one group, as four exact i32 lanes.
#[inline(always)]
fn plane_sum(q: [I16x8; 4], p: &[i16], at: usize) -> I32x4 {
    let m0 = q[0].madd(I16x8::load(p, at));
    let m1 = q[1].madd(I16x8::load(p, at + 16));
    let m2 = q[2].madd(I16x8::load(p, at + 32));
    let m3 = q[3].madd(I16x8::load(p, at + 48));
    m0.add(m1).add(m2.add(m3))
}
