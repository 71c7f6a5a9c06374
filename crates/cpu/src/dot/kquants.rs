//! The 256-value K-quant types (layouts: `kindling_gguf::dequant::kquants`). Each
//! kernel walks its super-block group by group in the order of the dequantizer: a
//! group's codes are unpacked once, and every activation row adds `scale_g · Σ q·x`
//! to a block sum that is multiplied by the super-scale `d` at the end of the block.
//! 32-value groups (Q4_K, Q5_K, Q8_K) use the activations' integer planes, a pair of
//! groups at a time (`legacy`'s lanes); 16-value groups (Q2_K, Q3_K, Q6_K) f32 lanes.
//! Minimum terms use the precomputed group sums of `x`.

use kindling_gguf::dequant::kquants::{k4_scale_min, q3_k_scales};

use super::isa::Isa;
use super::simd::{dot4, f16, B16, F4};
use super::{Acc, Block};

type X<'a, const R: usize> = [&'a [f32; 256]; R];
/// Kernels on f32 activations (16-value groups) and on integer planes (32-value groups).
type Float<'a, const G: usize, const R: usize> = Block<'a, 256, G, 0, 0, R>;
type Int<'a, const G: usize, const R: usize> = Block<'a, 0, G, 512, 8, R>;

/// `blk[r] += scale · Σ q·x[r][at..at + 16]`.
#[inline(always)]
fn group16<I: Isa, const R: usize>(blk: &mut [F4; R], q: B16, signed: bool, x: X<R>, at: usize, scale: f32) {
    let q = I::codes16(q, signed);
    let s = F4::splat(scale);
    for (b, x) in blk.iter_mut().zip(x) {
        *b = b.add(I::dot16(q, x, at).mul(s));
    }
}

/// A pair of 32-value groups (`2c`, `2c + 1`) into every row's `blk`: A's lanes add
/// `sc[2c] · s · Σ q·x[r]` of group 2c, B's the same of group 2c + 1.
#[inline(always)]
fn pair32<I: Isa, const G: usize, const R: usize>(
    blk: &mut [I::Lanes8; R],
    q: I::Codes2,
    sc: &[f32; 8],
    x: &Int<G, R>,
    c: usize,
) {
    for ((b, p), s) in blk.iter_mut().zip(x.planes).zip(x.scales) {
        let g = I::pair_dot(q, p, 128 * c);
        *b = I::scaled_add(*b, g, I::splat2(sc[2 * c], sc[2 * c + 1]), I::splat2(s[2 * c], s[2 * c + 1]));
    }
}

/// The codes of the two groups in 32 bytes at `b[at..]`: low nibbles and high nibbles
/// (Q4_K; Q5_K with `fifth` bits added, group `g` taking bit `g` of each byte).
#[inline(always)]
fn nibble_pair<I: Isa>(b: &[u8], at: usize, fifth: Option<(B16, B16, usize)>) -> I::Codes2 {
    let (q0, q1) = (B16::load(b, at), B16::load(b, at + 16));
    let m = B16::splat(0x0f);
    let (mut a0, mut a1, mut b0, mut b1) = (q0.and(m), q1.and(m), q0.shr(4), q1.shr(4));
    if let Some((h0, h1, g)) = fifth {
        let one = B16::splat(1);
        let bit = |h: B16, g: usize| h.shr(g as u32).and(one).shl(4);
        (a0, a1, b0, b1) = (a0.or(bit(h0, g)), a1.or(bit(h1, g)), b0.or(bit(h0, g + 1)), b1.or(bit(h1, g + 1)));
    }
    I::codes2((a0, a1), (b0, b1), false)
}

/// `acc[r] += d · (A's lanes + B's)` of a super-block's pairs.
#[inline(always)]
fn finish_pairs<I: Isa, const R: usize>(acc: &mut [Acc; R], blk: [I::Lanes8; R], d: f32) {
    let d = F4::splat(d);
    for (a, b) in acc.iter_mut().zip(blk) {
        a.v = a.v.add(I::fold(b).mul(d));
    }
}

/// `acc[r] += d · blk[r]`.
#[inline(always)]
fn finish<const R: usize>(acc: &mut [Acc; R], blk: [F4; R], d: f32) {
    let d = F4::splat(d);
    for (a, b) in acc.iter_mut().zip(blk) {
        a.v = a.v.add(b.mul(d));
    }
}

/// `acc[r] -= dmin · Σ_g mins[g]·sums[r][g]`, eight groups of 32.
#[inline(always)]
fn minimum8<const R: usize>(acc: &mut [Acc; R], mins: [f32; 8], x: &Int<8, R>, dmin: f32) {
    let (m0, m1) = (F4::new([mins[0], mins[1], mins[2], mins[3]]), F4::new([mins[4], mins[5], mins[6], mins[7]]));
    let nd = F4::splat(-dmin);
    for (a, s) in acc.iter_mut().zip(x.sums) {
        let t = m0.mul(F4::load(s, 0)).add(m1.mul(F4::load(s, 4)));
        a.v = a.v.add(t.mul(nd));
    }
}

