//! x86_64 AVX2 (+ F16C) lanes for the shared kernel pieces ([`Isa`]), used where the
//! CPU has them ([`super::Lanes`]). Twice the integer lanes per instruction: a pair of
//! 32-value groups goes through eight `vpmaddwd`, group A in the low 128 bits and B in
//! the high, and nothing crosses those halves until a row's end: the codes are split
//! into even and odd bytes by masks and shifts, and the scales are broadcast per half.
//! 16 codes widen to f32 in two `vpmovsxbd`/`vpmovzxbd`. The f32 arithmetic is the
//! SSE2 path's, lane for lane and in the same order (the integer sums are exact in any
//! order), so the results are bit-identical to it.
//!
//! With AVX-VNNI, `vpdpwssd` fuses the second multiply-add with its accumulate
//! (still exact: the sums stay far inside i32).
//!
//! SAFETY (every `unsafe` block): these functions are only reached from
//! `#[target_feature]` functions that `super::Lanes` calls after detecting AVX2, FMA
//! and F16C (and AVX-VNNI for `VNNI = true`); every load reads a range of a slice
//! checked to hold it.

use core::arch::x86_64::*;

use super::isa::Isa;
use super::simd::{B16, F4};

/// `VNNI`: use AVX-VNNI's fused multiply-add-accumulate.
pub struct Avx2<const VNNI: bool>;

impl<const VNNI: bool> Isa for Avx2<VNNI> {
    /// Even and odd codes of values 0..16, then of 16..32, as 16-bit lanes: group A's
    /// in the low 128 bits, B's in the high, as the planes hold them
    /// (`xplanes::plane_at`).
    type Codes2 = [__m256i; 4];
    /// Values 0..8 and 8..16 as f32 lanes.
    type Codes16 = [__m256; 2];

