//! Fused dequantize-and-dot of one quantized weight row with up to `R` activation
//! rows: every block is unpacked into registers once and multiplied into each row's
//! own accumulators. Weights stay in their GGUF blocks.
//!
//! Two kinds of kernel, one per type:
//! - the 32-value-group types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q8_K) multiply
//!   codes with the activations' exact integer planes (`xplanes`), a pair of groups at
//!   a time, and scale each group's exact sums (four lanes of it) in f32;
//! - the others (Q2_K, Q3_K, Q6_K with 16-value groups, F32/F16/BF16) widen codes to f32
//!   lanes and multiply them with the f32 activations.
//!
//! Batch invariance: the arithmetic one (weight row, activation row) pair sees is the
//! same whatever `R` is and whatever rows share the call, so a prompt batch gives
//! exactly the logits of token-by-token decode. Each row's result is a sum of f32
//! lanes and a scalar, accumulated block by block in a fixed order (the legacy types
//! keep eight lanes, four for the even blocks and four for the odd, added at the end).
//!
//! Types with an additive block minimum (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K) use
//! `Σ (d·q + m)·x = d·Σ q·x + m·Σ x`, with `Σ x` per group precomputed once per
//! activation row by [`x_sums`] and shared by every weight row.

#[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
mod avx2;
mod float;
mod isa;
mod kquants;
mod lanes;
mod legacy;
mod simd;
#[cfg(test)]
mod speed;
#[cfg(test)]
mod tests;
mod xplanes;

use kindling_gguf::GgmlType;

use isa::Isa;
pub use lanes::Lanes;
use simd::F4;
pub use simd::LANES;
pub use xplanes::{planes_len, x_planes};

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

/// What a kernel reads of one activation row; [`Needs`] says which parts a type uses
/// (the others may be empty).
#[derive(Clone, Copy, Default)]
pub struct XRow<'a> {
    /// The `cols` activations.
    pub x: &'a [f32],
    /// Group sums ([`x_sums`] with [`Needs::sum_group`]).
    pub sums: &'a [f32],
    /// Integer planes and block scales ([`x_planes`]).
    pub planes: &'a [i16],
    pub scales: &'a [f32],
}

/// The per-row preparation a type's kernel needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    pub sum_group: Option<usize>,
    pub planes: bool,
}

