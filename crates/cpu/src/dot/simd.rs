//! The vector types every dot-product kernel is written with: `F4` (four f32 lanes),
//! `B16` (sixteen bytes), `I16x8` and `I32x4` (integer lanes for the exact products of
//! codes with the activations' integer planes, see `xplanes`). On wasm32 with
//! `simd128` they are `v128` intrinsics, on x86_64 SSE2 intrinsics, elsewhere plain
//! arrays. All three do the same f32 operations lane by lane in the same order (byte
//! and integer work is exact either way), so a kernel gives bit-identical results on
//! every target (`tests::results_are_bit_identical_across_targets`).

#[cfg(all(target_arch = "wasm32", target_feature = "simd128", not(feature = "portable-lanes")))]
mod imp {
    /// Which implementation this is (a test checks the one a build meant).
    pub const LANES: &str = "wasm-simd128";

    use core::arch::wasm32::*;

    #[derive(Clone, Copy)]
    pub struct F4(v128);

    #[derive(Clone, Copy)]
    pub struct B16(v128);

    impl F4 {
        #[inline(always)]
        pub fn zero() -> F4 {
            F4(f32x4_splat(0.0))
        }
        #[inline(always)]
        pub fn splat(v: f32) -> F4 {
            F4(f32x4_splat(v))
        }
        #[inline(always)]
        pub fn new(a: [f32; 4]) -> F4 {
            F4(f32x4(a[0], a[1], a[2], a[3]))
        }
        /// Lanes `x[at..at + 4]` (zeros if out of range, which callers never are).
        #[inline(always)]
        pub fn load(x: &[f32], at: usize) -> F4 {
            match x.get(at..at + 4) {
                // SAFETY: the slice holds exactly 16 readable bytes; v128_load is unaligned.
                Some(c) => F4(unsafe { v128_load(c.as_ptr().cast::<v128>()) }),
                None => F4::zero(),
            }
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            F4(f32x4_add(self.0, o.0))
        }
        #[inline(always)]
        pub fn mul(self, o: F4) -> F4 {
            F4(f32x4_mul(self.0, o.0))
        }
        #[inline(always)]
        pub fn to_array(self) -> [f32; 4] {
            [
                f32x4_extract_lane::<0>(self.0),
                f32x4_extract_lane::<1>(self.0),
                f32x4_extract_lane::<2>(self.0),
                f32x4_extract_lane::<3>(self.0),
            ]
        }
        /// Lane-wise from the four low signed 32-bit integers.
        #[inline(always)]
        fn from_i32(v: v128) -> F4 {
            F4(f32x4_convert_i32x4(v))
        }
    }

    /// Eight i16 lanes.
    #[derive(Clone, Copy)]
    pub struct I16x8(v128);

    /// Four i32 lanes.
    #[derive(Clone, Copy)]
    pub struct I32x4(v128);

    impl I16x8 {
        /// Lanes `x[at..at + 8]` (zeros if out of range, which callers never are).
        #[inline(always)]
        pub fn load(x: &[i16], at: usize) -> I16x8 {
            match x.get(at..at + 8) {
                // SAFETY: the slice holds exactly 16 readable bytes; v128_load is unaligned.
                Some(c) => I16x8(unsafe { v128_load(c.as_ptr().cast::<v128>()) }),
                None => I16x8(i16x8_splat(0)),
            }
        }
        /// `[a0·b0 + a1·b1, a2·b2 + a3·b3, ...]`, exact in i32.
        #[inline(always)]
        pub fn madd(self, o: I16x8) -> I32x4 {
            I32x4(i32x4_dot_i16x8(self.0, o.0))
        }
    }

    impl I32x4 {
        #[inline(always)]
        pub fn add(self, o: I32x4) -> I32x4 {
            I32x4(i32x4_add(self.0, o.0))
        }
        /// Lane-wise to f32 (round to nearest).
        #[inline(always)]
        pub fn to_f32(self) -> F4 {
            F4::from_i32(self.0)
        }
    }

