//! The pieces of work every quantized kernel shares, behind one trait so the kernels
//! are written once and compiled once per lane width ([`super::Lanes`]):
//! - 32 codes times an activation block's integer planes (`xplanes`), used by every
//!   32-value-group type (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q8_K);
//! - 16 codes widened to f32 times 16 activations (Q2_K, Q3_K, Q6_K);
//! - eight halves widened to f32 (F16 rows);
//! - 32 float weights times 32 activations (F32, F16, BF16 rows).
//!
//! Every implementation returns the same four f32 lanes, each from the same f32
//! operations in the same order (the integer sums are exact whatever their order), so
//! a wider implementation gives the same bits as [`Base`]
//! (`tests::every_lane_width_gives_the_same_bits`).

use super::simd::{dot4, dot8, f16, I16x8, B16, F4};
use super::xplanes;

pub trait Isa {
    /// 32 codes unpacked for [`Isa::int_dot32`] (once per group, shared by the rows).
    type Codes32: Copy;
    /// 16 codes widened to f32 for [`Isa::dot16`].
    type Codes16: Copy;
    /// Codes of values 0..16 (`lo`) and 16..32 (`hi`), as signed or unsigned bytes.
    fn codes32(lo: B16, hi: B16, signed: bool) -> Self::Codes32;
    /// `Σ q·x` over one 32-value group in units of its block scale, `p[at..at + 64]`
    /// the block's planes (`xplanes::int_dot32`).
    fn int_dot32(q: Self::Codes32, p: &[i16], at: usize) -> F4;
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
    type Codes32 = [I16x8; 4];
    type Codes16 = [F4; 4];

    #[inline(always)]
    fn codes32(lo: B16, hi: B16, signed: bool) -> [I16x8; 4] {
        let w = |b: B16| if signed { b.widen16_i() } else { b.widen16_u() };
        let ([a, b], [c, d]) = (w(lo), w(hi));
        [a, b, c, d]
    }

    #[inline(always)]
    fn int_dot32(q: [I16x8; 4], p: &[i16], at: usize) -> F4 {
        xplanes::int_dot32(q, p, at)
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
