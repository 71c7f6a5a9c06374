//! Prefill matmul for quantized weights: panels of weight rows dequantized to f32, then
//! a register-tiled f32 GEMM.
//!
//! Row by row (`crate::dot`), every (weight row, activation row) pair pays for its own
//! exact integer group sums, their folding and their scaling: about 25 instructions per
//! 32 weights and activation row, and the activations' integer planes (4 bytes a value)
//! stream from L2 again for every weight row. Here `W` weight rows at a time are
//! dequantized (exactly, `kindling_gguf::dequantize`) into a k-major panel of `KB`
//! values each, which sits in L1 while every activation row passes it: a step of one
//! value is a broadcast per row, one `W`-lane load shared by a tile of rows, and a
//! multiply and an add per row and lane. Each weight value is dequantized once per call.
//!
//! Arithmetic: output (r, j) is `Σ_blocks (Σ_{k in block} x[r][k] · w[j][k])`, the
//! inner sum sequential over the block's `KB` values (a multiply, then an add: never
//! fused), the outer one sequential over the blocks. That is defined per output, so the
//! result is the same for any batch size at or past [`QGEMM_ROWS`], any thread split
//! and any lane width (each lane is one output). It is not the row-by-row kernels'
//! arithmetic: a prompt batch of this size gives f32-accurate logits, not the bits of
//! decoding the same tokens one at a time.

use std::cell::RefCell;

use kindling_gguf::GgmlType;

use super::matmul::Layout;
use super::wide::{self, LaneKernel};

/// From this many activation rows, quantized weights take the panel path: each
/// dequantized value is then used at least this often.
pub const QGEMM_ROWS: usize = 16;

/// Weight rows per panel on the widest lanes: a band of weight rows that is a multiple
/// of it wastes no lanes (threads split the rows by it).
pub const PANEL_ROWS: usize = wide::WIDE;

/// Values of k per panel block: 256 × 16 f32 = 16 KiB, within L1 beside the rows'
/// accumulators; a multiple of every quantized type's block.
const KB: usize = 256;

/// Activation rows per register tile (`RR · W` accumulators, W weight rows being the
/// lanes: `wide::WIDE` or `wide::BASE`), measured: 4 on the wide lanes (6 and 8 spilled
/// or lost their vectorisation), 4 × 4 on the base lanes (16 × 1 and 8 × 2 ran 4% and
/// 11% slower on SSE2).
const RR: usize = 4;

/// Whether `ty` is a quantized type this path handles (the float types have their own
/// panels, `gemm`).
pub fn handles(ty: GgmlType) -> bool {
    ty.block_elems() > 1 && KB.is_multiple_of(ty.block_elems())
}

/// One thread's scratch: a panel (k-major, `KB × W`), its rows as dequantized (`W ×
/// KB`) on their way into it, and the panel's outputs for every activation row (`n × W`).
#[derive(Default)]
struct Panel {
    wt: Vec<f32>,
    rows: Vec<f32>,
    c: Vec<f32>,
}

thread_local! {
    static PANEL: RefCell<Panel> = RefCell::new(Panel::default());
}

/// Weight rows `a..b` of `w` (`row_bytes` each, `cols` values of quantized type `ty`)
/// times the `n` activation rows `x(r)` (`cols` values each), into `dst` as `at` lays
/// it out.
#[allow(clippy::too_many_arguments)]
pub fn quant_band<'x>(
    ty: GgmlType,
    n: usize,
    x: &impl Fn(usize) -> &'x [f32],
    w: &[u8],
    row_bytes: usize,
    cols: usize,
    (a, b): (usize, usize),
    dst: &mut [f32],
    at: Layout,
) {
    let job = Job { ty, n, x, w, row_bytes, cols, a, b, at };
    // The scratch is taken here, outside the wider-lane functions: code in a closure
    // passed to `with` would be compiled without their features.
    PANEL.with(|panel| wide::run_widest(Band { job: &job, dst, panel: &mut panel.borrow_mut() }))
}

/// What one call of [`quant_band`] multiplies (its arguments but the output).
struct Job<'j, X> {
    ty: GgmlType,
    n: usize,
    x: &'j X,
    w: &'j [u8],
    row_bytes: usize,
    cols: usize,
    a: usize,
    b: usize,
    at: Layout,
}

/// A band's job with its output and scratch, run at some lane width.
struct Band<'b, 'j, X> {
    job: &'b Job<'j, X>,
    dst: &'b mut [f32],
    panel: &'b mut Panel,
}

impl<'x, X: Fn(usize) -> &'x [f32]> LaneKernel for Band<'_, '_, X> {
    #[inline(always)]
    fn run<const W: usize>(self) {
        band::<W, X>(self.job, self.dst, self.panel)
    }
}