    impl B16 {
        #[inline(always)]
        pub fn splat(v: u8) -> B16 {
            B16(u8x16_splat(v))
        }
        /// The even bytes and the odd bytes as unsigned 16-bit lanes (values 0, 2, ..,
        /// 14 and 1, 3, .., 15): masks and shifts, no shuffles.
        #[inline(always)]
        pub fn split16_u(self) -> [I16x8; 2] {
            [I16x8(v128_and(self.0, u16x8_splat(0xff))), I16x8(u16x8_shr(self.0, 8))]
        }
        /// [`B16::split16_u`] with the bytes' signs.
        #[inline(always)]
        pub fn split16_i(self) -> [I16x8; 2] {
            [I16x8(i16x8_shr(i16x8_shl(self.0, 8), 8)), I16x8(i16x8_shr(self.0, 8))]
        }
        /// Bytes `b[at..at + 16]` (zeros if out of range, which callers never are).
        #[inline(always)]
        pub fn load(b: &[u8], at: usize) -> B16 {
            match b.get(at..at + 16) {
                // SAFETY: the slice holds exactly 16 readable bytes; v128_load is unaligned.
                Some(c) => B16(unsafe { v128_load(c.as_ptr().cast::<v128>()) }),
                None => B16(u8x16_splat(0)),
            }
        }
        #[inline(always)]
        pub fn and(self, o: B16) -> B16 {
            B16(v128_and(self.0, o.0))
        }
        #[inline(always)]
        pub fn or(self, o: B16) -> B16 {
            B16(v128_or(self.0, o.0))
        }
        /// Logical right shift of every byte.
        #[inline(always)]
        pub fn shr(self, n: u32) -> B16 {
            B16(u8x16_shr(self.0, n))
        }
        /// Left shift of every byte (bits shifted out are lost).
        #[inline(always)]
        pub fn shl(self, n: u32) -> B16 {
            B16(i8x16_shl(self.0, n))
        }
        /// Wrapping byte subtraction (turns biased codes into signed ones).
        #[inline(always)]
        pub fn sub(self, o: B16) -> B16 {
            B16(i8x16_sub(self.0, o.0))
        }
        /// Byte i = `v` where bit i of `bits` is set, else 0.
        #[inline(always)]
        pub fn from_bits(bits: u16, v: u8) -> B16 {
            let b = u16x8_splat(bits);
            let spread = u8x16_shuffle::<0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1>(b, b);
            let mask = u8x16(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128);
            let set = u8x16_eq(v128_and(spread, mask), mask);
            B16(v128_and(set, u8x16_splat(v)))
        }
        /// The bytes as unsigned integers, four lanes at a time.
        #[inline(always)]
        pub fn widen_u(self) -> [F4; 4] {
            let lo = u16x8_extend_low_u8x16(self.0);
            let hi = u16x8_extend_high_u8x16(self.0);
            [
                F4::from_i32(u32x4_extend_low_u16x8(lo)),
                F4::from_i32(u32x4_extend_high_u16x8(lo)),
                F4::from_i32(u32x4_extend_low_u16x8(hi)),
                F4::from_i32(u32x4_extend_high_u16x8(hi)),
            ]
        }
        /// The bytes as signed integers, four lanes at a time.
        #[inline(always)]
        pub fn widen_i(self) -> [F4; 4] {
            let lo = i16x8_extend_low_i8x16(self.0);
            let hi = i16x8_extend_high_i8x16(self.0);
            [
                F4::from_i32(i32x4_extend_low_i16x8(lo)),
                F4::from_i32(i32x4_extend_high_i16x8(lo)),
                F4::from_i32(i32x4_extend_low_i16x8(hi)),
                F4::from_i32(i32x4_extend_high_i16x8(hi)),
            ]
        }
    }
}

/// x86_64: SSE2 is part of the baseline, so these need no runtime detection. Same
/// lane operations as the wasm32 module (LLVM does not vectorise the portable
/// integer lanes well enough).
#[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
#[allow(unused_unsafe)] // SSE2 intrinsics became safe to call in newer Rust
mod imp {
    pub const LANES: &str = "sse2";

