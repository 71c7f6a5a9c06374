//! Matrix × quantized weight: `out[r][j] = W[j] · x[r]`, with the weights read in
//! their GGUF blocks and dequantized in registers by `crate::dot`.

use kindling_gguf::GgmlType;

use super::{gemm, overwritten, qgemm};
use crate::dot::{dot_band, dot_rows, needs, planes_len, prefetch_ahead, x_planes, x_sums, Needs, XRow};
use crate::parallel;

/// Activation rows handed to one fused call: each weight block is unpacked once for
/// this many rows (prefill); decode has one.
const ROWS: usize = 4;

/// Per-matmul preparation of the activation rows (group sums, integer planes) and the
/// prefill's per-thread results, kept by the backend so the token loop does not
/// allocate.
#[derive(Default)]
pub struct Scratch {
    sums: Vec<f32>,
    planes: Vec<i16>,
    scales: Vec<f32>,
    /// A threaded prefill's results by output column (`[rows, n]`): each thread's band of
    /// columns is one contiguous run of it, copied into `out`'s `[n, rows]` at the end.
    columns: Vec<f32>,
}

/// Where output (activation row `r`, weight row `j`) of a band lands in its buffer:
/// `r * row + (j - first) * col`.
#[derive(Clone, Copy)]
pub struct Layout {
    pub row: usize,
    pub col: usize,
}

/// `x`: `[n, cols]`; `w`: `rows` rows of `cols` values in GGUF type `ty`;
/// `out`: `[n, rows]`. Float weights with `n >= gemm::GEMM_ROWS` go by cache-blocked
/// panels (`gemm`), with the same bits as row by row; quantized weights with
/// `n >= qgemm::QGEMM_ROWS` by dequantized panels (`qgemm`), f32-accurate but not the
/// row kernels' bits.
#[allow(clippy::too_many_arguments)]
pub fn matmul(
    x: &[f32],
    n: usize,
    ty: GgmlType,
    w: &[u8],
    rows: usize,
    cols: usize,
    out: &mut [f32],
    scratch: &mut Scratch,
) {
    let row_bytes = w.len() / rows.max(1);
    let float_panels = n >= gemm::GEMM_ROWS && gemm::is_float(ty);
    let quant_panels = n >= qgemm::QGEMM_ROWS && qgemm::handles(ty);
    // The panel paths read only the activations.
    let need = if quant_panels { Needs { sum_group: None, planes: false } } else { needs(ty) };
    let Scratch { sums, planes, scales, columns } = scratch;
    let prepared = Prepared::new(x, n, cols, need, (sums, planes, scales));
    let xrow = |r: usize| prepared.row(r);
    // Output columns a..b for every activation row, into `dst` as `at` lays it out.
    let fill = |a: usize, b: usize, dst: &mut [f32], at: Layout| {
        if float_panels {
            gemm::float_band(ty, n, &xrow, w, row_bytes, cols, (a, b), dst, at);
        } else if quant_panels {
            qgemm::quant_band(ty, n, &|r| xrow(r).x, w, row_bytes, cols, (a, b), dst, at);
        } else {
            row_band(ty, n, &xrow, w, row_bytes, (a, b), dst, at);
        }
    };
    let len = (n * rows).min(out.len());
    let out = &mut out[..len];
    if n == 1 {
        // Decode: a band of output columns is a run of `out`; written in place.
        parallel::for_each_band(out, 1, decode_band_rows(cols), |a, band| {
            fill(a, a + band.len(), band, Layout { row: 0, col: 1 })
        });
        return;
    }
    if parallel::threads() == 1 {
        fill(0, rows, out, Layout { row: rows, col: 1 });
        return;
    }
    // Prefill on several threads: each computes a band of output columns for every
    // activation row into its run of `columns` (`[rows, n]`), then it is transposed.
    // Quantized panels: bands of whole 16-row panels, as few as one a thread (a band's
    // ragged last panel costs as much as a full one). Bands of at least 64 rows had put
    // SmolLM2's 576 rows on 9 of 16 threads, and left 8 threads half-empty last panels.
    let (unit, min_units) = if quant_panels { (qgemm::PANEL_ROWS, 1) } else { (1, 64) };
    let columns = overwritten(columns, n * rows);
    parallel::for_each_band(columns, n * unit, min_units, |a, band| {
        fill(a * unit, a * unit + band.len() / n, band, Layout { row: 1, col: n })
    });
    // The transpose too is shared out, by activation rows (on one thread it would not
    // shrink with the matmul).
    let columns = &*columns;
    parallel::for_each_band(out, rows, 4, |r0, band| transpose_into(columns, n, r0, rows, band));
}

