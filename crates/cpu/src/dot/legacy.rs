//! The 32-value block types (layouts: `kindling_gguf::dequant::legacy`). A row is walked
//! two blocks at a time: each pair's codes are unpacked into 16-bit lanes once and
//! multiplied with every activation row's planes (exact integer sums, four lanes a
//! block), and the pair's lanes scaled by `d · s` each and added to the row's eight
//! lanes. The `_1` types' `m · Σ x` goes to a scalar, block by block. Codes of the `_0`
//! types are made signed in the byte domain (exact) before widening.

use super::isa::Isa;
use super::simd::B16;
use super::{nth, XRow};

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

/// Each type's block kernel: its codes, values 0..16 and 16..32 as bytes. Every block
/// starts with its scale `d` as a half, and the `_1` types' with their minimum `m`
/// after it.
#[inline(always)]
pub fn q4_0(b: &[u8; 18]) -> (B16, B16) {
    let (lo, hi) = nibbles(b, 2);
    let eight = B16::splat(8);
    (lo.sub(eight), hi.sub(eight))
}

#[inline(always)]
pub fn q4_1(b: &[u8; 20]) -> (B16, B16) {
    nibbles(b, 4)
}

#[inline(always)]
pub fn q5_0<I: Isa>(b: &[u8; 22]) -> (B16, B16) {
    let (lo, hi) = nibbles(b, 6);
    let (h0, h1) = I::fifth_bits(high_bits(b, 2));
    let sixteen = B16::splat(16);
    (lo.or(h0).sub(sixteen), hi.or(h1).sub(sixteen))
}

#[inline(always)]
pub fn q5_1<I: Isa>(b: &[u8; 24]) -> (B16, B16) {
    let (lo, hi) = nibbles(b, 8);
    let (h0, h1) = I::fifth_bits(high_bits(b, 4));
    (lo.or(h0), hi.or(h1))
}

#[inline(always)]
pub fn q8_0(b: &[u8; 34]) -> (B16, B16) {
    (B16::load(b, 2), B16::load(b, 18))
}

/// `Σ w·x[r]` for one row `w` of `B`-byte blocks and `R` activation rows, each with its
/// planes, block scales and (`MIN`, the `_1` types) block sums; rows whose lengths do
/// not match give 0. `codes` is the type's block kernel above, whose codes are signed
/// where `SIGNED`.
#[inline(always)]
pub fn row<I: Isa, const B: usize, const SIGNED: bool, const MIN: bool, const R: usize>(
    w: &[u8],
    x: [XRow; R],
    codes: impl Fn(&[u8; B]) -> (B16, B16),
) -> [f32; R] {
    let n = w.len() / B;
    let bad = |r: &XRow| {
        r.planes.len() != super::xplanes::planes_len(32 * n) || r.scales.len() != n || (MIN && r.sums.len() != n)
    };
    if x.iter().any(bad) {
        return [0.0; R];
    }
    let mut acc = [I::lanes8_zero(); R];
    let mut min = [0.0f32; R];
    let mut pairs = w.chunks_exact(2 * B);
    for (j, pair) in pairs.by_ref().enumerate() {
        let (Ok(a), Ok(b)) = (<&[u8; B]>::try_from(&pair[..B]), <&[u8; B]>::try_from(&pair[B..])) else {
            break;
        };
        let q = I::codes2(codes(a), codes(b), SIGNED);
        let (d, m) = I::halves2(a, b);
        for ((acc, min), r) in acc.iter_mut().zip(&mut min).zip(&x) {
            // SAFETY (each): the lengths were checked above, and pair j < n / 2.
            let (p, s) = unsafe { (nth::<i16, 128>(r.planes, j), nth::<f32, 2>(r.scales, j)) };
            *acc = I::scaled_add(*acc, I::pair_dot(q, p, 0), d, I::splat2(s[0], s[1]));
            if MIN {
                let sums = unsafe { nth::<f32, 2>(r.sums, j) };
                *min += m[0] * sums[0];
                *min += m[1] * sums[1];
            }
        }
    }
    // A last block alone: the pair's other group has no codes, planes or scale.
    if let Ok(a) = <&[u8; B]>::try_from(pairs.remainder().get(..B).unwrap_or(&[])) {
        let (j, last) = (n / 2, n - 1);
        let q = I::codes2(codes(a), (B16::splat(0), B16::splat(0)), SIGNED);
        let (d, m) = I::halves2(a, &[0; 8]);
        for ((acc, min), r) in acc.iter_mut().zip(&mut min).zip(&x) {
            // SAFETY: as above; the planes of a row hold a whole pair for its last block.
            let p = unsafe { nth::<i16, 128>(r.planes, j) };
            *acc = I::scaled_add(*acc, I::pair_dot(q, p, 0), d, I::splat2(r.scales[last], 0.0));
            if MIN {
                *min += m[0] * r.sums[last];
            }
        }
    }
    // A loop, not `array::from_fn`: its closure would be compiled without the wide
    // lanes' target features.
    let mut out = [0.0f32; R];
    for ((o, a), m) in out.iter_mut().zip(acc).zip(min) {
        *o = I::fold(a).hsum() + m;
    }
    out
}
