//! The pieces of work every quantized kernel shares, behind one trait so the kernels
//! are written once and compiled once per lane width ([`super::Lanes`]):
//! - two groups of 32 codes times their activation blocks' integer planes (`xplanes`),
//!   used by every 32-value-group type (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K,
//!   Q8_K): four lanes a group, so that the wide lanes take a pair of groups a step and
//!   never add lanes across each other;
//! - 16 codes widened to f32 times 16 activations (Q2_K, Q3_K, Q6_K);
//! - eight halves widened to f32 (F16 rows);
//! - 32 float weights times 32 activations (F32, F16, BF16 rows).
//!
//! Every implementation returns the same f32 lanes, each from the same f32 operations
//! in the same order (the integer sums are exact whatever their order), so a wider
//! implementation gives the same bits as [`Base`]
//! (`tests::every_lane_width_gives_the_same_bits`).

use super::simd::{dot4, dot8, f16, I16x8, B16, F4};
use super::xplanes;

pub trait Isa {
    /// The codes of two 32-value groups, A and B, unpacked for [`Isa::pair_dot`] (once
    /// per pair, shared by the rows).
    type Codes2: Copy;
    /// 16 codes widened to f32 for [`Isa::dot16`].
    type Codes16: Copy;
    /// Codes of A's values 0..16 and 16..32, and of B's, as signed or unsigned bytes.
    fn codes2(a: (B16, B16), b: (B16, B16), signed: bool) -> Self::Codes2;
    /// Eight f32 lanes: four that belong to group A, four to B.
    type Lanes8: Copy;
    fn lanes8_zero() -> Self::Lanes8;
    /// `Σ q·x` of groups A and B in units of their block scales, four lanes each: lane
    /// k of a group is `f32(H)·2^15 + f32(L)` of the exact sums of its values 4k..4k + 4
    /// and 16 + 4k..20 + 4k with the high and low planes (`xplanes`: the pair's planes
    /// are `p[at..at + 128]`).
    fn pair_dot(q: Self::Codes2, p: &[i16], at: usize) -> Self::Lanes8;
    /// `[a ×4 | b ×4]`.
    fn splat2(a: f32, b: f32) -> Self::Lanes8;
    /// Two blocks' leading halves, widened exactly: `[da ×4 | db ×4]` of the halves at
    /// `a[0..2]` and `b[0..2]` (the scales), and those at `a[2..4]` and `b[2..4]` (the
    /// `_1` types' minima; either block holds at least 8 bytes).
    fn halves2(a: &[u8], b: &[u8]) -> (Self::Lanes8, [f32; 2]);
    /// `acc + g · (d · s)`, lane by lane.
    fn scaled_add(acc: Self::Lanes8, g: Self::Lanes8, d: Self::Lanes8, s: Self::Lanes8) -> Self::Lanes8;
    /// A's lanes plus B's.
    fn fold(v: Self::Lanes8) -> F4;
    fn codes16(q: B16, signed: bool) -> Self::Codes16;
    /// `0x10` in byte i of the first vector where bit i of `qh` is set, of the second
    /// where bit 16 + i is (a Q5 block's fifth bits, values 0..16 and 16..32).
    fn fifth_bits(qh: u32) -> (B16, B16);
    /// `Σ q·x[at..at + 16]` as [`dot4`] sums it: `(p0 + p1) + (p2 + p3)` of the four
    /// lane products.
    fn dot16(q: Self::Codes16, x: &[f32], at: usize) -> F4;
    /// The eight little-endian halves at byte `at` of `w`, widened exactly.
    fn halves8(w: &[u8], at: usize) -> [F4; 2];
    /// 32 float weights (values 4k..4k + 4 in `v[k]`) arranged for [`Isa::dot32`].
    type Floats32: Copy;
    fn floats32(v: [F4; 8]) -> Self::Floats32;
    /// `Σ w·x[at..at + 32]` as [`dot8`] sums it.
    fn dot32(w: Self::Floats32, x: &[f32], at: usize) -> F4;
}

/// The lanes compiled for every target (`simd::LANES`: SSE2, SIMD128 or portable).
pub struct Base;

impl Isa for Base {
    type Codes2 = [[I16x8; 4]; 2];
    type Codes16 = [F4; 4];

    #[inline(always)]
    fn codes2(a: (B16, B16), b: (B16, B16), signed: bool) -> [[I16x8; 4]; 2] {
        let w = |b: B16| if signed { b.split16_i() } else { b.split16_u() };
        let g = |(lo, hi): (B16, B16)| {
            let ([e0, o0], [e1, o1]) = (w(lo), w(hi));
            [e0, o0, e1, o1]
        };
        [g(a), g(b)]
    }

    type Lanes8 = [F4; 2];

    #[inline(always)]
    fn lanes8_zero() -> [F4; 2] {
        [F4::zero(); 2]
    }

    #[inline(always)]
    fn pair_dot(q: [[I16x8; 4]; 2], p: &[i16], at: usize) -> [F4; 2] {
        [xplanes::group_dot(q[0], p, at), xplanes::group_dot(q[1], p, at + 8)]
    }

    #[inline(always)]
    fn splat2(a: f32, b: f32) -> [F4; 2] {
        [F4::splat(a), F4::splat(b)]
    }

    #[inline(always)]
    fn halves2(a: &[u8], b: &[u8]) -> ([F4; 2], [f32; 2]) {
        let h = |v: &[u8], at: usize| f16(v.get(at).copied().unwrap_or(0), v.get(at + 1).copied().unwrap_or(0));
        (Self::splat2(h(a, 0), h(b, 0)), [h(a, 2), h(b, 2)])
    }

    #[inline(always)]
    fn scaled_add(acc: [F4; 2], g: [F4; 2], d: [F4; 2], s: [F4; 2]) -> [F4; 2] {
        [acc[0].add(g[0].mul(d[0].mul(s[0]))), acc[1].add(g[1].mul(d[1].mul(s[1])))]
    }

    #[inline(always)]
    fn fold(v: [F4; 2]) -> F4 {
        v[0].add(v[1])
    }

    #[inline(always)]
    fn codes16(q: B16, signed: bool) -> [F4; 4] {
        if signed {
            q.widen_i()
        } else {
            q.widen_u()
        }
    }

    #[inline(always)]
    fn dot16(q: [F4; 4], x: &[f32], at: usize) -> F4 {
        dot4(q, x, at)
    }

    #[inline(always)]
    fn fifth_bits(qh: u32) -> (B16, B16) {
        (B16::from_bits(qh as u16, 0x10), B16::from_bits((qh >> 16) as u16, 0x10))
    }

    #[inline(always)]
    fn halves8(w: &[u8], at: usize) -> [F4; 2] {
        let b = |i: usize| w.get(i).copied().unwrap_or(0);
        let h = |k: usize| f16(b(at + 2 * k), b(at + 2 * k + 1));
        [F4::new([h(0), h(1), h(2), h(3)]), F4::new([h(4), h(5), h(6), h(7)])]
    }

    type Floats32 = [F4; 8];

    #[inline(always)]
    fn floats32(v: [F4; 8]) -> [F4; 8] {
        v
    }

    #[inline(always)]
    fn dot32(w: [F4; 8], x: &[f32], at: usize) -> F4 {
        dot8([w[0], w[1], w[2], w[3]], [w[4], w[5], w[6], w[7]], x, at)
    }
}