/// The fewest weight rows a decode band takes: about 2^14 products (a couple of
/// microseconds), so its start is worth it. 64 rows whatever their width had cut
/// SmolLM2's 576 rows of 576 into 9 bands, which 8 threads took in two rounds.
fn decode_band_rows(cols: usize) -> usize {
    ((1 << 14) / cols.max(1)).clamp(4, 64)
}

/// Activation rows `r0..` of the output (`out`, whole rows of `rows` values) from the
/// column scratch: `out[(r - r0) * rows + j] = columns[j * n + r]`, sixteen columns at
/// a time, so that each row takes a run of 16 outputs (one cache line) from 16 columns
/// whose lines stay cached for the next rows. Column by column, every store went to
/// another line (10% of a 2-thread prefill of SmolLM2).
fn transpose_into(columns: &[f32], n: usize, r0: usize, rows: usize, out: &mut [f32]) {
    const STRIP: usize = 16;
    for j0 in (0..rows).step_by(STRIP) {
        let j1 = (j0 + STRIP).min(rows);
        for (r, o) in out.chunks_exact_mut(rows).enumerate() {
            for (j, o) in o[j0..j1].iter_mut().enumerate() {
                if let Some(&v) = columns.get((j0 + j) * n + r0 + r) {
                    *o = v;
                }
            }
        }
    }
}

