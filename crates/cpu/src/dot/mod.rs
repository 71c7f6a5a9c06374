//! Fused dequantize-and-dot of one quantized weight row with up to `R` activation
//! rows: every block is unpacked into registers once and multiplied into each row's
//! own accumulators. The activations stay f32; weights stay in their GGUF blocks.
//!
//! Batch invariance: the arithmetic one (weight row, activation row) pair sees is the
//! same whatever `R` is and whatever rows share the call, so a prompt batch gives
//! exactly the logits of token-by-token decode. Each row's result is
//! `acc.v.hsum() + acc.s`, accumulated block by block in a fixed order.
//!
//! Types with an additive block minimum (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K) use
//! `Σ (d·q + m)·x = d·Σ q·x + m·Σ x`, with `Σ x` per group precomputed once per
//! activation row by [`x_sums`] and shared by every weight row.

mod float;
mod kquants;
mod legacy;
mod simd;
#[cfg(test)]
mod tests;

use kindling_gguf::GgmlType;

pub use simd::F4;

/// One activation row's running sum: a vector part and a scalar part (block minima,
/// tails).
#[derive(Clone, Copy)]
pub struct Acc {
    pub v: F4,
    pub s: f32,
}

impl Acc {
    #[inline(always)]
    fn zero() -> Acc {
        Acc { v: F4::zero(), s: 0.0 }
    }

    #[inline(always)]
    fn total(self) -> f32 {
        self.v.hsum() + self.s
    }
}

/// Length of the activation groups whose sums `ty`'s kernel needs (`None`: none).
pub fn sum_group(ty: GgmlType) -> Option<usize> {
    match ty {
        GgmlType::Q4_1 | GgmlType::Q5_1 | GgmlType::Q4K | GgmlType::Q5K => Some(32),
        GgmlType::Q2K => Some(16),
        _ => None,
    }
}

/// Writes the sum of every `group` consecutive values of `x` into `out`
/// (`out.len() = x.len() / group`), each in a fixed lane order, so a weight row's
/// minimum term is the same whichever batch the row is in.
pub fn x_sums(x: &[f32], group: usize, out: &mut [f32]) {
    for (g, o) in x.chunks_exact(group).zip(out.iter_mut()) {
        let mut v = F4::zero();
        for at in (0..group).step_by(4) {
            v = v.add(F4::load(g, at));
        }
        *o = v.hsum();
    }
}

/// `out[r] = w_row · x[r]` for `R` activation rows of `cols` values each, where
/// `w_row` is one row of `ty`'s blocks. `sums[r]` holds `x[r]`'s group sums when
/// [`sum_group`] asks for them (otherwise it is ignored). Rows whose lengths do not
/// match give 0 rather than panicking (the caller checks shapes).
#[inline(never)]
pub fn dot_rows<const R: usize>(ty: GgmlType, w_row: &[u8], x: [&[f32]; R], sums: [&[f32]; R]) -> [f32; R] {
    match ty {
        GgmlType::F32 => float::f32_row(w_row, x),
        GgmlType::F16 => float::f16_row(w_row, x),
        GgmlType::BF16 => float::bf16_row(w_row, x),
        GgmlType::Q4_0 => blocks::<18, 32, 0, R>(w_row, x, sums, legacy::q4_0),
        GgmlType::Q4_1 => blocks::<20, 32, 1, R>(w_row, x, sums, legacy::q4_1),
        GgmlType::Q5_0 => blocks::<22, 32, 0, R>(w_row, x, sums, legacy::q5_0),
        GgmlType::Q5_1 => blocks::<24, 32, 1, R>(w_row, x, sums, legacy::q5_1),
        GgmlType::Q8_0 => blocks::<34, 32, 0, R>(w_row, x, sums, legacy::q8_0),
        GgmlType::Q2K => blocks::<84, 256, 16, R>(w_row, x, sums, kquants::q2_k),
        GgmlType::Q3K => blocks::<110, 256, 0, R>(w_row, x, sums, kquants::q3_k),
        GgmlType::Q4K => blocks::<144, 256, 8, R>(w_row, x, sums, kquants::q4_k),
        GgmlType::Q5K => blocks::<176, 256, 8, R>(w_row, x, sums, kquants::q5_k),
        GgmlType::Q6K => blocks::<210, 256, 0, R>(w_row, x, sums, kquants::q6_k),
        GgmlType::Q8K => blocks::<292, 256, 0, R>(w_row, x, sums, kquants::q8_k),
    }
}

/// Walks a row of `B`-byte blocks of `E` values with `G` activation sums each; `f` is
/// the type's block kernel: block bytes, each row's `E` activations and `G` group
/// sums, each row's accumulator.
#[inline(always)]
fn blocks<const B: usize, const E: usize, const G: usize, const R: usize>(
    w: &[u8],
    x: [&[f32]; R],
    sums: [&[f32]; R],
    f: impl Fn(&[u8; B], [&[f32; E]; R], [&[f32; G]; R], &mut [Acc; R]),
) -> [f32; R] {
    let n = w.len() / B;
    if x.iter().any(|x| x.len() != n * E) || (G > 0 && sums.iter().any(|s| s.len() != n * G)) {
        return [0.0; R];
    }
    let mut acc = [Acc::zero(); R];
    for (i, b) in w.chunks_exact(B).enumerate() {
        let (Ok(b), Some(xs), Some(ss)) = (<&[u8; B]>::try_from(b), arrays::<E, R>(x, i), arrays::<G, R>(sums, i)) else {
            break;
        };
        f(b, xs, ss, &mut acc);
    }
    acc.map(Acc::total)
}

/// Block `i` of every row as a fixed-size array.
#[inline(always)]
fn arrays<'a, const N: usize, const R: usize>(rows: [&'a [f32]; R], i: usize) -> Option<[&'a [f32; N]; R]> {
    let mut out: [&[f32; N]; R] = [Zeros::<N>::REF; R];
    for (o, r) in out.iter_mut().zip(rows) {
        *o = r.get(i * N..(i + 1) * N)?.try_into().ok()?;
    }
    Some(out)
}

/// A zero array to initialise arrays of references with.
struct Zeros<const N: usize>;
impl<const N: usize> Zeros<N> {
    const REF: &'static [f32; N] = &[0.0; N];
}
