//! Float weight rows (F32, F16, BF16): 32 values at a time into the vector
//! accumulator, a ragged tail (rows need not be a multiple of 32) into the scalar one.

use super::isa::Isa;
use super::simd::{f16, F4};
use super::Acc;

/// The value at byte offset `at` of a row of `W`-byte floats.
type Decode = fn(&[u8], usize) -> f32;

#[inline(always)]
fn row<I: Isa, const W: usize, const R: usize>(
    w: &[u8],
    x: [&[f32]; R],
    decode: Decode,
    eight: impl Fn(usize) -> [F4; 2],
) -> [f32; R] {
    let n = w.len() / W;
    if x.iter().any(|x| x.len() != n) {
        return [0.0; R];
    }
    let mut acc = [Acc { v: F4::zero(), s: 0.0 }; R];
    let whole = n / 32 * 32;
    for at in (0..whole).step_by(32) {
        let ([a, b], [c, d], [e, f], [g, h]) = (eight(at), eight(at + 8), eight(at + 16), eight(at + 24));
        let w = I::floats32([a, b, c, d, e, f, g, h]);
        for (a, x) in acc.iter_mut().zip(x) {
            a.v = a.v.add(I::dot32(w, x, at));
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

/// Values `i..i + 8` of a row of `W`-byte floats, one by one from one checked slice
/// of their bytes: with its length known LLVM drops the per-byte checks and loads
/// them as vectors (decoding through the whole row cost 1.7 ns a weight).
#[inline(always)]
fn each<const W: usize>(w: &[u8], i: usize, decode: Decode) -> [F4; 2] {
    let Some(b) = w.get(i * W..(i + 8) * W) else {
        return [F4::zero(), F4::zero()];
    };
    let lanes = |k: usize| F4::new(core::array::from_fn(|l| decode(b, (4 * k + l) * W)));
    [lanes(0), lanes(1)]
}

#[inline(always)]
pub fn f32_row<I: Isa, const R: usize>(w: &[u8], x: [&[f32]; R]) -> [f32; R] {
    let decode: Decode = |w, at| f32::from_le_bytes([byte(w, at), byte(w, at + 1), byte(w, at + 2), byte(w, at + 3)]);
    row::<I, 4, R>(w, x, decode, |i| each::<4>(w, i, decode))
}

/// Halves eight at a time by `eight(i)`, the lanes' widening of values `i..i + 8`
/// (`Isa::halves8`).
#[inline(always)]
pub fn f16_row<I: Isa, const R: usize>(w: &[u8], x: [&[f32]; R], eight: impl Fn(usize) -> [F4; 2]) -> [f32; R] {
    row::<I, 2, R>(w, x, |w, at| f16(byte(w, at), byte(w, at + 1)), eight)
}

#[inline(always)]
pub fn bf16_row<I: Isa, const R: usize>(w: &[u8], x: [&[f32]; R]) -> [f32; R] {
    let decode: Decode = |w, at| f32::from_bits(u32::from(u16::from_le_bytes([byte(w, at), byte(w, at + 1)])) << 16);
    row::<I, 2, R>(w, x, decode, |i| each::<2>(w, i, decode))
}
