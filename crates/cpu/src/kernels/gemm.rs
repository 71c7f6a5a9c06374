//! Large-batch matmul with float weights (F32, F16, BF16), as encoders run a whole
//! input (or several packed inputs, up to thousands of rows) at once.
//!
//! Row by row, every weight row met all `n` activation rows before the next weight
//! row was read: the activations (`n × cols` floats, megabytes) streamed through the
//! caches once per weight row, and F16 weights were widened once per four rows (or,
//! on the base lanes, copied whole to F32 on every call). Here the weights go by
//! panels of rows small enough to stay in L2, widened to f32 once per panel into a
//! scratch kept by the thread; each group of four activation rows is then multiplied
//! by every row of the panel while it sits in L1.
//!
//! The arithmetic of each (weight row, activation row) pair is exactly that of
//! `crate::dot::dot_rows` on the F32 weights (widening F16/BF16 to f32 is exact), so
//! the result is bit for bit the single-row result: prefill equals decode, and every
//! lane width agrees.

use std::cell::RefCell;

use kindling_gguf::GgmlType;

use super::matmul::Layout;
use crate::dot::{dot_rows, XRow};

/// From this many activation rows, float weights take the panel path: each widened
/// weight is then used by at least four groups of four rows.
pub const GEMM_ROWS: usize = 16;

/// Activation rows per fused call (the register tile: four rows' accumulators beside
/// one weight row's 32 values).
const ROWS: usize = 4;

/// About this many bytes of widened weights per panel: within L2 beside the four
/// activation rows being multiplied.
const PANEL_BYTES: usize = 96 * 1024;

/// Whether `ty` is a float type this path handles.
pub fn is_float(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16)
}

thread_local! {
    /// One panel's weights widened to f32, and the same as little-endian bytes (what
    /// the F32 kernel reads); per thread, so bands on rayon's threads reuse theirs.
    static PANEL: RefCell<(Vec<f32>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Weight rows `a..b` of `w` (`row_bytes` each, `cols` values of type `ty`) times the
/// `n` activation rows `xrow(r)`, into `dst` as `at` lays it out.
#[allow(clippy::too_many_arguments)]
pub fn float_band<'x>(
    ty: GgmlType,
    n: usize,
    xrow: &impl Fn(usize) -> XRow<'x>,
    w: &[u8],
    row_bytes: usize,
    cols: usize,
    (a, b): (usize, usize),
    dst: &mut [f32],
    at: Layout,
) {
    let per = (PANEL_BYTES / (cols * 4).max(1)).clamp(1, 64);
    PANEL.with(|panel| {
        let mut panel = panel.borrow_mut();
        let (values, bytes) = &mut *panel;
        for p0 in (a..b).step_by(per) {
            let p1 = (p0 + per).min(b);
            let src = w.get(p0 * row_bytes..p1 * row_bytes).unwrap_or(&[]);
            let (weights, wrow) = if ty == GgmlType::F32 {
                (src, row_bytes)
            } else {
                values.clear();
                values.resize((p1 - p0) * cols, 0.0);
                if kindling_gguf::dequantize(ty, src, values).is_err() {
                    // A malformed weight gives zeros, as the row kernels do.
                    values.fill(0.0);
                }
                bytes.clear();
                bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
                (&bytes[..], cols * 4)
            };
            panel_times_rows(weights, wrow.max(1), p0 - a, n, xrow, dst, at);
        }
    });
}

/// One panel of F32 weight rows (`wrow` bytes each, the first being output column
/// `first` of `dst`) times every activation row.
fn panel_times_rows<'x>(
    weights: &[u8],
    wrow: usize,
    first: usize,
    n: usize,
    xrow: &impl Fn(usize) -> XRow<'x>,
    dst: &mut [f32],
    at: Layout,
) {
    let quads = n / ROWS;
    let mut put = |r: usize, j: usize, v: f32| {
        if let Some(o) = dst.get_mut(r * at.row + (first + j) * at.col) {
            *o = v;
        }
    };
    for q in 0..quads {
        let xs: [XRow; ROWS] = core::array::from_fn(|i| xrow(q * ROWS + i));
        for (j, wr) in weights.chunks_exact(wrow).enumerate() {
            for (i, v) in dot_rows::<ROWS>(GgmlType::F32, wr, xs).into_iter().enumerate() {
                put(q * ROWS + i, j, v);
            }
        }
    }
    for r in quads * ROWS..n {
        let xr = xrow(r);
        for (j, wr) in weights.chunks_exact(wrow).enumerate() {
            put(r, j, dot_rows::<1>(GgmlType::F32, wr, [xr])[0]);
        }
    }
}