    // SAFETY (every `unsafe` block below): SSE2 is always available on x86_64; loads
    // read exactly 16 bytes of a slice checked to hold them.
    use core::arch::x86_64::*;

    #[derive(Clone, Copy)]
    pub struct F4(pub(in crate::dot) __m128);

    #[derive(Clone, Copy)]
    pub struct B16(pub(in crate::dot) __m128i);

    #[derive(Clone, Copy)]
    pub struct I16x8(pub(in crate::dot) __m128i);

    #[derive(Clone, Copy)]
    pub struct I32x4(pub(in crate::dot) __m128i);

    impl F4 {
        #[inline(always)]
        pub fn zero() -> F4 {
            F4(unsafe { _mm_setzero_ps() })
        }
        #[inline(always)]
        pub fn splat(v: f32) -> F4 {
            F4(unsafe { _mm_set1_ps(v) })
        }
        #[inline(always)]
        pub fn new(a: [f32; 4]) -> F4 {
            F4(unsafe { _mm_setr_ps(a[0], a[1], a[2], a[3]) })
        }
        #[inline(always)]
        pub fn load(x: &[f32], at: usize) -> F4 {
            match x.get(at..at + 4) {
                Some(c) => F4(unsafe { _mm_loadu_ps(c.as_ptr()) }),
                None => F4::zero(),
            }
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            F4(unsafe { _mm_add_ps(self.0, o.0) })
        }
        #[inline(always)]
        pub fn mul(self, o: F4) -> F4 {
            F4(unsafe { _mm_mul_ps(self.0, o.0) })
        }
        #[inline(always)]
        pub fn to_array(self) -> [f32; 4] {
            let mut a = [0.0f32; 4];
            unsafe { _mm_storeu_ps(a.as_mut_ptr(), self.0) };
            a
        }
        #[inline(always)]
        fn from_i32(v: __m128i) -> F4 {
            F4(unsafe { _mm_cvtepi32_ps(v) })
        }
    }

    impl I16x8 {
        #[inline(always)]
        pub fn load(x: &[i16], at: usize) -> I16x8 {
            match x.get(at..at + 8) {
                Some(c) => I16x8(unsafe { _mm_loadu_si128(c.as_ptr().cast::<__m128i>()) }),
                None => I16x8(unsafe { _mm_setzero_si128() }),
            }
        }
        #[inline(always)]
        pub fn madd(self, o: I16x8) -> I32x4 {
            I32x4(unsafe { _mm_madd_epi16(self.0, o.0) })
        }
    }

    impl I32x4 {
        #[inline(always)]
        pub fn add(self, o: I32x4) -> I32x4 {
            I32x4(unsafe { _mm_add_epi32(self.0, o.0) })
        }
        #[inline(always)]
        pub fn to_f32(self) -> F4 {
            F4::from_i32(self.0)
        }
    }