pub fn needs(ty: GgmlType) -> Needs {
    use GgmlType::*;
    let sum_group = match ty {
        Q4_1 | Q5_1 | Q4K | Q5K => Some(32),
        Q2K => Some(16),
        _ => None,
    };
    let planes = matches!(ty, Q4_0 | Q4_1 | Q5_0 | Q5_1 | Q8_0 | Q4K | Q5K | Q8K);
    Needs { sum_group, planes }
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

/// How far ahead of the row being multiplied its successors' weights are asked for
/// ([`prefetch_ahead`]).
pub const PREFETCH_BYTES: usize = 4096;

/// Asks the memory system for the weight bytes that row `j`'s successors start with:
/// the `row_bytes` of `w` that end [`PREFETCH_BYTES`] past row `j`'s end, so over a walk
/// through the rows every cache line is asked for once, that far before its row is
/// reached. A matvec reads each weight once, and left to the hardware prefetcher a core
/// streamed weights at a fraction of the bandwidth a plain read loop gets here
/// (`speed::kernel_speed`). A hint only: no result depends on it; nothing off x86_64.
#[inline(always)]
pub fn prefetch_ahead(w: &[u8], row_bytes: usize, j: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let start = (j + 1) * row_bytes + PREFETCH_BYTES.saturating_sub(row_bytes);
        let end = (start + row_bytes).min(w.len());
        for at in (start..end).step_by(64) {
            // SAFETY: `at < w.len()`; a prefetch reads nothing and cannot fault.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(w.as_ptr().add(at).cast())
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (w, row_bytes, j, PREFETCH_BYTES);
}

/// `out[r] = w_row · x[r]` for `R` activation rows, where `w_row` is one row of `ty`'s
/// blocks and each `XRow` holds what [`needs`] asks for, on the CPU's widest lanes
/// ([`Lanes::best`]). Rows whose lengths do not match give 0 rather than panicking
/// (the caller checks shapes).
#[inline(never)]
pub fn dot_rows<const R: usize>(ty: GgmlType, w_row: &[u8], x: [XRow; R]) -> [f32; R] {
    // SAFETY: `best` returns only lanes this CPU supports.
    unsafe { dot_rows_unchecked(Lanes::best(), ty, w_row, x) }
}

/// [`dot_rows`] on the given lanes (the base lanes if this CPU lacks them); every
/// width gives the same bits.
#[cfg(test)]
pub fn dot_rows_on<const R: usize>(lanes: Lanes, ty: GgmlType, w_row: &[u8], x: [XRow; R]) -> [f32; R] {
    let lanes = if lanes.supported() { lanes } else { Lanes::Base };
    // SAFETY: checked just above.
    unsafe { dot_rows_unchecked(lanes, ty, w_row, x) }
}

/// SAFETY: the CPU must support `lanes` ([`Lanes::supported`]).
#[inline(always)]
unsafe fn dot_rows_unchecked<const R: usize>(lanes: Lanes, ty: GgmlType, w_row: &[u8], x: [XRow; R]) -> [f32; R] {
    match lanes {
        Lanes::Base => typed::<R>(ty, w_row, x),
        // SAFETY (both): the caller's promise; these need AVX2, FMA and F16C (and AVX-VNNI).
        #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
        Lanes::Avx2 => unsafe { x86::avx2(ty, w_row, x) },
        #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
        Lanes::Avx2Vnni => unsafe { x86::avx2_vnni(ty, w_row, x) },
    }
}

/// Every type's kernel on lanes `$I`, for `$R` rows. A macro rather than a function so
/// that its closures are written inside the `#[target_feature]` functions below and
/// inherit their features: a kernel passed as a function item would run in a shim
/// without them, and the wide intrinsics would stay calls.
macro_rules! typed {
    ($I:ty, $R:tt, $ty:expr, $w:expr, $x:expr) => {{
        let (w, x): (&[u8], [XRow; $R]) = ($w, $x);
        match $ty {
            GgmlType::F32 => float::f32_row::<$I, $R>(w, x.map(|r| r.x)),
            GgmlType::F16 => float::f16_row::<$I, $R>(w, x.map(|r| r.x), |i| <$I as Isa>::halves8(w, 2 * i)),
            GgmlType::BF16 => float::bf16_row::<$I, $R>(w, x.map(|r| r.x)),
            GgmlType::Q4_0 => legacy::row::<$I, 18, true, false, $R>(w, x, |b| legacy::q4_0(b)),
            GgmlType::Q4_1 => legacy::row::<$I, 20, false, true, $R>(w, x, |b| legacy::q4_1(b)),
            GgmlType::Q5_0 => legacy::row::<$I, 22, true, false, $R>(w, x, |b| legacy::q5_0::<$I>(b)),
            GgmlType::Q5_1 => legacy::row::<$I, 24, false, true, $R>(w, x, |b| legacy::q5_1::<$I>(b)),
            GgmlType::Q8_0 => legacy::row::<$I, 34, true, false, $R>(w, x, |b| legacy::q8_0(b)),
            GgmlType::Q2K => blocks::<84, 256, 16, 0, 0, $R>(w, x, |b, x, a| kquants::q2_k::<$I, $R>(b, x, a)),
            GgmlType::Q3K => blocks::<110, 256, 0, 0, 0, $R>(w, x, |b, x, a| kquants::q3_k::<$I, $R>(b, x, a)),
            GgmlType::Q4K => blocks::<144, 0, 8, 512, 8, $R>(w, x, |b, x, a| kquants::q4_k::<$I, $R>(b, x, a)),
            GgmlType::Q5K => blocks::<176, 0, 8, 512, 8, $R>(w, x, |b, x, a| kquants::q5_k::<$I, $R>(b, x, a)),
            GgmlType::Q6K => blocks::<210, 256, 0, 0, 0, $R>(w, x, |b, x, a| kquants::q6_k::<$I, $R>(b, x, a)),
            GgmlType::Q8K => blocks::<292, 0, 0, 512, 8, $R>(w, x, |b, x, a| kquants::q8_k::<$I, $R>(b, x, a)),
        }
    }};
}

/// [`dot_band`]'s loop on lanes `$I`: one activation row by every row of `$w`.
macro_rules! band {
    ($I:ty, $ty:expr, $w:expr, $row_bytes:expr, $x:expr, $out:expr) => {{
        let (w, row_bytes, x, out): (&[u8], usize, XRow, &mut [f32]) = ($w, $row_bytes, $x, $out);
        for (j, (w_row, o)) in w.chunks_exact(row_bytes).zip(out.iter_mut()).enumerate() {
            prefetch_ahead(w, row_bytes, j);
            *o = typed!($I, 1, $ty, w_row, [x])[0];
        }
    }};
}

/// `out[j] = w_row(j) · x` for the consecutive rows of `w` (`row_bytes` each, as many as
/// `out` holds): [`dot_rows`] of one activation row (a decode step's matvec), with the
/// loop over the rows inside the lane-specific code and each row's successors asked for
/// ahead ([`prefetch_ahead`]). A call per row, with its dispatch on lanes and type, cost
/// about a tenth of a decode step on SmolLM2's 576-value rows. The same bits as
/// [`dot_rows`].
#[inline(never)]
pub fn dot_band(ty: GgmlType, w: &[u8], row_bytes: usize, x: XRow, out: &mut [f32]) {
    if row_bytes == 0 {
        return;
    }
    // SAFETY: `best` returns only lanes this CPU supports; the x86 functions need them.
    match Lanes::best() {
        Lanes::Base => band!(isa::Base, ty, w, row_bytes, x, out),
        #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
        Lanes::Avx2 => unsafe { x86::avx2_band(ty, w, row_bytes, x, out) },
        #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
        Lanes::Avx2Vnni => unsafe { x86::avx2_vnni_band(ty, w, row_bytes, x, out) },
    }
}

#[inline(always)]
fn typed<const R: usize>(ty: GgmlType, w_row: &[u8], x: [XRow; R]) -> [f32; R] {
    typed!(isa::Base, R, ty, w_row, x)
}

/// The kernels compiled for the AVX2 lanes (each a whole copy of [`typed`]).
#[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
mod x86 {
    use super::{avx2::Avx2, blocks, float, kquants, legacy, prefetch_ahead, GgmlType, Isa, XRow};

    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn avx2<const R: usize>(ty: GgmlType, w_row: &[u8], x: [XRow; R]) -> [f32; R] {
        typed!(Avx2<false>, R, ty, w_row, x)
    }

    #[target_feature(enable = "avx2,fma,f16c,avxvnni")]
    pub unsafe fn avx2_vnni<const R: usize>(ty: GgmlType, w_row: &[u8], x: [XRow; R]) -> [f32; R] {
        typed!(Avx2<true>, R, ty, w_row, x)
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn avx2_band(ty: GgmlType, w: &[u8], row_bytes: usize, x: XRow, out: &mut [f32]) {
        band!(Avx2<false>, ty, w, row_bytes, x, out)
    }

    #[target_feature(enable = "avx2,fma,f16c,avxvnni")]
    pub unsafe fn avx2_vnni_band(ty: GgmlType, w: &[u8], row_bytes: usize, x: XRow, out: &mut [f32]) {
        band!(Avx2<true>, ty, w, row_bytes, x, out)
    }
}

/// One block's share of every row: `E` activations, `G` group sums, `P` plane values
/// and `S` block scales (a count of 0: not used by the type).
pub struct Block<'a, const E: usize, const G: usize, const P: usize, const S: usize, const R: usize> {
    pub x: [&'a [f32; E]; R],
    pub sums: [&'a [f32; G]; R],
    pub planes: [&'a [i16; P]; R],
    pub scales: [&'a [f32; S]; R],
}

/// Walks a row of `B`-byte blocks with `f`, the type's block kernel.
///
/// Each row's per-block arrays are found by index once the lengths are checked: a
/// chunk iterator per array and row (up to 16 of them for four rows) cost more
/// scalar work and register spills per block than the block's vector work.
#[inline(always)]
fn blocks<const B: usize, const E: usize, const G: usize, const P: usize, const S: usize, const R: usize>(
    w: &[u8],
    x: [XRow; R],
    f: impl Fn(&[u8; B], &Block<E, G, P, S, R>, &mut [Acc; R]),
) -> [f32; R] {
    let n = w.len() / B;
    let bad = |len: usize, per: usize| per > 0 && len != n * per;
    if x.iter().any(|r| bad(r.x.len(), E) || bad(r.sums.len(), G) || bad(r.planes.len(), P) || bad(r.scales.len(), S)) {
        return [0.0; R];
    }
    let mut acc = [Acc::zero(); R];
    for (i, b) in w.chunks_exact(B).enumerate() {
        let Ok(b) = <&[u8; B]>::try_from(b) else {
            break;
        };
        // SAFETY (each): every array with a non-zero count holds exactly `n` blocks of
        // it (checked above) and `i < n`.
        let block = unsafe {
            Block {
                x: x.map(|r| nth::<f32, E>(r.x, i)),
                sums: x.map(|r| nth::<f32, G>(r.sums, i)),
                planes: x.map(|r| nth::<i16, P>(r.planes, i)),
                scales: x.map(|r| nth::<f32, S>(r.scales, i)),
            }
        };
        f(b, &block, &mut acc);
    }
    acc.map(Acc::total)
}

/// Block `i` of `N` values of `s` (`N = 0`: an empty array).
///
/// SAFETY: for `N > 0`, `s` must hold at least `(i + 1) · N` values.
#[inline(always)]
unsafe fn nth<T: Zero, const N: usize>(s: &[T], i: usize) -> &[T; N] {
    if N == 0 {
        return T::zeros::<N>();
    }
    debug_assert!(s.len() >= (i + 1) * N);
    // SAFETY: the caller's promise; `[T; N]` has `T`'s alignment.
    unsafe { &*s.as_ptr().add(i * N).cast::<[T; N]>() }
}

/// Element types of the per-row arrays, with a zero array to initialise arrays of
/// references with.
trait Zero: Sized + 'static {
    fn zeros<const N: usize>() -> &'static [Self; N];
}
impl Zero for f32 {
    fn zeros<const N: usize>() -> &'static [f32; N] {
        Zeros::<N>::F32
    }
}
impl Zero for i16 {
    fn zeros<const N: usize>() -> &'static [i16; N] {
        Zeros::<N>::I16
    }
}

struct Zeros<const N: usize>;
impl<const N: usize> Zeros<N> {
    const F32: &'static [f32; N] = &[0.0; N];
    const I16: &'static [i16; N] = &[0; N];
}
