//! The 32-value block types (layouts: `kindling_gguf::dequant::legacy`). Each kernel
//! unpacks its block's codes into f32 lanes once, then for every activation row adds
//! `d · Σ q·x` (and `m · Σ x` for the `_1` types) to that row's accumulator. Codes
//! of the `_0` types are made signed in the byte domain (exact) before widening.

use super::simd::{dot8, f16, B16, F4};
use super::Acc;

/// Low nibbles are values 0..16, high nibbles values 16..32.
#[inline(always)]
fn nibbles(b: &[u8], at: usize) -> (B16, B16) {
    let q = B16::load(b, at);
    (q.and(B16::splat(0x0f)), q.shr(4))
}

/// The fifth bits of a `Q5` block (u32 at `at`): 0x10 in byte i of the first vector
/// where value i has it, of the second where value 16 + i has it.
#[inline(always)]
fn high_bits(b: &[u8], at: usize) -> (B16, B16) {
    let qh = [0, 1, 2, 3].map(|i| b.get(at + i).copied().unwrap_or(0));
    (B16::from_bits(u16::from_le_bytes([qh[0], qh[1]]), 0x10), B16::from_bits(u16::from_le_bytes([qh[2], qh[3]]), 0x10))
}

/// Adds `d · Σ q·x` for every row; `lo`/`hi` are the 32 codes as f32 lanes.
#[inline(always)]
fn scaled<const R: usize>(lo: [F4; 4], hi: [F4; 4], d: f32, x: [&[f32; 32]; R], acc: &mut [Acc; R]) {
    let d = F4::splat(d);
    for (a, x) in acc.iter_mut().zip(x) {
        a.v = a.v.add(dot8(lo, hi, x, 0).mul(d));
    }
}

/// Adds the block minimum's term `m · Σ x` for every row.
#[inline(always)]
fn minimum<const R: usize>(m: f32, s: [&[f32; 1]; R], acc: &mut [Acc; R]) {
    for (a, s) in acc.iter_mut().zip(s) {
        a.s += m * s[0];
    }
}

pub fn q4_0<const R: usize>(b: &[u8; 18], x: [&[f32; 32]; R], _: [&[f32; 0]; R], acc: &mut [Acc; R]) {
    let (lo, hi) = nibbles(b, 2);
    let eight = B16::splat(8);
    scaled(lo.sub(eight).widen_i(), hi.sub(eight).widen_i(), f16(b[0], b[1]), x, acc);
}

pub fn q4_1<const R: usize>(b: &[u8; 20], x: [&[f32; 32]; R], s: [&[f32; 1]; R], acc: &mut [Acc; R]) {
    let (lo, hi) = nibbles(b, 4);
    scaled(lo.widen_u(), hi.widen_u(), f16(b[0], b[1]), x, acc);
    minimum(f16(b[2], b[3]), s, acc);
}

pub fn q5_0<const R: usize>(b: &[u8; 22], x: [&[f32; 32]; R], _: [&[f32; 0]; R], acc: &mut [Acc; R]) {
    let (lo, hi) = nibbles(b, 6);
    let (h0, h1) = high_bits(b, 2);
    let sixteen = B16::splat(16);
    scaled(lo.or(h0).sub(sixteen).widen_i(), hi.or(h1).sub(sixteen).widen_i(), f16(b[0], b[1]), x, acc);
}

pub fn q5_1<const R: usize>(b: &[u8; 24], x: [&[f32; 32]; R], s: [&[f32; 1]; R], acc: &mut [Acc; R]) {
    let (lo, hi) = nibbles(b, 8);
    let (h0, h1) = high_bits(b, 4);
    scaled(lo.or(h0).widen_u(), hi.or(h1).widen_u(), f16(b[0], b[1]), x, acc);
    minimum(f16(b[2], b[3]), s, acc);
}

pub fn q8_0<const R: usize>(b: &[u8; 34], x: [&[f32; 32]; R], _: [&[f32; 0]; R], acc: &mut [Acc; R]) {
    scaled(B16::load(b, 2).widen_i(), B16::load(b, 18).widen_i(), f16(b[0], b[1]), x, acc);
}