    impl B16 {
        #[inline(always)]
        pub fn splat(v: u8) -> B16 {
            B16(unsafe { _mm_set1_epi8(v as i8) })
        }
        #[inline(always)]
        pub fn load(b: &[u8], at: usize) -> B16 {
            match b.get(at..at + 16) {
                Some(c) => B16(unsafe { _mm_loadu_si128(c.as_ptr().cast::<__m128i>()) }),
                None => B16(unsafe { _mm_setzero_si128() }),
            }
        }
        #[inline(always)]
        pub fn and(self, o: B16) -> B16 {
            B16(unsafe { _mm_and_si128(self.0, o.0) })
        }
        #[inline(always)]
        pub fn or(self, o: B16) -> B16 {
            B16(unsafe { _mm_or_si128(self.0, o.0) })
        }
        /// Per-byte shifts: a 16-bit shift, then the bits that crossed bytes masked off.
        #[inline(always)]
        pub fn shr(self, n: u32) -> B16 {
            let n = n & 7;
            unsafe { B16(_mm_srl_epi16(self.0, _mm_cvtsi32_si128(n as i32))).and(B16::splat(0xffu8 >> n)) }
        }
        #[inline(always)]
        pub fn shl(self, n: u32) -> B16 {
            let n = n & 7;
            unsafe { B16(_mm_sll_epi16(self.0, _mm_cvtsi32_si128(n as i32))).and(B16::splat(0xffu8 << n)) }
        }
        #[inline(always)]
        pub fn sub(self, o: B16) -> B16 {
            B16(unsafe { _mm_sub_epi8(self.0, o.0) })
        }
        #[inline(always)]
        pub fn from_bits(bits: u16, v: u8) -> B16 {
            unsafe {
                let b = _mm_cvtsi32_si128(i32::from(bits));
                let b = _mm_unpacklo_epi8(b, b); // b0 b0 b1 b1 ..
                let b = _mm_unpacklo_epi16(b, b); // b0 x4, b1 x4
                let spread = _mm_unpacklo_epi32(b, b); // b0 x8, b1 x8
                let mask = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
                let set = _mm_cmpeq_epi8(_mm_and_si128(spread, mask), mask);
                B16(_mm_and_si128(set, _mm_set1_epi8(v as i8)))
            }
        }
        /// The even bytes and the odd bytes as unsigned 16-bit lanes (values 0, 2, ..,
        /// 14 and 1, 3, .., 15): masks and shifts, no shuffles.
        #[inline(always)]
        pub fn split16_u(self) -> [I16x8; 2] {
            unsafe { [I16x8(_mm_and_si128(self.0, _mm_set1_epi16(0xff))), I16x8(_mm_srli_epi16(self.0, 8))] }
        }
        /// [`B16::split16_u`] with the bytes' signs.
        #[inline(always)]
        pub fn split16_i(self) -> [I16x8; 2] {
            unsafe { [I16x8(_mm_srai_epi16(_mm_slli_epi16(self.0, 8), 8)), I16x8(_mm_srai_epi16(self.0, 8))] }
        }
        #[inline(always)]
        pub fn widen16_i(self) -> [I16x8; 2] {
            unsafe {
                [
                    I16x8(_mm_srai_epi16(_mm_unpacklo_epi8(self.0, self.0), 8)),
                    I16x8(_mm_srai_epi16(_mm_unpackhi_epi8(self.0, self.0), 8)),
                ]
            }
        }
        #[inline(always)]
        pub fn widen_u(self) -> [F4; 4] {
            unsafe {
                let z = _mm_setzero_si128();
                let (lo, hi) = (_mm_unpacklo_epi8(self.0, z), _mm_unpackhi_epi8(self.0, z));
                [
                    F4::from_i32(_mm_unpacklo_epi16(lo, z)),
                    F4::from_i32(_mm_unpackhi_epi16(lo, z)),
                    F4::from_i32(_mm_unpacklo_epi16(hi, z)),
                    F4::from_i32(_mm_unpackhi_epi16(hi, z)),
                ]
            }
        }
        #[inline(always)]
        pub fn widen_i(self) -> [F4; 4] {
            let [lo, hi] = self.widen16_i();
            unsafe {
                let w = |v: __m128i| {
                    (_mm_srai_epi32(_mm_unpacklo_epi16(v, v), 16), _mm_srai_epi32(_mm_unpackhi_epi16(v, v), 16))
                };
                let ((a, b), (c, d)) = (w(lo.0), w(hi.0));
                [F4::from_i32(a), F4::from_i32(b), F4::from_i32(c), F4::from_i32(d)]
            }
        }
    }
}

/// Plain arrays: every other target (aarch64 among them), and any target with the
/// `portable-lanes` feature, which is how the tests run this module natively.
#[cfg(any(
    feature = "portable-lanes",
    not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")))
))]
mod imp {
    pub const LANES: &str = "portable";

    #[derive(Clone, Copy)]
    pub struct F4([f32; 4]);

    #[derive(Clone, Copy)]
    pub struct B16([u8; 16]);

