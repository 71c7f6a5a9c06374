//! Float weight rows (F32, F16, BF16): 32 values at a time into the vector
//! accumulator, a ragged tail (rows need not be a multiple of 32) into the scalar one.

use super::simd::{dot8, f16, F4};
use super::Acc;

/// The value at byte offset `at` of a row of `W`-byte floats.
type Decode = fn(&[u8], usize) -> f32;

#[inline(always)]
fn row<const W: usize, const R: usize>(w: &[u8], x: [&[f32]; R], decode: Decode) -> [f32; R] {
    let n = w.len() / W;
    if x.iter().any(|x| x.len() != n) {
        return [0.0; R];
    }
    let mut acc = [Acc { v: F4::zero(), s: 0.0 }; R];
    let whole = n / 32 * 32;
    for at in (0..whole).step_by(32) {
        let lanes = |k: usize| F4::new(core::array::from_fn(|l| decode(w, (at + 4 * k + l) * W)));
        let (lo, hi) = ([lanes(0), lanes(1), lanes(2), lanes(3)], [lanes(4), lanes(5), lanes(6), lanes(7)]);
        for (a, x) in acc.iter_mut().zip(x) {
            a.v = a.v.add(dot8(lo, hi, x, at));
        }
    }
    for i in whole..n {
        let v = decode(w, i * W);
        for (a, x) in acc.iter_mut().zip(x) {
            a.s += v * x.get(i).copied().unwrap_or(0.0);
        }
    }
    acc.map(|a| a.v.hsum() + a.s)
}

#[inline(always)]
fn byte(w: &[u8], at: usize) -> u8 {
    w.get(at).copied().unwrap_or(0)
}

pub fn f32_row<const R: usize>(w: &[u8], x: [&[f32]; R]) -> [f32; R] {
    row::<4, R>(w, x, |w, at| f32::from_le_bytes([byte(w, at), byte(w, at + 1), byte(w, at + 2), byte(w, at + 3)]))
}

pub fn f16_row<const R: usize>(w: &[u8], x: [&[f32]; R]) -> [f32; R] {
    row::<2, R>(w, x, |w, at| f16(byte(w, at), byte(w, at + 1)))
}

pub fn bf16_row<const R: usize>(w: &[u8], x: [&[f32]; R]) -> [f32; R] {
    row::<2, R>(w, x, |w, at| f32::from_bits(u32::from(u16::from_le_bytes([byte(w, at), byte(w, at + 1)])) << 16))
}