    #[inline(always)]
    fn codes2(a: (B16, B16), b: (B16, B16), signed: bool) -> [__m256i; 4] {
        unsafe {
            let lo = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(a.0 .0), b.0 .0);
            let hi = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(a.1 .0), b.1 .0);
            if signed {
                [
                    _mm256_srai_epi16::<8>(_mm256_slli_epi16::<8>(lo)),
                    _mm256_srai_epi16::<8>(lo),
                    _mm256_srai_epi16::<8>(_mm256_slli_epi16::<8>(hi)),
                    _mm256_srai_epi16::<8>(hi),
                ]
            } else {
                let m = _mm256_set1_epi16(0xff);
                [
                    _mm256_and_si256(lo, m),
                    _mm256_srli_epi16::<8>(lo),
                    _mm256_and_si256(hi, m),
                    _mm256_srli_epi16::<8>(hi),
                ]
            }
        }
    }

    type Lanes8 = __m256;

    #[inline(always)]
    fn lanes8_zero() -> __m256 {
        unsafe { _mm256_setzero_ps() }
    }

    #[inline(always)]
    fn pair_dot(q: [__m256i; 4], p: &[i16], at: usize) -> __m256 {
        let Some(p) = p.get(at..at + 128) else {
            return Self::lanes8_zero();
        };
        // No closures here: a closure is a function of its own, without the caller's
        // target features, so the intrinsics in it would not be inlined.
        unsafe {
            let at = p.as_ptr().cast::<__m256i>();
            let (h, l) = if VNNI {
                let h = _mm256_dpwssd_avx_epi32(
                    _mm256_madd_epi16(q[0], _mm256_loadu_si256(at)),
                    q[1],
                    _mm256_loadu_si256(at.add(1)),
                );
                let h = _mm256_dpwssd_avx_epi32(h, q[2], _mm256_loadu_si256(at.add(2)));
                let h = _mm256_dpwssd_avx_epi32(h, q[3], _mm256_loadu_si256(at.add(3)));
                let l = _mm256_dpwssd_avx_epi32(
                    _mm256_madd_epi16(q[0], _mm256_loadu_si256(at.add(4))),
                    q[1],
                    _mm256_loadu_si256(at.add(5)),
                );
                let l = _mm256_dpwssd_avx_epi32(l, q[2], _mm256_loadu_si256(at.add(6)));
                (h, _mm256_dpwssd_avx_epi32(l, q[3], _mm256_loadu_si256(at.add(7))))
            } else {
                let (h0, h1, h2, h3) = (
                    _mm256_madd_epi16(q[0], _mm256_loadu_si256(at)),
                    _mm256_madd_epi16(q[1], _mm256_loadu_si256(at.add(1))),
                    _mm256_madd_epi16(q[2], _mm256_loadu_si256(at.add(2))),
                    _mm256_madd_epi16(q[3], _mm256_loadu_si256(at.add(3))),
                );
                let (l0, l1, l2, l3) = (
                    _mm256_madd_epi16(q[0], _mm256_loadu_si256(at.add(4))),
                    _mm256_madd_epi16(q[1], _mm256_loadu_si256(at.add(5))),
                    _mm256_madd_epi16(q[2], _mm256_loadu_si256(at.add(6))),
                    _mm256_madd_epi16(q[3], _mm256_loadu_si256(at.add(7))),
                );
                (
                    _mm256_add_epi32(_mm256_add_epi32(h0, h1), _mm256_add_epi32(h2, h3)),
                    _mm256_add_epi32(_mm256_add_epi32(l0, l1), _mm256_add_epi32(l2, l3)),
                )
            };
            // H·2^15 is exact, so the fused form rounds once, as the base lanes' multiply
            // and add do.
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(h), _mm256_set1_ps(32768.0), _mm256_cvtepi32_ps(l))
        }
    }

    #[inline(always)]
    fn splat2(a: f32, b: f32) -> __m256 {
        unsafe { _mm256_setr_ps(a, a, a, a, b, b, b, b) }
    }

    #[inline(always)]
    fn halves2(a: &[u8], b: &[u8]) -> (__m256, [f32; 2]) {
        let (Some(a), Some(b)) = (a.get(..8), b.get(..8)) else {
            return (Self::lanes8_zero(), [0.0; 2]);
        };
        unsafe {
            // Each block's first four halves in one F16C conversion (the third and
            // fourth are codes, unused): [da ma . . | db mb . .], then the scales spread
            // over their halves and the minima apart.
            let wa = _mm_cvtph_ps(_mm_loadl_epi64(a.as_ptr().cast::<__m128i>()));
            let wb = _mm_cvtph_ps(_mm_loadl_epi64(b.as_ptr().cast::<__m128i>()));
            let both = _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(wa), wb);
            let d = _mm256_permute_ps::<0>(both);
            (d, [_mm_cvtss_f32(_mm_movehdup_ps(wa)), _mm_cvtss_f32(_mm_movehdup_ps(wb))])
        }
    }

    #[inline(always)]
    fn scaled_add(acc: __m256, g: __m256, d: __m256, s: __m256) -> __m256 {
        unsafe { _mm256_add_ps(acc, _mm256_mul_ps(g, _mm256_mul_ps(d, s))) }
    }

    #[inline(always)]
    fn fold(v: __m256) -> F4 {
        unsafe { F4(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v))) }
    }

    #[inline(always)]
    fn codes16(q: B16, signed: bool) -> [__m256; 2] {
        unsafe {
            let hi = _mm_unpackhi_epi64(q.0, q.0);
            let (a, b) = if signed {
                (_mm256_cvtepi8_epi32(q.0), _mm256_cvtepi8_epi32(hi))
            } else {
                (_mm256_cvtepu8_epi32(q.0), _mm256_cvtepu8_epi32(hi))
            };
            [_mm256_cvtepi32_ps(a), _mm256_cvtepi32_ps(b)]
        }
    }

    #[inline(always)]
    fn fifth_bits(qh: u32) -> (B16, B16) {
        unsafe {
            // Byte i of the result takes byte i / 8 of `qh` (lanes 16..32: 2 + (i - 16) / 8),
            // keeps bit i % 8 of it, and becomes 0x10 where that bit is set: five
            // instructions for the 32 values where the SSE2 route takes two of seven.
            let v = _mm256_set1_epi32(qh as i32);
            let spread = _mm256_shuffle_epi8(
                v,
                _mm256_setr_epi8(
                    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
                ),
            );
            let bit = _mm256_set1_epi64x(0x8040_2010_0804_0201u64 as i64);
            let set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
            let v = _mm256_and_si256(set, _mm256_set1_epi8(0x10));
            (B16(_mm256_castsi256_si128(v)), B16(_mm256_extracti128_si256::<1>(v)))
        }
    }

    #[inline(always)]
    fn dot16(q: [__m256; 2], x: &[f32], at: usize) -> F4 {
        let Some(x) = x.get(at..at + 16) else {
            return F4::zero();
        };
        unsafe {
            // [p0 | p1] and [p2 | p3]; then [p0 + p1 | p2 + p3], and (p0 + p1) + (p2 + p3)
            // as `dot4` adds them.
            let p01 = _mm256_mul_ps(q[0], _mm256_loadu_ps(x.as_ptr()));
            let p23 = _mm256_mul_ps(q[1], _mm256_loadu_ps(x.as_ptr().add(8)));
            let s = _mm256_add_ps(_mm256_permute2f128_ps::<0x20>(p01, p23), _mm256_permute2f128_ps::<0x31>(p01, p23));
            F4(_mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps::<1>(s)))
        }
    }

    #[inline(always)]
    fn halves8(w: &[u8], at: usize) -> [F4; 2] {
        let Some(w) = w.get(at..at + 16) else {
            return [F4::zero(), F4::zero()];
        };
        unsafe {
            let f = _mm256_cvtph_ps(_mm_loadu_si128(w.as_ptr().cast::<__m128i>()));
            [F4(_mm256_castps256_ps128(f)), F4(_mm256_extractf128_ps::<1>(f))]
        }
    }

    /// `[w0 | w4], [w1 | w5], [w2 | w6], [w3 | w7]` (`wk`: values 4k..4k + 4), so the
    /// products pair up as `dot8` adds them.
    type Floats32 = [__m256; 4];

    #[inline(always)]
    fn floats32(v: [F4; 8]) -> [__m256; 4] {
        unsafe {
            [
                _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(v[0].0), v[4].0),
                _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(v[1].0), v[5].0),
                _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(v[2].0), v[6].0),
                _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(v[3].0), v[7].0),
            ]
        }
    }

    #[inline(always)]
    fn dot32(w: [__m256; 4], x: &[f32], at: usize) -> F4 {
        let Some(x) = x.get(at..at + 32) else {
            return F4::zero();
        };
        unsafe {
            let x = x.as_ptr();
            // Activations k and 4 + k (four values each) beside each other, as the weights.
            let (a, b, c, d) = (
                _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm_loadu_ps(x)), _mm_loadu_ps(x.add(16))),
                _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm_loadu_ps(x.add(4))), _mm_loadu_ps(x.add(20))),
                _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm_loadu_ps(x.add(8))), _mm_loadu_ps(x.add(24))),
                _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm_loadu_ps(x.add(12))), _mm_loadu_ps(x.add(28))),
            );
            // [(p0 + p1) + (p2 + p3) | (p4 + p5) + (p6 + p7)], then the halves added.
            let ab = _mm256_add_ps(_mm256_mul_ps(w[0], a), _mm256_mul_ps(w[1], b));
            let cd = _mm256_add_ps(_mm256_mul_ps(w[2], c), _mm256_mul_ps(w[3], d));
            let s = _mm256_add_ps(ab, cd);
            F4(_mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps::<1>(s)))
        }
    }
}
