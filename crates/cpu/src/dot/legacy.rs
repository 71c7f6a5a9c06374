//! The 32-value block types (layouts: `kindling_gguf::dequant::legacy`). Each kernel
//! unpacks its block's codes into 16-bit lanes once, then for every activation row
//! adds `d · Σ q·x` (exact integer sum against the row's planes, times the block
//! scales) and, for the `_1` types, `m · Σ x`. Codes of the `_0` types are made signed
//! in the byte domain (exact) before widening.

use super::isa::Isa;
use super::simd::{f16, B16, F4};
use super::{Acc, Block};

type Legacy<'a, const G: usize, const R: usize> = Block<'a, 0, G, 64, 1, R>;

/// Low nibbles are values 0..16, high nibbles values 16..32.
#[inline(always)]
fn nibbles(b: &[u8], at: usize) -> (B16, B16) {
    let q = B16::load(b, at);
    (q.and(B16::splat(0x0f)), q.shr(4))
}

/// The fifth bits of a `Q5` block, the little-endian u32 at byte `at`.
#[inline(always)]
fn high_bits<const B: usize>(b: &[u8; B], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Adds `d · Σ q·x` for every row.
#[inline(always)]
fn scaled<I: Isa, const G: usize, const R: usize>(q: I::Codes32, d: f32, x: &Legacy<G, R>, acc: &mut [Acc; R]) {
    for ((a, p), s) in acc.iter_mut().zip(x.planes).zip(x.scales) {
        let f = I::int_dot32(q, p, 0);
        a.v = a.v.add(f.mul(F4::splat(d * s[0])));
    }
}

/// Adds the block minimum's term `m · Σ x` for every row.
#[inline(always)]
fn minimum<const R: usize>(m: f32, x: &Legacy<1, R>, acc: &mut [Acc; R]) {
    for (a, s) in acc.iter_mut().zip(x.sums) {
        a.s += m * s[0];
    }
}

#[inline(always)]
pub fn q4_0<I: Isa, const R: usize>(b: &[u8; 18], x: &Legacy<0, R>, acc: &mut [Acc; R]) {
    let (lo, hi) = nibbles(b, 2);
    let eight = B16::splat(8);
    scaled::<I, _, R>(I::codes32(lo.sub(eight), hi.sub(eight), true), f16(b[0], b[1]), x, acc);
}

#[inline(always)]
pub fn q4_1<I: Isa, const R: usize>(b: &[u8; 20], x: &Legacy<1, R>, acc: &mut [Acc; R]) {
    let (lo, hi) = nibbles(b, 4);
    scaled::<I, _, R>(I::codes32(lo, hi, false), f16(b[0], b[1]), x, acc);
    minimum(f16(b[2], b[3]), x, acc);
}

#[inline(always)]
pub fn q5_0<I: Isa, const R: usize>(b: &[u8; 22], x: &Legacy<0, R>, acc: &mut [Acc; R]) {
    let (lo, hi) = nibbles(b, 6);
    let (h0, h1) = I::fifth_bits(high_bits(b, 2));
    let sixteen = B16::splat(16);
    scaled::<I, _, R>(I::codes32(lo.or(h0).sub(sixteen), hi.or(h1).sub(sixteen), true), f16(b[0], b[1]), x, acc);
}

#[inline(always)]
pub fn q5_1<I: Isa, const R: usize>(b: &[u8; 24], x: &Legacy<1, R>, acc: &mut [Acc; R]) {
    let (lo, hi) = nibbles(b, 8);
    let (h0, h1) = I::fifth_bits(high_bits(b, 4));
    scaled::<I, _, R>(I::codes32(lo.or(h0), hi.or(h1), false), f16(b[0], b[1]), x, acc);
    minimum(f16(b[2], b[3]), x, acc);
}

#[inline(always)]
pub fn q8_0<I: Isa, const R: usize>(b: &[u8; 34], x: &Legacy<0, R>, acc: &mut [Acc; R]) {
    scaled::<I, _, R>(I::codes32(B16::load(b, 2), B16::load(b, 18), true), f16(b[0], b[1]), x, acc);
}