/// The activation rows as the row kernels read them: the rows, and the group sums and
/// integer planes the weight type needs (`crate::dot::needs`), made once per call.
#[derive(Clone, Copy)]
struct Prepared<'a> {
    x: &'a [f32],
    cols: usize,
    sums: (&'a [f32], usize),
    planes: (&'a [i16], usize),
    scales: (&'a [f32], usize),
}

impl<'a> Prepared<'a> {
    fn new(
        x: &'a [f32],
        n: usize,
        cols: usize,
        need: Needs,
        (sums, planes, scales): (&'a mut Vec<f32>, &'a mut Vec<i16>, &'a mut Vec<f32>),
    ) -> Self {
        let group = need.sum_group.unwrap_or(0);
        let per_sums = cols.checked_div(group).unwrap_or(0);
        let (per_planes, per_scales) = if need.planes { (planes_len(cols), cols / 32) } else { (0, 0) };
        sums.clear();
        sums.resize(n * per_sums, 0.0);
        planes.clear();
        planes.resize(n * per_planes, 0);
        scales.clear();
        scales.resize(n * per_scales, 0.0);
        for r in 0..n {
            let xr = x.get(r * cols..(r + 1) * cols).unwrap_or(&[]);
            if group > 0 {
                x_sums(xr, group, &mut sums[r * per_sums..(r + 1) * per_sums]);
            }
            if need.planes {
                x_planes(
                    xr,
                    &mut planes[r * per_planes..(r + 1) * per_planes],
                    &mut scales[r * per_scales..(r + 1) * per_scales],
                );
            }
        }
        Prepared { x, cols, sums: (sums, per_sums), planes: (planes, per_planes), scales: (scales, per_scales) }
    }

    fn row(&self, r: usize) -> XRow<'a> {
        let part = |(v, per): (&'a [f32], usize)| v.get(r * per..(r + 1) * per).unwrap_or(&[]);
        XRow {
            x: self.x.get(r * self.cols..(r + 1) * self.cols).unwrap_or(&[]),
            sums: part(self.sums),
            planes: self.planes.0.get(r * self.planes.1..(r + 1) * self.planes.1).unwrap_or(&[]),
            scales: part(self.scales),
        }
    }
}

/// Weight rows `a..b` times the `n` activation rows by the row kernels
/// (`crate::dot::dot_rows`, four activation rows a call), into `dst` as `at` lays it out.
#[allow(clippy::too_many_arguments)]
fn row_band<'x>(
    ty: GgmlType,
    n: usize,
    xrow: &impl Fn(usize) -> XRow<'x>,
    w: &[u8],
    row_bytes: usize,
    (a, b): (usize, usize),
    dst: &mut [f32],
    at: Layout,
) {
    if n == 1 && at.col == 1 {
        // One activation row into consecutive outputs (decode): the loop inside the kernel.
        let (w, dst) = (w.get(a * row_bytes..b * row_bytes).unwrap_or(&[]), dst.get_mut(..b - a).unwrap_or(&mut []));
        return dot_band(ty, w, row_bytes, xrow(0), dst);
    }
    let quads = n / ROWS;
    let band = w.get(..b * row_bytes).unwrap_or(w);
    for (j, wr) in w.chunks_exact(row_bytes.max(1)).enumerate().take(b).skip(a) {
        prefetch_ahead(band, row_bytes, j);
        let col = (j - a) * at.col;
        for q in 0..quads {
            let xs: [XRow; ROWS] = core::array::from_fn(|i| xrow(q * ROWS + i));
            for (i, v) in dot_rows::<ROWS>(ty, wr, xs).into_iter().enumerate() {
                if let Some(o) = dst.get_mut((q * ROWS + i) * at.row + col) {
                    *o = v;
                }
            }
        }
        for r in quads * ROWS..n {
            if let Some(o) = dst.get_mut(r * at.row + col) {
                *o = dot_rows::<1>(ty, wr, [xrow(r)])[0];
            }
        }
    }
}

/// One weight of a [`matvecs`] call: `rows` rows of GGUF type `ty` (the input's width
/// each), and where its `rows` outputs go.
pub struct Matvec<'a> {
    pub ty: GgmlType,
    pub w: &'a [u8],
    pub rows: usize,
    pub out: &'a mut [f32],
}

/// A [`matvecs`] call's scratch, kept by the backend so the token loop does not
/// allocate: each weight's preparation of the input, and the outputs end to end.
#[derive(Default)]
pub struct MatvecScratch {
    prepared: [Scratch; MAX_MATVECS],
    outputs: Vec<f32>,
}

/// Weights [`matvecs`] takes at once (a layer's q, k and v).
pub const MAX_MATVECS: usize = 3;

/// One activation row (a decode step) times up to [`MAX_MATVECS`] weights that read it
/// (q, k and v; gate and up), in one parallel section: their rows end to end are split
/// over the threads as one run. Each output is the row kernel's, exactly as [`matmul`]
/// gives it for that weight alone. A decode step is hundreds of small sections, each
/// paying a fork and a join (a few microseconds on 8 Xeon threads, more in the
/// browser's pool); this takes a layer's seven down to four.
pub fn matvecs(x: &[f32], parts: &mut [Matvec], scratch: &mut MatvecScratch) {
    let cols = x.len();
    let count = parts.len().min(MAX_MATVECS);
    let parts = &mut parts[..count];
    let MatvecScratch { prepared, outputs } = scratch;
    // The input prepared once per kind of need: q, k and v are mostly of one type.
    let need: [Option<Needs>; MAX_MATVECS] = core::array::from_fn(|i| parts.get(i).map(|p| needs(p.ty)));
    let mut prep: [Option<Prepared>; MAX_MATVECS] = [None; MAX_MATVECS];
    for (i, s) in prepared.iter_mut().enumerate() {
        let Some(n) = need[i] else { break };
        prep[i] = match (0..i).find(|&j| need[j] == Some(n)) {
            Some(j) => prep[j],
            None => {
                let Scratch { sums, planes, scales, .. } = s;
                Some(Prepared::new(x, 1, cols, n, (sums, planes, scales)))
            }
        };
    }
    let total: usize = parts.iter().map(|p| p.rows).sum();
    let outputs = overwritten(outputs, total);
    let weights: [Option<(GgmlType, &[u8], usize)>; MAX_MATVECS] =
        core::array::from_fn(|i| parts.get(i).map(|p| (p.ty, p.w, p.rows)));
    parallel::for_each_band(outputs, 1, decode_band_rows(cols), |first, band| {
        let (mut start, end) = (0, first + band.len());
        for (weight, prep) in weights.iter().zip(&prep) {
            let (&Some((ty, w, rows)), Some(prep)) = (weight, prep) else { break };
            let (lo, hi) = (first.max(start), end.min(start + rows));
            if lo < hi {
                let row_bytes = w.len() / rows.max(1);
                let dst = &mut band[lo - first..hi - first];
                row_band(
                    ty,
                    1,
                    &|r| prep.row(r),
                    w,
                    row_bytes,
                    (lo - start, hi - start),
                    dst,
                    Layout { row: 0, col: 1 },
                );
            }
            start += rows;
        }
    });
    let mut at = 0;
    for p in parts.iter_mut() {
        let n = p.rows.min(p.out.len());
        p.out[..n].copy_from_slice(&outputs[at..at + n]);
        at += p.rows;
    }
}

#[cfg(test)]
mod tests {
    use super::super::reference::assert_near_f64;
    use super::*;

    #[test]
    fn f32_matmul_matches_naive() {
        let (n, rows, cols) = (6, 5, 37);
        let x: Vec<f32> = (0..n * cols).map(|i| ((i * 7 % 13) as f32 - 6.0) / 4.0).collect();
        let wf: Vec<f32> = (0..rows * cols).map(|i| ((i * 5 % 11) as f32 - 5.0) / 3.0).collect();
        let w: Vec<u8> = wf.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = vec![0.0; n * rows];
        matmul(&x, n, GgmlType::F32, &w, rows, cols, &mut out, &mut Scratch::default());
        for r in 0..n {
            for j in 0..rows {
                let want: f32 = (0..cols).map(|c| x[r * cols + c] * wf[j * cols + c]).sum();
                assert!((out[r * rows + j] - want).abs() < 1e-4, "{r} {j}");
            }
        }
    }

    #[test]
    fn widened_float_weights_give_the_same_bits() {
        let (n, rows, cols) = (gemm::GEMM_ROWS + 3, 5, 70);
        let x: Vec<f32> = (0..n * cols).map(|i| ((i * 7 % 29) as f32 - 14.0) / 9.0).collect();
        for ty in [GgmlType::F16, GgmlType::BF16] {
            let w: Vec<u8> = (0..rows * cols * 2).map(|i| (i * 37 % 251) as u8 & 0x3f).collect();
            let mut wide = vec![0.0; n * rows];
            matmul(&x, n, ty, &w, rows, cols, &mut wide, &mut Scratch::default());
            let mut few = vec![0.0; 4 * rows];
            matmul(&x[..4 * cols], 4, ty, &w, rows, cols, &mut few, &mut Scratch::default());
            assert_eq!(few, wide[..4 * rows], "{ty}");
            // Whether or not this CPU's lanes widen (F16 on AVX2 does not): the same
            // bits as the weights handed over as F32.
            let mut values = vec![0.0f32; rows * cols];
            kindling_gguf::dequantize(ty, &w, &mut values).unwrap();
            let w32: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            let mut f32_out = vec![0.0; n * rows];
            matmul(&x, n, GgmlType::F32, &w32, rows, cols, &mut f32_out, &mut Scratch::default());
            assert_eq!(f32_out, wide, "{ty}");
        }
    }

    /// Random float weights of `ty` (finite, moderate) as GGUF bytes, and their values.
    fn float_weights(ty: GgmlType, count: usize, seed: u64) -> (Vec<u8>, Vec<f32>) {
        let mut s = seed;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        let values: Vec<f32> = (0..count).map(|_| next() * 3.0).collect();
        let bytes: Vec<u8> = match ty {
            GgmlType::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            GgmlType::F16 => values.iter().flat_map(|&v| f32_to_f16(v).to_le_bytes()).collect(),
            _ => values.iter().flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes()).collect(),
        };
        let mut exact = vec![0.0f32; count];
        kindling_gguf::dequantize(ty, &bytes, &mut exact).unwrap();
        (bytes, exact)
    }

    /// Round-toward-zero f32 -> f16 bits for normal values in range (all these tests
    /// need: some representable half near `v`).
    fn f32_to_f16(v: f32) -> u16 {
        let b = v.to_bits();
        let sign = ((b >> 16) & 0x8000) as u16;
        let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
        if exp <= 0 {
            return sign;
        }
        sign | ((exp as u16) << 10) | ((b >> 13) & 0x3ff) as u16
    }

    /// The panel path (n at and around `GEMM_ROWS`, weight rows over several panels and
    /// thread bands, ragged columns) against an f64 reference, and bit for bit against
    /// one activation row at a time.
    #[test]
    fn float_panels_match_f64_and_single_rows() {
        let g = gemm::GEMM_ROWS;
        for (n, rows, cols) in [(g - 1, 9, 70), (g, 150, 70), (g + 1, 67, 33), (g + 6, 130, 100), (2 * g + 3, 3, 1030)]
        {
            let x: Vec<f32> = (0..n * cols).map(|i| ((i * 7919 % 1013) as f32 - 506.0) * 2.3e-3).collect();
            for ty in [GgmlType::F32, GgmlType::F16, GgmlType::BF16] {
                let (w, wf) = float_weights(ty, rows * cols, 0x9e37_79b9 + (n * rows) as u64);
                let mut out = vec![f32::NAN; n * rows];
                matmul(&x, n, ty, &w, rows, cols, &mut out, &mut Scratch::default());
                assert_near_f64(&x, &wf, &out, (n, rows, cols), |mag| 1e-6 * mag + 1e-30, &ty.to_string());
                for r in [0, n / 2, n - 1] {
                    let mut one = vec![0.0; rows];
                    matmul(&x[r * cols..(r + 1) * cols], 1, ty, &w, rows, cols, &mut one, &mut Scratch::default());
                    assert_eq!(one, out[r * rows..(r + 1) * rows], "{ty} {n}x{rows}x{cols} row {r}");
                }
            }
        }
    }

    /// Kernel time per weight and activation row of a 768 x 3072 F16 matmul with 512
    /// rows, one thread (`KINDLING_CPU_LANES=sse2` to cap the width).
    /// `cargo test --release -p kindling-cpu --lib gemm_speed -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn gemm_speed() {
        crate::parallel::set_max_threads(1);
        let (n, rows, cols) = (512, 3072, 768);
        let x: Vec<f32> = (0..n * cols).map(|i| ((i * 7919 % 1013) as f32 - 506.0) * 2.3e-3).collect();
        for ty in [GgmlType::F16, GgmlType::F32] {
            let (w, _) = float_weights(ty, rows * cols, 7);
            // The row path for comparison: eight rows per call, below `GEMM_ROWS`.
            for (name, step) in [("panels", n), ("rows by 8", 8)] {
                let best = best_seconds(3, &x, n, step, ty, &w, (rows, cols));
                let per = best * 1e9 / (n * rows * cols) as f64;
                let gflops = 2.0 * (n * rows * cols) as f64 / best / 1e9;
                let lanes = crate::dot::Lanes::best();
                println!("{ty} {lanes:?} {name} n={n} {rows}x{cols}: {best:.3} s, {per:.4} ns/weight-row, {gflops:.2} GFLOP/s");
            }
        }
    }

    /// The best of `reps` timings of the speed tests' matmul: `n` activation rows `x`,
    /// `step` rows a call, weights `w` of `rows × cols` values of `ty`.
    fn best_seconds(
        reps: usize,
        x: &[f32],
        n: usize,
        step: usize,
        ty: GgmlType,
        w: &[u8],
        (rows, cols): (usize, usize),
    ) -> f64 {
        let (mut out, mut scratch) = (vec![0.0; n * rows], Scratch::default());
        let mut best = f64::MAX;
        for _ in 0..reps {
            let t = std::time::Instant::now();
            for r in (0..n).step_by(step) {
                let (x, out) = (&x[r * cols..(r + step) * cols], &mut out[r * rows..(r + step) * rows]);
                matmul(x, step, ty, w, rows, cols, out, &mut scratch);
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    }

    /// Kernel time of a quantized prefill matmul, panels against rows by 8, one thread:
    /// `KINDLING_SPEED_TYPE` (default Q4_K), `KINDLING_SPEED_SHAPE=ROWSxCOLS` (default
    /// 2048x2048), `KINDLING_SPEED_N` activation rows (default 128).
    /// `cargo test --release -p kindling-cpu --lib qgemm_speed -- --ignored --nocapture`
    /// Ignored: a benchmark that prints figures and asserts nothing (a timed test would
    /// only be noise on shared machines), seconds long in a release build; run by hand.
    #[test]
    #[ignore]
    fn qgemm_speed() {
        crate::parallel::set_max_threads(1);
        let ty = std::env::var("KINDLING_SPEED_TYPE")
            .ok()
            .and_then(|t| GgmlType::ALL.into_iter().find(|g| g.to_string() == t));
        let ty = ty.unwrap_or(GgmlType::Q4K);
        let shape = std::env::var("KINDLING_SPEED_SHAPE").unwrap_or_else(|_| "2048x2048".into());
        let (rows, cols) = shape.split_once('x').map(|(r, c)| (r.parse().unwrap(), c.parse().unwrap())).unwrap();
        let n = std::env::var("KINDLING_SPEED_N").map_or(128, |n| n.parse().unwrap());
        let x: Vec<f32> = (0..n * cols).map(|i| ((i * 7919 % 1013) as f32 - 506.0) * 2.3e-3).collect();
        let w: Vec<u8> =
            (0..rows * ty.bytes_for(cols as u64).unwrap() as usize).map(|i| (i * 37 % 251) as u8 & 0x3f).collect();
        for (name, step) in [("panels", n), ("rows by 8", 8)] {
            let best = best_seconds(5, &x, n, step, ty, &w, (rows, cols));
            let gflops = 2.0 * (n * rows * cols) as f64 / best / 1e9;
            let lanes = crate::dot::Lanes::best();
            println!("{ty} {lanes:?} {name} n={n} {rows}x{cols}: {:.2} ms, {gflops:.2} GFLOP/s", best * 1e3);
        }
    }

    /// Decode's matmuls on several threads: a layer's seven matrix-vector products of
    /// `KINDLING_SPEED_LAYER=HIDDEN,KV,FFN` (default SmolLM2's 576,192,1536) in
    /// `KINDLING_SPEED_TYPE` (default Q4_1), `KINDLING_SPEED_LAYERS` distinct layers (default
    /// 30, so the weights stream from memory as in decode), per token, and an empty parallel
    /// section, at each thread count up to the cores.
    /// `cargo test --release -p kindling-cpu --lib decode_speed -- --ignored --nocapture`
    /// Ignored: a benchmark that prints figures and asserts nothing; run by hand.
    #[test]
    #[ignore]
    fn decode_speed() {
        let ty = std::env::var("KINDLING_SPEED_TYPE")
            .ok()
            .and_then(|t| GgmlType::ALL.into_iter().find(|g| g.to_string() == t))
            .unwrap_or(GgmlType::Q4_1);
        let dims = std::env::var("KINDLING_SPEED_LAYER").unwrap_or_else(|_| "576,192,1536".into());
        let d: Vec<usize> = dims.split(',').map(|v| v.parse().unwrap()).collect();
        let (h, kv, ffn) = (d[0], d[1], d[2]);
        let layers = std::env::var("KINDLING_SPEED_LAYERS").map_or(30, |n| n.parse().unwrap());
        let shapes = [(h, h), (kv, h), (kv, h), (h, h), (ffn, h), (ffn, h), (h, ffn)];
        let weights: Vec<Vec<Vec<u8>>> = (0..layers)
            .map(|l| {
                let bytes = |(r, c): (usize, usize)| {
                    r * ty
                        .bytes_for(c as u64)
                        .unwrap_or_else(|| panic!("{c} values are not whole {ty} blocks (KINDLING_SPEED_LAYER)"))
                        as usize
                };
                shapes.iter().map(|&s| (0..bytes(s)).map(|i| ((i + l) * 37 % 251) as u8 & 0x3f).collect()).collect()
            })
            .collect();
        let x: Vec<f32> = (0..ffn.max(h)).map(|i| ((i * 7919 % 1013) as f32 - 506.0) * 2.3e-3).collect();
        let (mut out, mut scratch) = (vec![0.0; ffn.max(h)], Scratch::default());
        let (mut t, cores) = (1, crate::parallel::threads().max(1));
        while t <= cores {
            crate::parallel::set_max_threads(t);
            let mut best = f64::MAX;
            for _ in 0..20 {
                let start = std::time::Instant::now();
                for layer in &weights {
                    for (w, &(rows, cols)) in layer.iter().zip(&shapes) {
                        matmul(&x[..cols], 1, ty, w, rows, cols, &mut out[..rows], &mut scratch);
                    }
                }
                best = best.min(start.elapsed().as_secs_f64());
            }
            // The same with q/k/v and gate/up as one section each (`matvecs`).
            let (mut fused, mut mv) = (f64::MAX, MatvecScratch::default());
            let mut outs = [vec![0.0; ffn.max(h)], vec![0.0; ffn.max(h)], vec![0.0; ffn.max(h)]];
            for _ in 0..20 {
                let start = std::time::Instant::now();
                for layer in &weights {
                    for group in [&[0, 1, 2][..], &[3], &[4, 5], &[6]] {
                        let cols = shapes[group[0]].1;
                        let mut parts: Vec<Matvec> = outs
                            .iter_mut()
                            .zip(group)
                            .map(|(o, &i)| Matvec { ty, w: &layer[i], rows: shapes[i].0, out: &mut o[..shapes[i].0] })
                            .collect();
                        matvecs(&x[..cols], &mut parts, &mut mv);
                    }
                }
                fused = fused.min(start.elapsed().as_secs_f64());
            }
            let sections = 20_000;
            let start = std::time::Instant::now();
            for _ in 0..sections {
                let mut v = vec![0u8; t];
                crate::parallel::for_each_band(&mut v, 1, 1, |_, b| b[0] = 1);
            }
            let empty = start.elapsed().as_secs_f64() / sections as f64;
            // Inside a section: each layer's gate matvec (ffn rows) as one section, with
            // every band's start and end, to tell late starts from slow bands.
            let (cols, rows) = (shapes[4].1.min(x.len()), shapes[4].0);
            let Scratch { sums, planes, scales, .. } = &mut scratch;
            let prep = Prepared::new(&x[..cols], 1, cols, needs(ty), (sums, planes, scales));
            let (mut wall, mut last_start, mut mean_band, mut slowest) = (0.0, 0.0, 0.0, 0.0);
            let rounds = 20;
            for _ in 0..rounds {
                for layer in &weights {
                    let w = &layer[4];
                    let times = std::sync::Mutex::new(Vec::new());
                    let t0 = std::time::Instant::now();
                    crate::parallel::for_each_band(&mut out[..rows], 1, 64, |first, band| {
                        let start = t0.elapsed().as_secs_f64();
                        let rb = w.len() / rows;
                        dot_band(ty, &w[first * rb..(first + band.len()) * rb], rb, prep.row(0), band);
                        let end = t0.elapsed().as_secs_f64();
                        times.lock().unwrap().push((start, end - start));
                    });
                    wall += t0.elapsed().as_secs_f64();
                    let times = times.into_inner().unwrap();
                    last_start += times.iter().map(|t| t.0).fold(0.0, f64::max);
                    mean_band += times.iter().map(|t| t.1).sum::<f64>() / times.len() as f64;
                    slowest += times.iter().map(|t| t.1).fold(0.0, f64::max);
                }
            }
            let n_sections = (rounds * layers) as f64;
            println!(
                "threads {t}, one {rows}x{cols} matvec a section: {:.1} us wall; the last band starts at {:.1} us; bands take {:.1} us on average, the slowest {:.1}",
                wall / n_sections * 1e6,
                last_start / n_sections * 1e6,
                mean_band / n_sections * 1e6,
                slowest / n_sections * 1e6
            );
            let per = best / (layers * shapes.len()) as f64;
            println!(
                "{ty} {h},{kv},{ffn} x{layers} threads {t}: {:.3} ms a token's matmuls ({:.1} us each; {:.3} ms as 4 sections a layer), empty section {:.2} us",
                best * 1e3,
                per * 1e6,
                fused * 1e3,
                empty * 1e6
            );
            t *= 2;
        }
        crate::parallel::set_max_threads(0);
    }

    /// Several weights on one row in one section give each weight's `matmul` bits, for
    /// weights of different types and sizes whose rows the threads' bands cut across.
    #[test]
    fn matvecs_give_each_weights_matmul_bits() {
        let cols = 256;
        let x: Vec<f32> = (0..cols).map(|i| ((i * 7919 % 1013) as f32 - 506.0) * 2.3e-3).collect();
        // Three kinds of preparation; then two weights sharing one (a layer's q and k).
        let mixed = [(GgmlType::Q4_1, 200), (GgmlType::Q8_0, 70), (GgmlType::Q6K, 131)];
        let shared = [(GgmlType::Q4_1, 150), (GgmlType::Q4_1, 90), (GgmlType::Q8_0, 70)];
        for shapes in [mixed, shared] {
            let weights: Vec<Vec<u8>> = shapes
                .iter()
                .map(|&(ty, rows)| {
                    (0..rows * ty.bytes_for(cols as u64).unwrap() as usize)
                        .map(|i| (i * 37 % 251) as u8 & 0x3f)
                        .collect()
                })
                .collect();
            for count in [2, 3] {
                let mut outs: Vec<Vec<f32>> = shapes.iter().map(|&(_, rows)| vec![f32::NAN; rows]).collect();
                let mut parts: Vec<Matvec> = outs
                    .iter_mut()
                    .zip(&shapes)
                    .zip(&weights)
                    .take(count)
                    .map(|((out, &(ty, rows)), w)| Matvec { ty, w, rows, out })
                    .collect();
                matvecs(&x, &mut parts, &mut MatvecScratch::default());
                for ((out, &(ty, rows)), w) in outs.iter().zip(&shapes).zip(&weights).take(count) {
                    let mut alone = vec![f32::NAN; rows];
                    matmul(&x, 1, ty, w, rows, cols, &mut alone, &mut Scratch::default());
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(out), bits(&alone), "{ty} in {count}");
                }
            }
        }
    }

    /// Every output, whichever thread's band (decode in place, prefill through the
    /// column scratch) or batch it was computed in, bit for bit the one-row kernel's
    /// (quantized panels: the panel kernel's over all rows in one band).
    /// 300 weight rows split over this machine's threads (64 at least per band).
    #[test]
    fn thread_bands_give_the_one_row_results() {
        let (rows, cols) = (300, 256);
        for ty in [GgmlType::Q4K, GgmlType::Q6K, GgmlType::Q8_0, GgmlType::Q4_1, GgmlType::F16] {
            let row_bytes = ty.bytes_for(cols as u64).unwrap() as usize;
            let w: Vec<u8> = (0..rows * row_bytes).map(|i| (i * 37 % 251) as u8 & 0x3f).collect();
            for n in [1, 5, gemm::GEMM_ROWS + 1] {
                let x: Vec<f32> = (0..n * cols).map(|i| ((i * 7 % 29) as f32 - 14.0) / 9.0).collect();
                let mut out = vec![f32::NAN; n * rows];
                let mut scratch = Scratch::default();
                matmul(&x, n, ty, &w, rows, cols, &mut out, &mut scratch);
                // Twice with the same scratch: nothing left over from the first call counts.
                let mut again = vec![f32::NAN; n * rows];
                matmul(&x, n, ty, &w, rows, cols, &mut again, &mut scratch);
                if n >= qgemm::QGEMM_ROWS && qgemm::handles(ty) {
                    let mut whole = vec![f32::NAN; n * rows];
                    let xr = |r: usize| &x[r * cols..(r + 1) * cols];
                    qgemm::quant_band(
                        ty,
                        n,
                        &xr,
                        &w,
                        row_bytes,
                        cols,
                        (0, rows),
                        &mut whole,
                        Layout { row: rows, col: 1 },
                    );
                    assert!(whole.iter().zip(&out).all(|(a, b)| a.to_bits() == b.to_bits()), "{ty} n={n}");
                    assert!(whole.iter().zip(&again).all(|(a, b)| a.to_bits() == b.to_bits()), "{ty} n={n} again");
                    continue;
                }
                for r in 0..n {
                    let xr = &x[r * cols..(r + 1) * cols];
                    let need = needs(ty);
                    let mut sums = vec![0.0; need.sum_group.map_or(0, |g| cols / g)];
                    if let Some(g) = need.sum_group {
                        x_sums(xr, g, &mut sums);
                    }
                    let (mut planes, mut scales) = (vec![0i16; planes_len(cols)], vec![0.0f32; cols / 32]);
                    x_planes(xr, &mut planes, &mut scales);
                    let (planes, scales) = if need.planes { (&planes[..], &scales[..]) } else { (&[][..], &[][..]) };
                    let one = XRow { x: xr, sums: &sums, planes, scales };
                    for (j, wr) in w.chunks_exact(row_bytes).enumerate() {
                        let want = dot_rows::<1>(ty, wr, [one])[0];
                        assert_eq!(out[r * rows + j].to_bits(), want.to_bits(), "{ty} n={n} [{r}][{j}]");
                        assert_eq!(again[r * rows + j].to_bits(), want.to_bits(), "{ty} n={n} [{r}][{j}] again");
                    }
                }
            }
        }
    }

    #[test]
    fn batched_rows_equal_single_rows_exactly() {
        let (n, rows, cols) = (7, 3, 256);
        let x: Vec<f32> = (0..n * cols).map(|i| ((i * 7 % 29) as f32 - 14.0) / 9.0).collect();
        for ty in GgmlType::ALL {
            let w: Vec<u8> =
                (0..rows * ty.bytes_for(cols as u64).unwrap() as usize).map(|i| (i * 37 % 251) as u8 & 0x3f).collect();
            let mut all = vec![0.0; n * rows];
            matmul(&x, n, ty, &w, rows, cols, &mut all, &mut Scratch::default());
            for r in 0..n {
                let mut one = vec![0.0; rows];
                matmul(&x[r * cols..(r + 1) * cols], 1, ty, &w, rows, cols, &mut one, &mut Scratch::default());
                assert_eq!(one, all[r * rows..(r + 1) * rows], "{ty} row {r}");
            }
        }
    }
}