#[inline(always)]
fn band<'x, const W: usize, X: Fn(usize) -> &'x [f32]>(job: &Job<X>, dst: &mut [f32], panel: &mut Panel) {
    let Job { ty, n, x, w, row_bytes, cols, a, b, at } = *job;
    let Panel { wt, rows, c } = panel;
    wt.resize(KB * W, 0.0);
    rows.resize(W * KB, 0.0);
    c.resize(n * W, 0.0);
    for j0 in (a..b).step_by(W) {
        let j1 = (j0 + W).min(b);
        c.fill(0.0);
        for k0 in (0..cols).step_by(KB) {
            let kb = KB.min(cols - k0);
            fill_panel::<W>(ty, w, row_bytes, (j0, j1), (k0, kb), wt, rows);
            let wt = &wt[..kb * W];
            let mut r = 0;
            while r + RR <= n {
                let xs = core::array::from_fn(|i| x(r + i).get(k0..k0 + kb).unwrap_or(&[]));
                tile::<W, RR>(xs, wt, &mut c[r * W..]);
                r += RR;
            }
            for r in r..n {
                tile::<W, 1>([x(r).get(k0..k0 + kb).unwrap_or(&[])], wt, &mut c[r * W..]);
            }
        }
        for r in 0..n {
            for (jj, &v) in c[r * W..r * W + (j1 - j0)].iter().enumerate() {
                if let Some(o) = dst.get_mut(r * at.row + (j0 - a + jj) * at.col) {
                    *o = v;
                }
            }
        }
    }
}

/// Values `k0..k0 + kb` of weight rows `j0..j1` into `wt` (`wt[k · W + jj]`), by way
/// of `rows` (`rows[jj · KB + k]`, where they are dequantized); zeros for the lanes past
/// `j1`, and for a row whose blocks do not decode (as the row kernels give 0 for a
/// malformed weight).
#[inline(always)]
fn fill_panel<const W: usize>(
    ty: GgmlType,
    w: &[u8],
    row_bytes: usize,
    (j0, j1): (usize, usize),
    (k0, kb): (usize, usize),
    wt: &mut [f32],
    rows: &mut [f32],
) {
    let start = ty.bytes_for(k0 as u64).unwrap_or(0) as usize;
    let len = ty.bytes_for(kb as u64).unwrap_or(0) as usize;
    for (jj, row) in rows.chunks_exact_mut(KB).take(W).enumerate() {
        let row = &mut row[..kb];
        let j = j0 + jj;
        let src = w.get(j * row_bytes + start..j * row_bytes + start + len);
        let ok = j < j1 && src.is_some_and(|s| kindling_gguf::dequantize(ty, s, row).is_ok());
        if !ok {
            row.fill(0.0);
        }
    }
    // k outer: each step writes one contiguous run of W lanes.
    for (k, out) in wt.chunks_exact_mut(W).take(kb).enumerate() {
        for (jj, o) in out.iter_mut().enumerate() {
            *o = rows[jj * KB + k];
        }
    }
}