#[inline(always)]
pub fn q2_k<I: Isa, const R: usize>(b: &[u8; 84], x: &Float<16, R>, acc: &mut [Acc; R]) {
    let mut blk = [F4::zero(); R];
    for h in 0..2 {
        for j in 0..4 {
            for half in 0..2 {
                let g = 8 * h + 2 * j + half;
                let q = B16::load(b, 16 + 32 * h + 16 * half).shr(2 * j as u32).and(B16::splat(3));
                group16::<I, R>(&mut blk, q, false, x.x, 128 * h + 32 * j + 16 * half, (b[g] & 0x0f) as f32);
            }
        }
    }
    finish(acc, blk, f16(b[80], b[81]));
    // Minima: 4-bit mins in the high nibbles of the 16 scale bytes.
    let mins = B16::load(b, 0).shr(4).widen_u();
    let nd = F4::splat(-f16(b[82], b[83]));
    for (a, s) in acc.iter_mut().zip(x.sums) {
        let t = dot4(mins, s, 0);
        a.v = a.v.add(t.mul(nd));
    }
}

#[inline(always)]
pub fn q3_k<I: Isa, const R: usize>(b: &[u8; 110], x: &Float<0, R>, acc: &mut [Acc; R]) {
    let scales = q3_k_scales(&b[96..108]);
    let mut blk = [F4::zero(); R];
    for h in 0..2 {
        for j in 0..4 {
            for half in 0..2 {
                let g = 8 * h + 2 * j + half;
                let lo = B16::load(b, 32 + 32 * h + 16 * half).shr(2 * j as u32).and(B16::splat(3));
                let hb = B16::load(b, 16 * half).shr((4 * h + j) as u32).and(B16::splat(1)).shl(2);
                // low2 - (high bit ? 0 : 4) == (low2 | high << 2) - 4
                let q = lo.or(hb).sub(B16::splat(4));
                group16::<I, R>(&mut blk, q, true, x.x, 128 * h + 32 * j + 16 * half, scales[g] as f32);
            }
        }
    }
    finish(acc, blk, f16(b[108], b[109]));
}

/// Scales and mins of a Q4_K/Q5_K block's eight groups.
#[inline(always)]
fn k4_scales(b: &[u8]) -> ([f32; 8], [f32; 8]) {
    let sm: [(u8, u8); 8] = core::array::from_fn(|j| k4_scale_min(b, j));
    (sm.map(|p| p.0 as f32), sm.map(|p| p.1 as f32))
}

#[inline(always)]
pub fn q4_k<I: Isa, const R: usize>(b: &[u8; 144], x: &Int<8, R>, acc: &mut [Acc; R]) {
    let (sc, mins) = k4_scales(&b[4..16]);
    let mut blk = [I::lanes8_zero(); R];
    // Bytes 32c..32c + 32 of the codes hold groups 2c (low nibbles) and 2c + 1 (high).
    for c in 0..4 {
        pair32::<I, _, R>(&mut blk, nibble_pair::<I>(b, 16 + 32 * c, None), &sc, x, c);
    }
    finish_pairs::<I, R>(acc, blk, f16(b[0], b[1]));
    minimum8(acc, mins, x, f16(b[2], b[3]));
}

#[inline(always)]
pub fn q5_k<I: Isa, const R: usize>(b: &[u8; 176], x: &Int<8, R>, acc: &mut [Acc; R]) {
    let (sc, mins) = k4_scales(&b[4..16]);
    let (h0, h1) = (B16::load(b, 16), B16::load(b, 32));
    let mut blk = [I::lanes8_zero(); R];
    for c in 0..4 {
        pair32::<I, _, R>(&mut blk, nibble_pair::<I>(b, 48 + 32 * c, Some((h0, h1, 2 * c))), &sc, x, c);
    }
    finish_pairs::<I, R>(acc, blk, f16(b[0], b[1]));
    minimum8(acc, mins, x, f16(b[2], b[3]));
}

#[inline(always)]
pub fn q6_k<I: Isa, const R: usize>(b: &[u8; 210], x: &Float<0, R>, acc: &mut [Acc; R]) {
    let mut blk = [F4::zero(); R];
    let (m4, m6, off) = (B16::splat(0x0f), B16::splat(0x30), B16::splat(32));
    for h in 0..2 {
        let (ql, qh, sc) = (64 * h, 128 + 32 * h, 192 + 8 * h);
        for k in 0..2 {
            let (qa, qb, hh) = (B16::load(b, ql + 16 * k), B16::load(b, ql + 32 + 16 * k), B16::load(b, qh + 16 * k));
            // Code = low nibble | (2 high bits << 4), minus 32; each 16 values own an i8 scale.
            let codes = [
                qa.and(m4).or(hh.shl(4).and(m6)),
                qb.and(m4).or(hh.shl(2).and(m6)),
                qa.shr(4).or(hh.and(m6)),
                qb.shr(4).or(hh.shr(2).and(m6)),
            ];
            for (i, q) in codes.into_iter().enumerate() {
                let scale = b[sc + 2 * i + k] as i8 as f32;
                group16::<I, R>(&mut blk, q.sub(off), true, x.x, 128 * h + 32 * i + 16 * k, scale);
            }
        }
    }
    finish(acc, blk, f16(b[208], b[209]));
}

#[inline(always)]
pub fn q8_k<I: Isa, const R: usize>(b: &[u8; 292], x: &Int<0, R>, acc: &mut [Acc; R]) {
    let mut blk = [I::lanes8_zero(); R];
    for c in 0..4 {
        let at = 4 + 64 * c;
        let q =
            I::codes2((B16::load(b, at), B16::load(b, at + 16)), (B16::load(b, at + 32), B16::load(b, at + 48)), true);
        pair32::<I, _, R>(&mut blk, q, &[1.0; 8], x, c);
    }
    finish_pairs::<I, R>(acc, blk, f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
}