    impl F4 {
        #[inline(always)]
        pub fn zero() -> F4 {
            F4([0.0; 4])
        }
        #[inline(always)]
        pub fn splat(v: f32) -> F4 {
            F4([v; 4])
        }
        #[inline(always)]
        pub fn new(a: [f32; 4]) -> F4 {
            F4(a)
        }
        #[inline(always)]
        pub fn load(x: &[f32], at: usize) -> F4 {
            match x.get(at..at + 4) {
                Some(c) => F4([c[0], c[1], c[2], c[3]]),
                None => F4::zero(),
            }
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            F4([self.0[0] + o.0[0], self.0[1] + o.0[1], self.0[2] + o.0[2], self.0[3] + o.0[3]])
        }
        #[inline(always)]
        pub fn mul(self, o: F4) -> F4 {
            F4([self.0[0] * o.0[0], self.0[1] * o.0[1], self.0[2] * o.0[2], self.0[3] * o.0[3]])
        }
        #[inline(always)]
        pub fn to_array(self) -> [f32; 4] {
            self.0
        }
    }

    #[derive(Clone, Copy)]
    pub struct I16x8([i16; 8]);

    #[derive(Clone, Copy)]
    pub struct I32x4([i32; 4]);

    impl I16x8 {
        #[inline(always)]
        pub fn load(x: &[i16], at: usize) -> I16x8 {
            match x.get(at..at + 8) {
                Some(c) => I16x8([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
                None => I16x8([0; 8]),
            }
        }
        #[inline(always)]
        pub fn madd(self, o: I16x8) -> I32x4 {
            // Written as the widening multiply-add pattern LLVM turns into pmaddwd.
            let (a, b) = (self.0.map(i32::from), o.0.map(i32::from));
            let mut p = [0i32; 8];
            for i in 0..8 {
                p[i] = a[i] * b[i];
            }
            I32x4([p[0] + p[1], p[2] + p[3], p[4] + p[5], p[6] + p[7]])
        }
    }

    impl I32x4 {
        #[inline(always)]
        pub fn add(self, o: I32x4) -> I32x4 {
            I32x4([
                self.0[0].wrapping_add(o.0[0]),
                self.0[1].wrapping_add(o.0[1]),
                self.0[2].wrapping_add(o.0[2]),
                self.0[3].wrapping_add(o.0[3]),
            ])
        }
        #[inline(always)]
        pub fn to_f32(self) -> F4 {
            F4(self.0.map(|v| v as f32))
        }
    }

    impl B16 {
        #[inline(always)]
        pub fn splat(v: u8) -> B16 {
            B16([v; 16])
        }
        /// The even bytes and the odd bytes as unsigned 16-bit lanes (values 0, 2, ..,
        /// 14 and 1, 3, .., 15): masks and shifts, no shuffles.
        #[inline(always)]
        pub fn split16_u(self) -> [I16x8; 2] {
            let b = self.0;
            [
                I16x8(core::array::from_fn(|i| i16::from(b[2 * i]))),
                I16x8(core::array::from_fn(|i| i16::from(b[2 * i + 1]))),
            ]
        }
        /// [`B16::split16_u`] with the bytes' signs.
        #[inline(always)]
        pub fn split16_i(self) -> [I16x8; 2] {
            let b = self.0.map(|v| i16::from(v as i8));
            [I16x8(core::array::from_fn(|i| b[2 * i])), I16x8(core::array::from_fn(|i| b[2 * i + 1]))]
        }
        #[inline(always)]
        pub fn load(b: &[u8], at: usize) -> B16 {
            let mut out = [0u8; 16];
            if let Some(c) = b.get(at..at + 16) {
                out.copy_from_slice(c);
            }
            B16(out)
        }
        #[inline(always)]
        fn map(self, f: impl Fn(u8) -> u8) -> B16 {
            B16(self.0.map(f))
        }
        #[inline(always)]
        fn zip(self, o: B16, f: impl Fn(u8, u8) -> u8) -> B16 {
            B16(std::array::from_fn(|i| f(self.0[i], o.0[i])))
        }
        #[inline(always)]
        pub fn and(self, o: B16) -> B16 {
            self.zip(o, |a, b| a & b)
        }
        #[inline(always)]
        pub fn or(self, o: B16) -> B16 {
            self.zip(o, |a, b| a | b)
        }
        #[inline(always)]
        pub fn shr(self, n: u32) -> B16 {
            self.map(|a| a >> (n & 7))
        }
        #[inline(always)]
        pub fn shl(self, n: u32) -> B16 {
            self.map(|a| a << (n & 7))
        }
        #[inline(always)]
        pub fn sub(self, o: B16) -> B16 {
            self.zip(o, u8::wrapping_sub)
        }
        #[inline(always)]
        pub fn from_bits(bits: u16, v: u8) -> B16 {
            let mut out = [0u8; 16];
            for (i, o) in out.iter_mut().enumerate() {
                if (bits >> i) & 1 == 1 {
                    *o = v;
                }
            }
            B16(out)
        }
        #[inline(always)]
        pub fn widen_u(self) -> [F4; 4] {
            let b = self.0;
            let f = |i: usize| F4([b[i] as f32, b[i + 1] as f32, b[i + 2] as f32, b[i + 3] as f32]);
            [f(0), f(4), f(8), f(12)]
        }
        #[inline(always)]
        pub fn widen_i(self) -> [F4; 4] {
            let b = self.0.map(|v| v as i8 as f32);
            let f = |i: usize| F4([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            [f(0), f(4), f(8), f(12)]
        }
    }
}

pub use imp::{I16x8, I32x4, B16, F4, LANES};

impl F4 {
    /// The four lanes summed in a fixed order: `(l0 + l1) + (l2 + l3)`.
    #[inline(always)]
    pub fn hsum(self) -> f32 {
        let a = self.to_array();
        (a[0] + a[1]) + (a[2] + a[3])
    }
}

/// Σ w[i]·x[at + 4i..] over four weight vectors, as a pairwise tree (independent
/// multiplies, short dependency chains).
#[inline(always)]
pub fn dot4(w: [F4; 4], x: &[f32], at: usize) -> F4 {
    let p = |i: usize| w[i].mul(F4::load(x, at + 4 * i));
    p(0).add(p(1)).add(p(2).add(p(3)))
}

/// Σ over eight weight vectors (`lo` then `hi`), `((lo pairs) + (hi pairs))`.
#[inline(always)]
pub fn dot8(lo: [F4; 4], hi: [F4; 4], x: &[f32], at: usize) -> F4 {
    dot4(lo, x, at).add(dot4(hi, x, at + 16))
}

/// An IEEE half (little-endian bytes) widened exactly to f32: one load from a table
/// built at compile time (the block scales are halves; converting them with bit
/// arithmetic cost as much as a block's vector work in V8).
#[inline(always)]
pub fn f16(lo: u8, hi: u8) -> f32 {
    F16_TABLE[u16::from_le_bytes([lo, hi]) as usize]
}

static F16_TABLE: [f32; 65536] = {
    let mut t = [0.0f32; 65536];
    let mut h = 0;
    while h < 65536 {
        t[h] = f16_bits(h as u32);
        h += 1;
    }
    t
};

/// Normal halves rebias their exponent (15 -> 127); subnormals are m·2^-24 (exact in
/// f32); inf/NaN keep their mantissa under an all-ones exponent.
const fn f16_bits(h: u32) -> f32 {
    let sign = (h & 0x8000) << 16;
    let mag = h & 0x7fff;
    let exp = mag & 0x7c00;
    let bits = if exp == 0 {
        ((mag as f32) * (1.0 / 16_777_216.0)).to_bits()
    } else if mag == 0x7c00 {
        0x7f80_0000
    } else if exp == 0x7c00 {
        (mag << 13) | 0x7fc0_0000 // quiet NaN, as `half` gives
    } else {
        (mag << 13) + (112 << 23)
    };
    f32::from_bits(sign | bits)
}