/// `c[i · W..][..W] += Σ_k xs[i][k] · wt[k · W..][..W]` for the `RR` rows, the sum
/// over k taken in order in `RR · W` accumulators (multiply, then add). Each lane is one
/// output, whatever W is. Also attention's scores (`wt` then a block of keys). (Writing
/// `c` at a stride instead cost a quarter of the matmul's speed: the accumulators left
/// the registers.)
#[inline(always)]
pub fn tile<const W: usize, const RR: usize>(xs: [&[f32]; RR], wt: &[f32], c: &mut [f32]) {
    let kb = wt.len() / W;
    if xs.iter().any(|x| x.len() != kb) || c.len() < RR * W {
        return;
    }
    let mut acc = [[0.0f32; W]; RR];
    for (k, wk) in wt.chunks_exact(W).enumerate() {
        for (acc, x) in acc.iter_mut().zip(&xs) {
            // SAFETY: every `x` holds `kb` values (checked above) and `k < kb`.
            let v = unsafe { *x.get_unchecked(k) };
            for (a, &w) in acc.iter_mut().zip(wk) {
                *a += v * w;
            }
        }
    }
    for (acc, c) in acc.iter().zip(c.chunks_exact_mut(W)) {
        for (c, a) in c.iter_mut().zip(acc) {
            *c += a;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reference::assert_near_f64;
    use super::*;

    /// Random `ty` weights (any bytes: a K-quant's scales and codes take what they get,
    /// its f16 scales masked to stay finite) and their exact values.
    fn weights(ty: GgmlType, rows: usize, cols: usize, seed: u64) -> (Vec<u8>, Vec<f32>) {
        let mut s = seed;
        let bytes: Vec<u8> = (0..rows * ty.bytes_for(cols as u64).unwrap() as usize)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                // 0x3b keeps an f16 scale's exponent small and finite wherever it lands.
                (s >> 32) as u8 & 0x3b
            })
            .collect();
        let mut values = vec![0.0f32; rows * cols];
        kindling_gguf::dequantize(ty, &bytes, &mut values).unwrap();
        (bytes, values)
    }

    fn run(ty: GgmlType, n: usize, x: &[f32], w: &[u8], rows: usize, cols: usize) -> Vec<f32> {
        let mut out = vec![f32::NAN; n * rows];
        let row_bytes = w.len() / rows;
        quant_band(
            ty,
            n,
            &|r| &x[r * cols..(r + 1) * cols],
            w,
            row_bytes,
            cols,
            (0, rows),
            &mut out,
            Layout { row: rows, col: 1 },
        );
        out
    }

    /// Every quantized type, with weight rows past one panel and ragged at its end, and
    /// columns over several k blocks (ragged for the 32-value types), against an f64
    /// reference within the bound of a sequential f32 sum: `(terms + 1) · 2^-24` of
    /// `Σ |x · w|` for a block of `KB` terms plus the sum of the blocks.
    #[test]
    fn panels_match_f64_for_every_quantized_type() {
        for ty in GgmlType::ALL.into_iter().filter(|t| handles(*t)) {
            let cols = if ty.block_elems() == 256 { 3 * KB } else { 2 * KB + 96 };
            let (n, rows) = (QGEMM_ROWS + 5, 2 * wide::WIDE + 3);
            let (w, wf) = weights(ty, rows, cols, 0x2545_f491 + ty as u64);
            let x: Vec<f32> = (0..n * cols).map(|i| ((i * 7919 % 1013) as f32 - 506.0) * 2.3e-3).collect();
            let out = run(ty, n, &x, &w, rows, cols);
            let bound = (KB + cols.div_ceil(KB) + 1) as f64 * f64::from(f32::EPSILON) / 2.0;
            assert_near_f64(&x, &wf, &out, (n, rows, cols), |mag| bound * mag, &ty.to_string());
        }
    }

    /// An output does not depend on the rows beside it in the batch, nor on which band
    /// of weight rows it was computed in, nor on the lane width.
    #[test]
    fn an_output_is_the_same_in_any_batch_band_and_width() {
        let (ty, rows, cols) = (GgmlType::Q4K, 37, 512);
        let (w, _) = weights(ty, rows, cols, 99);
        let n = 2 * QGEMM_ROWS + 3;
        let x: Vec<f32> = (0..n * cols).map(|i| ((i * 104_729 % 997) as f32 - 498.0) * 1.1e-2).collect();
        let all = run(ty, n, &x, &w, rows, cols);
        let tail = run(ty, QGEMM_ROWS, &x[(n - QGEMM_ROWS) * cols..], &w, rows, cols);
        assert_eq!(tail, all[(n - QGEMM_ROWS) * rows..], "the last rows alone");
        let row_bytes = w.len() / rows;
        let mut banded = vec![f32::NAN; n * rows];
        for (a, b) in [(0, 5), (5, 22), (22, rows)] {
            let (xr, at) = (|r: usize| &x[r * cols..(r + 1) * cols], Layout { row: rows, col: 1 });
            quant_band(ty, n, &xr, &w, row_bytes, cols, (a, b), &mut banded[a..], at);
        }
        assert_eq!(banded, all, "in three bands");
        let mut base = vec![f32::NAN; n * rows];
        let xr = |r: usize| &x[r * cols..(r + 1) * cols];
        let job = Job { ty, n, x: &xr, w: &w, row_bytes, cols, a: 0, b: rows, at: Layout { row: rows, col: 1 } };
        wide::run_base(Band { job: &job, dst: &mut base, panel: &mut Panel::default() });
        assert!(
            base.iter().zip(&all).all(|(a, b)| a.to_bits() == b.to_bits()),
            "base lanes against {:?}",
            crate::dot::Lanes::best()
        );
    }

    /// Weight bytes that do not decode (a block cut short) give zeros, not a panic.
    #[test]
    fn a_short_weight_gives_zeros() {
        let (ty, rows, cols, n) = (GgmlType::Q4K, 3, 256, QGEMM_ROWS);
        let (w, _) = weights(ty, rows, cols, 5);
        let x = vec![1.0f32; n * cols];
        let mut out = vec![f32::NAN; n * rows];
        let short = &w[..w.len() - 10];
        quant_band(
            ty,
            n,
            &|r| &x[r * cols..(r + 1) * cols],
            short,
            w.len() / rows,
            cols,
            (0, rows),
            &mut out,
            Layout { row: rows, col: 1 },
        );
        for r in 0..n {
            assert_eq!(out[r * rows + 2], 0.0, "row {r}");
            assert!(out[r * rows].is_finite());
        }
    }
}
