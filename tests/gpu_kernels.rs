//! Every GPU kernel against the CPU backend (the reference), on random inputs of
//! awkward sizes (rows, columns and batch sizes that are not multiples of any
//! workgroup or tile), for every weight type. Each op is driven through the `Backend`
//! trait only: the same script runs on both backends and the results are compared.
//! Activations are filled by embedding an F32 table with ids 0..n.
//!
//! Tolerances (per element, |gpu - cpu|):
//! - embed: 1e-6 × |value| (dequantization is the same arithmetic; only a fused
//!   multiply-add may differ by an ulp)
//! - matmul: 1e-5 × Σ|w·x| + 1e-6 (f32 sums in another order; 1.2e-3 × Σ|w·x| for
//!   batches on cooperative matrices, whose inputs are f16: `matmul_rel_tol`)
//! - rms_norm: 2e-6 × |value| + 1e-6 (f32 sum of squares vs the CPU's f64)
//! - rope: 2e-6 (same host-computed angles; products may fuse)
//! - attention: 2e-5 (online softmax in chunks of 64 vs the CPU's two-pass softmax)
//! - gated / add / softcap / select_row / activation: 2e-6 × |value| + 1e-6 (exp/tanh
//!   of the GPU)
//! - layer_norm: 2e-6 × (1 + |value|) (f32 sums relative to the row's first value vs
//!   the CPU's f64)
//! - add_position_embedding: 1e-6 × |value| + 1e-7 (as embed, plus one addition)
//! - argmax: exact

#[path = "shared/attention_o.rs"]
mod attention_o;
#[path = "gpu_common.rs"]
mod gpu_common;

use gpu_common::{gpu, gpu_with, max_abs_diff};
use kindling_cpu::CpuBackend;
use kindling_gguf::GgmlType;
use kindling_gpu::{
    int_batch_pays, stored_row_bytes, GpuBackend, GpuOptions, KernelKey, ShaderFeatures, MATVEC_MAX_ROWS,
};
use kindling_model::{Activation, AttentionParams, Backend, KvSpec, QkRope, RopeConfig, RopeStyle, WeightSpec};
use kindling_testdata::random::{awkward_cols, f32_bytes, random_weight, Rng};

// ---- scripts, generic over the backend ------------------------------------------------

/// Uploads a weight in awkward pieces (as a network stream would deliver it).
fn weight<B: Backend>(b: &mut B, name: &str, ty: GgmlType, rows: usize, cols: usize, bytes: &[u8]) -> B::Weight {
    let spec = WeightSpec { name: name.into(), ty, cols, rows, n_bytes: bytes.len() as u64 };
    let mut w = b.alloc_weight(&spec).expect("alloc weight");
    let pieces = [7usize, 1, 13, 333, 4096, 2];
    let (mut at, mut i) = (0usize, 0usize);
    while at < bytes.len() {
        let n = pieces[i % pieces.len()].min(bytes.len() - at);
        b.write_weight(&mut w, at as u64, &bytes[at..at + n]).expect("write weight");
        at += n;
        i += 1;
    }
    b.finish_weight(&mut w).expect("finish weight");
    w
}

/// An F32 table whose rows are `data` (`rows × cols`), to fill activations with.
fn table<B: Backend>(b: &mut B, data: &[f32], cols: usize) -> B::Weight {
    weight(b, "input", GgmlType::F32, data.len() / cols, cols, &f32_bytes(data))
}

fn ids(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

fn read<B: Backend>(b: &mut B, a: B::Activation, rows: usize) -> Vec<f32> {
    pollster::block_on(b.read_rows(a, rows)).expect("read rows")
}

// ---- test data ------------------------------------------------------------------------

const ALL_TYPES: [GgmlType; 14] = GgmlType::ALL;

fn dequant(ty: GgmlType, bytes: &[u8], n: usize) -> Vec<f32> {
    let mut out = vec![0.0; n];
    kindling_gguf::dequantize(ty, bytes, &mut out).expect("dequantize");
    out
}

// ---- matmul and embed, every type ----------------------------------------------------

const BATCHES: [usize; 6] = [1, 3, 8, 9, 64, 67];

/// `out = W · x` for each batch size of BATCHES; returns the outputs concatenated.
fn matmul_script<B: Backend>(b: &mut B, ty: GgmlType, rows: usize, cols: usize, w: &[u8], x: &[f32]) -> Vec<Vec<f32>> {
    matmul_batches(b, ty, rows, cols, w, x, &BATCHES)
}

fn matmul_batches<B: Backend>(
    b: &mut B,
    ty: GgmlType,
    rows: usize,
    cols: usize,
    w: &[u8],
    x: &[f32],
    batches: &[usize],
) -> Vec<Vec<f32>> {
    let cap = *batches.iter().max().unwrap_or(&1);
    let wt = weight(b, "w", ty, rows, cols, w);
    let xt = table(b, x, cols);
    let xa = b.alloc_activation(cap, cols).expect("alloc");
    let out = b.alloc_activation(cap, rows).expect("alloc");
    batches
        .iter()
        .map(|&n| {
            b.begin_batch(&ids(n), 0).expect("batch");
            b.embed(&xt, 1.0, xa);
            b.matmul(xa, &wt, out);
            read(b, out, n)
        })
        .collect()
}

/// Relative tolerance (× Σ|w·x|) of a matmul of `n` activation rows on `gpu`: f32 sums
/// in another order, or, where the batch kernel runs on cooperative matrices (batches
/// above the decode matvec's MATVEC_MAX_ROWS), each input rounded to f16 (2^-11
/// relative, twice per product).
fn matmul_rel_tol(gpu: &GpuBackend, n: usize) -> f32 {
    if gpu.shader_features().coop_matrix && n > MATVEC_MAX_ROWS {
        1.2e-3
    } else {
        1e-5
    }
}

fn check_matmul(gpu: &mut GpuBackend, ty: GgmlType, rows: usize, seed: u64) -> f32 {
    check_matmul_cols(gpu, ty, rows, awkward_cols(ty), seed)
}

/// `check_matmul` with rows of `cols` values.
fn check_matmul_cols(gpu: &mut GpuBackend, ty: GgmlType, rows: usize, cols: usize, seed: u64) -> f32 {
    let mut rng = Rng(seed);
    let w = random_weight(&mut rng, ty, rows, cols);
    let cap = *BATCHES.iter().max().unwrap_or(&1);
    let x = rng.vec(cap * cols, -2.0, 2.0);
    let want = matmul_script(&mut CpuBackend::new(), ty, rows, cols, &w, &x);
    let got = matmul_script(gpu, ty, rows, cols, &w, &x);
    let wf = dequant(ty, &w, rows * cols);
    let mut worst_rel = 0.0f32;
    for ((n, want), got) in BATCHES.iter().zip(&want).zip(&got) {
        assert_eq!(want.len(), got.len());
        for r in 0..*n {
            for j in 0..rows {
                let scale: f32 = (0..cols).map(|c| (wf[j * cols + c] * x[r * cols + c]).abs()).sum();
                let (g, c) = (got[r * rows + j], want[r * rows + j]);
                let tol = matmul_rel_tol(gpu, *n) * scale + 1e-6;
                assert!(
                    (g - c).abs() <= tol,
                    "{ty:?} matmul n={n} row {r} out {j}: gpu {g} cpu {c} (|Δ| {} > tol {tol})",
                    (g - c).abs()
                );
                worst_rel = worst_rel.max((g - c).abs() / scale.max(1e-30));
            }
        }
    }
    worst_rel
}

/// Decode over a vocabulary-sized weight (`matvec_tall`: several rows per invocation),
/// with a row count that leaves the last workgroup partly empty.
#[test]
fn tall_decode_matvec_matches_cpu() {
    let mut b = gpu();
    let rows = 16384 + 27;
    for (i, ty) in [GgmlType::Q8_0, GgmlType::Q6K, GgmlType::Q4_1, GgmlType::F16].into_iter().enumerate() {
        let mut rng = Rng(300 + i as u64);
        let cols = ty.block_elems().max(64);
        let w = random_weight(&mut rng, ty, rows, cols);
        let x = rng.vec(cols, -2.0, 2.0);
        let want = matmul_batches(&mut CpuBackend::new(), ty, rows, cols, &w, &x, &[1]);
        let got = matmul_batches(&mut b, ty, rows, cols, &w, &x, &[1]);
        let wf = dequant(ty, &w, rows * cols);
        for j in 0..rows {
            let scale: f32 = (0..cols).map(|c| (wf[j * cols + c] * x[c]).abs()).sum();
            let (g, c) = (got[0][j], want[0][j]);
            assert!((g - c).abs() <= 1e-5 * scale + 1e-6, "{ty:?} tall matvec out {j}: gpu {g} cpu {c}");
        }
    }
}

#[test]
fn matmul_matches_cpu_for_every_type_and_batch_size() {
    // The device's variant (subgroup reductions where it has them, as lavapipe does;
    // the batch kernel on cooperative matrices where it has them, as an H100 does), the
    // same without cooperative matrices, and the workgroup-memory one browsers run;
    // then the device's variant again with wgpu's run-time checks compiled in
    // (GpuOptions::checked_shaders: the default leaves them out natively).
    let mut seen = Vec::new();
    for (allow_subgroups, allow_coop_matrix, checked_shaders) in
        [(true, true, false), (true, false, false), (false, false, false), (true, true, true)]
    {
        let mut b = gpu_with(GpuOptions { allow_subgroups, allow_coop_matrix, checked_shaders, ..Default::default() });
        if seen.contains(&(b.shader_features(), checked_shaders)) {
            continue;
        }
        seen.push((b.shader_features(), checked_shaders));
        let mut report = vec![format!("{:?}, checked shaders: {checked_shaders}", b.shader_features())];
        for (i, ty) in ALL_TYPES.into_iter().enumerate() {
            // 37 rows: not a multiple of the 4 rows of a matvec workgroup nor the 64 of a tile.
            let rel = check_matmul(&mut b, ty, 37, 100 + i as u64);
            report.push(format!("{ty:?}: max |Δ|/Σ|w·x| = {rel:.2e}"));
        }
        eprintln!("{}", report.join("\n"));
    }
}

#[test]
fn wide_decode_matvecs_share_a_row_among_many_lanes_and_match_cpu() {
    // Few rows of many values (a down projection's shape, scaled down): the decode
    // matvec gives each row 256 lanes (a whole workgroup), whose sums meet across
    // subgroups.
    assert_eq!(kindling_gpu::matvec_lanes(37, 4096), 256);
    assert_eq!(kindling_gpu::matvec_lanes(8960, 1536), 16);
    assert_eq!(kindling_gpu::matvec_lanes(1536, 1536), 64);
    // Qwen2.5 0.5B's 896-wide rows: 64 lanes of 14 values (one or two 8-value chunks:
    // the lanes end unevenly), but 32 for the 4,864-row gate/up.
    assert_eq!(kindling_gpu::matvec_lanes(896, 896), 64);
    assert_eq!(kindling_gpu::matvec_lanes(4864, 896), 32);
    assert_eq!(kindling_gpu::matvec_lanes(37, 896), 64);
    for allow_subgroups in [true, false] {
        let mut b = gpu_with(GpuOptions { allow_subgroups, ..Default::default() });
        for (i, ty) in
            [GgmlType::Q4K, GgmlType::Q6K, GgmlType::Q8_0, GgmlType::Q5_0, GgmlType::F16].into_iter().enumerate()
        {
            let rel = check_matmul_cols(&mut b, ty, 37, 4096, 300 + i as u64);
            eprintln!("{ty:?} 37 x 4096 (subgroups {allow_subgroups}): max |Δ|/Σ|w·x| = {rel:.2e}");
        }
        for (i, ty) in [GgmlType::Q8_0, GgmlType::Q5_0, GgmlType::F16].into_iter().enumerate() {
            let rel = check_matmul_cols(&mut b, ty, 37, 896, 310 + i as u64);
            eprintln!("{ty:?} 37 x 896 (subgroups {allow_subgroups}): max |Δ|/Σ|w·x| = {rel:.2e}");
        }
    }
}

/// The batch matmul over integer dot products (shaders/matmul_int.wgsl), which prefill
/// runs where the device has no cooperative matrices (lavapipe, browsers): chosen for
/// every type with units, within the f32 class against the CPU on inputs with outliers
/// (a run's scale is its largest value: Qwen's down projections have such inputs), over
/// tiles left partly empty both ways, its dot products split into spans (as the f32
/// kernel's: few tiles); off with its switch. With fewer digits per
/// activation value (a measuring knob) within the bound their rounding gives.
#[test]
fn batch_matmul_on_integer_dot_products_matches_cpu_and_is_chosen_where_int_dot_is_on() {
    let int_types = [GgmlType::Q4K, GgmlType::Q6K, GgmlType::Q8_0, GgmlType::Q5_0, GgmlType::Q4_0, GgmlType::Q4_1];
    let (rows, n) = (100, 130);
    // (switch, digits asked for, digits expected: 0 for the f32 kernel, every unit type or
    // only those where it pays: tuning::int_batch_pays)
    for (allow_int_batch, int_batch_digits, digits, int_batch_every_type) in [
        (true, None, 3, true),
        (true, None, 3, false),
        (false, None, 0, true),
        (true, Some(1), 1, true),
        (true, Some(2), 2, true),
    ] {
        let options = GpuOptions {
            allow_coop_matrix: false,
            allow_int_batch,
            int_batch_digits,
            int_batch_every_type,
            ..Default::default()
        };
        let mut b = gpu_with(options);
        assert_eq!(b.shader_features().int_batch, digits, "lavapipe has room for the staging");
        // The largest |value| a run of 16 activations is rounded to (quantize_runs.wgsl's
        // qx_max): each value is off by at most its run's largest / qx_max (half a step,
        // and the f32 rounding of v / scale at the top).
        let qx_max = match digits {
            1 => 127.0,
            2 => 32639.0,
            _ => 8355711.0f32,
        };
        for (i, ty) in int_types.into_iter().enumerate() {
            // Three blocks of 256 (three spans of a block each: 6 tiles of 64 × 64 split
            // until 1,024 workgroups or spans of 256 values), or 17 units of 32 (two spans,
            // 320 and 224 values: the last step half empty).
            let cols = if ty.block_elems() == 256 { 768 } else { 544 };
            let mut rng = Rng(900 + i as u64);
            let w = random_weight(&mut rng, ty, rows, cols);
            let mut x = rng.vec(n * cols, -1.0, 1.0);
            for v in x.iter_mut().step_by(37) {
                *v *= 300.0;
            }
            let (before, splits_before) = (b.stats().int_batch_matmuls, b.stats().split_batch_matmuls);
            let want = matmul_batches(&mut CpuBackend::new(), ty, rows, cols, &w, &x, &[n, 65]);
            let got = matmul_batches(&mut b, ty, rows, cols, &w, &x, &[n, 65]);
            let ran = b.stats().int_batch_matmuls - before;
            assert_eq!(b.stats().split_batch_matmuls - splits_before, 2, "{ty:?}: split dot products");
            let chosen = digits > 0 && (int_batch_every_type || int_batch_pays(ty, digits));
            assert_eq!(ran, if chosen { 2 } else { 0 }, "{ty:?}: batch matmuls on integer dot products");
            let wf = dequant(ty, &w, rows * cols);
            let run_max: Vec<f32> = x.chunks(16).map(|r| r.iter().fold(0.0f32, |m, v| m.max(v.abs()))).collect();
            let mut worst = 0.0f32;
            for ((&m, want), got) in [n, 65].iter().zip(&want).zip(&got) {
                for r in 0..m {
                    for j in 0..rows {
                        let wr = &wf[j * cols..(j + 1) * cols];
                        let scale: f32 = wr.iter().zip(&x[r * cols..]).map(|(w, x)| (w * x).abs()).sum();
                        let rounding: f32 = if digits > 0 {
                            wr.iter().enumerate().map(|(c, w)| w.abs() * run_max[(r * cols + c) / 16] / qx_max).sum()
                        } else {
                            0.0
                        };
                        let (g, c) = (got[r * rows + j], want[r * rows + j]);
                        let tol = 1e-5 * scale + rounding + 1e-6;
                        assert!(
                            (g - c).abs() <= tol,
                            "{ty:?} n={m} row {r} out {j}: gpu {g} cpu {c} (digits {digits})"
                        );
                        worst = worst.max((g - c).abs() / scale.max(1e-30));
                    }
                }
            }
            eprintln!("{ty:?} {rows} x {cols}, digits {digits}: max |Δ|/Σ|w·x| = {worst:.2e}");
        }
    }
}

#[test]
fn large_batch_matmuls_run_as_dequantized_panels_and_match_cpu() {
    // From WIDE_MIN_ROWS activation rows a batch matmul can dequantize its weight into
    // panels, then multiply (matmul_wide): f32 panels on the shader cores, f16 on
    // cooperative matrices (where the device has them; elsewhere that run is the shader
    // cores' again); here every weight (GpuOptions::wide_every_weight: these are small).
    // 650 weight rows: five whole 128-row tiles and a part; 259 and 300 activation rows:
    // the third tile of rows mostly empty. Once with panels as large as the weight, once
    // with max_part_bytes holding a panel of 1,024 values to 256 rows (three panels, the
    // last of 138 rows; the float types' weights also split into parts, each its own
    // panels).
    let rows = 650;
    let batches = [300, 259];
    for (max_part_bytes, allow_coop_matrix) in
        [(None, false), (Some(1 << 20), false), (None, true), (Some(1 << 20), true)]
    {
        let options = GpuOptions { allow_coop_matrix, wide_every_weight: true, max_part_bytes, ..Default::default() };
        let mut b = gpu_with(options);
        let coop = b.shader_features().coop_matrix;
        if allow_coop_matrix && !coop {
            eprintln!("no cooperative matrices here: the f16 panels are not run");
            continue;
        }
        for (i, ty) in ALL_TYPES.into_iter().enumerate() {
            // 1,024 values (four spans of 256: three tiles of rows × six of weight rows,
            // split), or three blocks of a 32-value type (96, not split), or for f16 and
            // bf16 100 (the last 8-value step half past the row's end).
            let cols = match (i % 2, ty.block_elems()) {
                (0, _) => 1024,
                (_, 1) => 100,
                (_, be) => be.max(32) * 3,
            };
            let mut rng = Rng(1300 + i as u64);
            let w = random_weight(&mut rng, ty, rows, cols);
            let x = rng.vec(300 * cols, -2.0, 2.0);
            let before = b.stats();
            let want = matmul_batches(&mut CpuBackend::new(), ty, rows, cols, &w, &x, &batches);
            let got = matmul_batches(&mut b, ty, rows, cols, &w, &x, &batches);
            let (wide, panels) = (
                b.stats().wide_batch_matmuls - before.wide_batch_matmuls,
                b.stats().panels_dequantized - before.panels_dequantized,
            );
            // Each weight part, in each of the two batches, as panels of whole 128-row
            // tiles within the limit (64 MiB, or max_part_bytes).
            let limit = max_part_bytes.unwrap_or(64 << 20);
            let part_rows = ((limit / stored_row_bytes(ty, cols) as u64) as usize).min(rows);
            let panel_rows = (limit / (cols as u64 * 4)) as usize / 128 * 128;
            let (mut want_wide, mut want_panels) = (0u64, 0u64);
            for r0 in (0..rows).step_by(part_rows) {
                let pr = part_rows.min(rows - r0);
                want_wide += 2;
                want_panels += 2 * pr.div_ceil(panel_rows) as u64;
            }
            // The f16 panels' kernel loads 8 values a chunk: rows of 100 stay on matmul_tiled.
            if coop && cols % 8 != 0 {
                (want_wide, want_panels) = (0, 0);
            }
            assert_eq!(wide, want_wide, "{ty:?} × {cols}: matmuls as panels");
            assert_eq!(panels, want_panels, "{ty:?} × {cols}: panels");
            let wf = dequant(ty, &w, rows * cols);
            let mut worst = 0.0f32;
            for ((&n, want), got) in batches.iter().zip(&want).zip(&got) {
                for r in 0..n {
                    for j in 0..rows {
                        let scale: f32 = (0..cols).map(|c| (wf[j * cols + c] * x[r * cols + c]).abs()).sum();
                        let (g, c) = (got[r * rows + j], want[r * rows + j]);
                        let tol = matmul_rel_tol(&b, n) * scale + 1e-6;
                        assert!((g - c).abs() <= tol, "{ty:?} n={n} row {r} out {j}: gpu {g} cpu {c}");
                        worst = worst.max((g - c).abs() / scale.max(1e-30));
                    }
                }
            }
            // f16 panels round the inputs (relative 2^-11 each): far above f32 sums' error,
            // so this also shows the cooperative-matrix kernel ran, not the f32 one.
            if coop && want_wide > 0 {
                assert!(worst > 1e-5, "{ty:?}: f16 panels' error {worst:.1e} is an f32 kernel's");
            }
            eprintln!("{ty:?} {rows} x {cols}, {panels} panels (coop {coop}): max |Δ|/Σ|w·x| = {worst:.2e}");
        }
    }
}

/// A batch's gate and up, then act(gate) * up, over `batches` rows each: the gated
/// output, and gate and up where `read_gate_up` (the fused GPU paths do not write them).
#[allow(clippy::too_many_arguments)]
fn gated_batches<B: Backend>(
    b: &mut B,
    ty: GgmlType,
    (rows, cols): (usize, usize),
    [wg, wu]: [&[u8]; 2],
    x: &[f32],
    act: Activation,
    batches: &[usize],
    read_gate_up: bool,
) -> Vec<[Vec<f32>; 3]> {
    let cap = *batches.iter().max().unwrap_or(&1);
    let (gt, ut) = (weight(b, "gate", ty, rows, cols, wg), weight(b, "up", ty, rows, cols, wu));
    let xt = table(b, x, cols);
    let xa = b.alloc_activation(cap, cols).expect("alloc");
    let [gate, up, out] = [0; 3].map(|_| b.alloc_activation(cap, rows).expect("alloc"));
    batches
        .iter()
        .map(|&n| {
            b.begin_batch(&ids(n), 0).expect("batch");
            b.embed(&xt, 1.0, xa);
            b.matmul(xa, &gt, gate);
            b.matmul(xa, &ut, up);
            b.gated_activation(gate, up, act, out);
            let o = read(b, out, n);
            if read_gate_up {
                [o, read(b, gate, n), read(b, up, n)]
            } else {
                [o, vec![], vec![]]
            }
        })
        .collect()
}

#[test]
fn large_batch_gate_and_up_run_as_one_gated_panel_matmul_and_match_cpu() {
    // A large batch's gate and up with their gated activation take one panel
    // interleaving the two weights' rows (64 of each per 128-row tile) and one matmul_wide
    // writing act(gate) * up: f16 on cooperative matrices, f32 on the shader cores
    // (lavapipe, browsers; there from WIDE_GATED_MIN_ROWS rows, here at any: every weight
    // takes panels, wide_every_weight). 4,100 rows: 65 gated tiles, the last with 4 gate
    // rows (the rest repeat the last row); 512 and 400 activation rows (4 tiles of rows
    // each, so unsplit on cooperative matrices). Once with one panel, once with
    // max_part_bytes holding 1,536 rows of 256 values: three f16 panels of 1,536 pairs, or
    // six f32 panels of 768.
    let (rows, cols) = (4100, 256);
    let batches = [512, 400];
    let cases = [(GgmlType::Q4K, Activation::Silu), (GgmlType::Q6K, Activation::GeluTanh)];
    for max_part_bytes in [None, Some(3 << 19)] {
        let mut b = gpu_with(GpuOptions { wide_every_weight: true, max_part_bytes, ..Default::default() });
        let coop = b.shader_features().coop_matrix;
        for (i, (ty, act)) in cases.into_iter().enumerate() {
            let mut rng = Rng(1400 + i as u64);
            let (wg, wu) = (random_weight(&mut rng, ty, rows, cols), random_weight(&mut rng, ty, rows, cols));
            let x = rng.vec(512 * cols, -2.0, 2.0);
            let want = gated_batches(&mut CpuBackend::new(), ty, (rows, cols), [&wg, &wu], &x, act, &batches, true);
            let before = b.stats();
            let got = gated_batches(&mut b, ty, (rows, cols), [&wg, &wu], &x, act, &batches, false);
            let (wide, panels) = (
                b.stats().wide_batch_matmuls - before.wide_batch_matmuls,
                b.stats().panels_dequantized - before.panels_dequantized,
            );
            let panels_each = match (max_part_bytes, coop) {
                (None, _) => 1,
                (Some(_), true) => 3,
                (Some(_), false) => 6,
            };
            let (want_wide, want_panels) = (2, 2 * panels_each);
            assert_eq!((wide, panels), (want_wide, want_panels), "{ty:?}: matmuls as panels, panels (coop {coop})");
            let (fg, fu) = (dequant(ty, &wg, rows * cols), dequant(ty, &wu, rows * cols));
            let mut worst = 0.0f32;
            for ((&n, [wo, wgv, wuv]), [go, ..]) in batches.iter().zip(&want).zip(&got) {
                let rel = matmul_rel_tol(&b, n);
                for r in 0..n {
                    for j in 0..rows {
                        let sg: f32 = (0..cols).map(|c| (fg[j * cols + c] * x[r * cols + c]).abs()).sum();
                        let su: f32 = (0..cols).map(|c| (fu[j * cols + c] * x[r * cols + c]).abs()).sum();
                        let k = r * rows + j;
                        let a = if wuv[k] != 0.0 { wo[k] / wuv[k] } else { 0.0 };
                        let tol = gated_tol(rel, (sg, su), (wuv[k], a), wo[k]);
                        assert!(
                            (go[k] - wo[k]).abs() <= tol,
                            "{ty:?} {act:?} n={n} out [{r}, {j}]: gpu {} cpu {} (g {}, u {})",
                            go[k],
                            wo[k],
                            wgv[k],
                            wuv[k]
                        );
                        worst = worst.max((go[k] - wo[k]).abs() / tol);
                    }
                }
            }
            eprintln!("gated panels {ty:?} {act:?}, {panels} panels (coop {coop}): max |Δ| / tolerance {worst:.2}");
        }
    }
}

/// Two batch matmuls over one input, then the input written again and a third.
fn shared_input_script<B: Backend>(b: &mut B, ty: GgmlType, cols: usize, w: [&[u8]; 2], x: &[f32]) -> Vec<Vec<f32>> {
    let (rows, n) = (w[0].len() / (cols / ty.block_elems() * ty.block_bytes()), x.len() / cols);
    let (w1, w2) = (weight(b, "w1", ty, rows, cols, w[0]), weight(b, "w2", ty, rows, cols, w[1]));
    let xt = table(b, x, cols);
    let xa = b.alloc_activation(n, cols).expect("alloc");
    let outs: Vec<_> = (0..3).map(|_| b.alloc_activation(n, rows).expect("alloc")).collect();
    b.begin_batch(&ids(n), 0).expect("batch");
    b.embed(&xt, 1.0, xa);
    b.matmul(xa, &w1, outs[0]);
    b.matmul(xa, &w2, outs[1]);
    b.embed(&xt, 2.0, xa);
    b.matmul(xa, &w1, outs[2]);
    outs.iter().map(|&o| read(b, o, n)).collect()
}

/// The integer-dot batch matmul reads its input as quantize_runs left it: once for
/// matmuls back to back over the same input (q, k and v), again once the input was
/// written (here doubled: a stale quantization would give the first result again).
#[test]
fn batch_matmuls_over_one_input_quantize_it_once_until_it_is_written() {
    let mut b = gpu_with(GpuOptions { allow_coop_matrix: false, ..Default::default() });
    assert!(b.shader_features().int_batch > 0, "the device runs the integer-dot batch kernel");
    let (ty, rows, cols, n) = (GgmlType::Q4K, 100, 768, 130);
    let mut rng = Rng(950);
    let (w1, w2) = (random_weight(&mut rng, ty, rows, cols), random_weight(&mut rng, ty, rows, cols));
    let x = rng.vec(n * cols, -1.0, 1.0);
    let before = b.stats().batch_inputs_quantized;
    let got = shared_input_script(&mut b, ty, cols, [&w1, &w2], &x);
    assert_eq!(b.stats().batch_inputs_quantized - before, 2, "inputs quantized");
    let want = shared_input_script(&mut CpuBackend::new(), ty, cols, [&w1, &w2], &x);
    for (i, (w, scale_x)) in [(&w1, 1.0f32), (&w2, 1.0), (&w1, 2.0)].into_iter().enumerate() {
        let wf = dequant(ty, w, rows * cols);
        for r in 0..n {
            for j in 0..rows {
                let wr = &wf[j * cols..(j + 1) * cols];
                let scale: f32 = wr.iter().zip(&x[r * cols..]).map(|(w, x)| (w * x * scale_x).abs()).sum();
                let (g, c) = (got[i][r * rows + j], want[i][r * rows + j]);
                assert!((g - c).abs() <= 1e-5 * scale + 1e-6, "matmul {i} row {r} out {j}: gpu {g} cpu {c}");
            }
        }
    }
}

#[test]
fn matmul_over_a_weight_split_across_buffers() {
    // Parts of 5 rows (Q8_0) or so: every matmul dispatches once per part.
    for (i, ty) in [GgmlType::Q8_0, GgmlType::Q6K, GgmlType::F16, GgmlType::Q4_0].into_iter().enumerate() {
        let row_bytes = (awkward_cols(ty) / ty.block_elems() * ty.block_bytes()).next_multiple_of(4) as u64;
        // (The f32 input table of the test must still fit one part.)
        let part = (row_bytes * 5 + 3).max(awkward_cols(ty) as u64 * 4);
        let mut b = gpu_with(GpuOptions { max_part_bytes: Some(part), ..Default::default() });
        check_matmul(&mut b, ty, 131, 200 + i as u64);
    }
}

/// `res += W · x` after `out = W · x` (the GPU joins the two into one dispatch), then
/// with `norm` (its weight) `h = rms_norm(res)` (a prefill's o or down projection, its
/// residual add and the next norm); returns [res, out, h] per batch size (h empty
/// without `norm`).
#[allow(clippy::too_many_arguments)]
fn matmul_add_script<B: Backend>(
    b: &mut B,
    ty: GgmlType,
    rows: usize,
    cols: usize,
    w: &[u8],
    x: &[f32],
    r: &[f32],
    norm: Option<&[f32]>,
    batches: &[usize],
) -> Vec<[Vec<f32>; 3]> {
    let cap = *batches.iter().max().unwrap_or(&1);
    let wt = weight(b, "w", ty, rows, cols, w);
    let (xt, rt) = (table(b, x, cols), table(b, r, rows));
    let nt = norm.map(|nw| table(b, nw, rows));
    let xa = b.alloc_activation(cap, cols).expect("alloc");
    let out = b.alloc_activation(cap, rows).expect("alloc");
    let res = b.alloc_activation(cap, rows).expect("alloc");
    let h = b.alloc_activation(cap, rows).expect("alloc");
    batches
        .iter()
        .map(|&n| {
            b.begin_batch(&ids(n), 0).expect("batch");
            b.embed(&xt, 1.0, xa);
            b.embed(&rt, 1.0, res);
            b.matmul(xa, &wt, out);
            b.add(res, out);
            let normed = match &nt {
                Some(nt) => {
                    b.rms_norm(res, nt, rows, 1e-5, h);
                    read(b, h, n)
                }
                None => Vec::new(),
            };
            [read(b, res, n), read(b, out, n), normed]
        })
        .collect()
}

/// Checks matmul_add_script's out and res of activation row `row` (of a batch of `n`)
/// against the CPU's, each within the matmul's tolerance of its Σ|w·x| (`wf`: the weight
/// dequantized); returns the largest of those tolerances.
#[allow(clippy::too_many_arguments)]
fn check_matmul_add_row(
    b: &GpuBackend,
    what: &str,
    (n, row): (usize, usize),
    (rows, cols): (usize, usize),
    wf: &[f32],
    x: &[f32],
    want: &[Vec<f32>; 3],
    got: &[Vec<f32>; 3],
) -> f32 {
    let ([wr, wo, _], [gr, go, _]) = (want, got);
    let mut worst = 0.0f32;
    for j in 0..rows {
        let scale: f32 = (0..cols).map(|c| (wf[j * cols + c] * x[row * cols + c]).abs()).sum();
        let tol = matmul_rel_tol(b, n) * scale + 1e-5;
        worst = worst.max(tol);
        let k = row * rows + j;
        assert!((go[k] - wo[k]).abs() <= tol, "{what} n={n} out [{row}, {j}]: gpu {} cpu {}", go[k], wo[k]);
        assert!((gr[k] - wr[k]).abs() <= tol, "{what} n={n} res [{row}, {j}]: gpu {} cpu {}", gr[k], wr[k]);
    }
    worst
}

#[test]
fn matmul_then_residual_add_matches_cpu_also_over_split_weights() {
    // The default kernels over BATCHES; then batches of 300 and 259 rows as dequantized
    // panels (matmul_wide: the residual added by its stores, unsplit, or by the split
    // sums).
    let wide = |allow_split_k| GpuOptions {
        allow_coop_matrix: false,
        wide_every_weight: true,
        allow_split_k,
        ..Default::default()
    };
    let runs = [(GpuOptions::default(), &BATCHES[..]), (wide(false), &[300, 259][..]), (wide(true), &[300, 259][..])];
    for (options, batches) in runs {
        for (i, (ty, part)) in
            [(GgmlType::Q4_1, None), (GgmlType::Q4K, None), (GgmlType::Q8_0, Some(5))].into_iter().enumerate()
        {
            let mut rng = Rng(300 + i as u64);
            let (rows, cols) = (131, awkward_cols(ty));
            let w = random_weight(&mut rng, ty, rows, cols);
            let cap = *batches.iter().max().unwrap_or(&1);
            let (x, r) = (rng.vec(cap * cols, -2.0, 2.0), rng.vec(cap * rows, -2.0, 2.0));
            let row_bytes = (cols / ty.block_elems() * ty.block_bytes()).next_multiple_of(4) as u64;
            let max_part_bytes = part.map(|p| (row_bytes * p + 3).max(cols as u64 * 4).max(rows as u64 * 4));
            let mut b = gpu_with(GpuOptions { max_part_bytes, ..options.clone() });
            let want = matmul_add_script(&mut CpuBackend::new(), ty, rows, cols, &w, &x, &r, None, batches);
            let got = matmul_add_script(&mut b, ty, rows, cols, &w, &x, &r, None, batches);
            // (Not over Q8_0's five-row parts: a panel of whole 128-row tiles must fit in a
            // part's bytes, so that weight stays on matmul_tiled.)
            if options.wide_every_weight {
                let panels = b.stats().wide_batch_matmuls;
                assert_eq!(panels, if part.is_none() { 2 } else { 0 }, "{ty:?}: matmuls as panels");
            }
            let wf = dequant(ty, &w, rows * cols);
            for ((&n, wanted), gotten) in batches.iter().zip(&want).zip(&got) {
                for row in 0..n {
                    check_matmul_add_row(&b, &format!("{ty:?}"), (n, row), (rows, cols), &wf, &x, wanted, gotten);
                }
            }
        }
    }
}

#[test]
fn split_matmul_sums_take_the_next_rms_norm_in_and_match_cpu() {
    // A batch matmul whose dot products split into spans, its residual add, then the
    // norm of the residual stream: the spans' sums, the add and the norm are one
    // dispatch (matmul_split_sum_norm). On matmul_tiled (integer dots for Q4_K on the
    // shader cores) and on dequantized panels (matmul_wide); unsplit batches and decode
    // keep the norm apart. 768 values a row: three spans on the shader cores; 2,560 as
    // panels: ten (past one SUM_STEP of spans). 1,100 outputs a row: two SUM_COLS rounds
    // of columns, the second part-empty.
    let wide = GpuOptions { allow_coop_matrix: false, wide_every_weight: true, ..Default::default() };
    let runs = [
        (GpuOptions::default(), &[1, 9, 67][..], (200, 768)),
        (GpuOptions::default(), &[67][..], (1100, 768)),
        (wide, &[300, 259][..], (200, 2560)),
    ];
    for (options, batches, (rows, cols)) in runs {
        for (i, ty) in [GgmlType::Q4K, GgmlType::Q6K, GgmlType::Q8_0].into_iter().enumerate() {
            let mut rng = Rng(700 + i as u64);
            let w = random_weight(&mut rng, ty, rows, cols);
            let cap = *batches.iter().max().unwrap_or(&1);
            let (x, r) = (rng.vec(cap * cols, -2.0, 2.0), rng.vec(cap * rows, -2.0, 2.0));
            let nw = rng.vec(rows, 0.5, 1.5);
            let mut b = gpu_with(options.clone());
            let want = matmul_add_script(&mut CpuBackend::new(), ty, rows, cols, &w, &x, &r, Some(&nw), batches);
            let got = matmul_add_script(&mut b, ty, rows, cols, &w, &x, &r, Some(&nw), batches);
            let (split, normed) = (b.stats().split_batch_matmuls, b.stats().split_sums_normed);
            eprintln!("{ty:?} {rows}x{cols} {batches:?}: {split} split matmuls, {normed} with the norm taken in");
            // Every batch (more than MATVEC_MAX_ROWS rows) splits here, and each split's
            // sums take the norm in.
            let batch_runs = batches.iter().filter(|&&n| n > MATVEC_MAX_ROWS).count() as u64;
            assert_eq!((split, normed), (batch_runs, batch_runs), "{ty:?}: split matmuls, norms taken in");
            let wf = dequant(ty, &w, rows * cols);
            for ((&n, wanted), gotten) in batches.iter().zip(&want).zip(&got) {
                let ([wr, _, wh], [_, _, gh]) = (wanted, gotten);
                for row in 0..n {
                    // The norm's input carries each output's error; its scale, their rms.
                    let what = format!("{ty:?}");
                    let worst = check_matmul_add_row(&b, &what, (n, row), (rows, cols), &wf, &x, wanted, gotten);
                    let row_res = &wr[row * rows..(row + 1) * rows];
                    let rms = (row_res.iter().map(|v| v * v).sum::<f32>() / rows as f32).sqrt();
                    for (j, wj) in nw.iter().enumerate() {
                        let k = row * rows + j;
                        // |Δh| ≤ weight · (|Δres| + |res| · Δrms/rms) / rms, Δrms ≤ the worst |Δres|.
                        let tol = wj * (worst + wr[k].abs() * worst / rms) / rms + 2e-6 * wh[k].abs() + 1e-6;
                        assert!(
                            (gh[k] - wh[k]).abs() <= tol,
                            "{ty:?} n={n} norm [{row}, {j}]: gpu {} cpu {}",
                            gh[k],
                            wh[k]
                        );
                    }
                }
            }
        }
    }
}

/// `gate = Wg · x`, `up = Wu · x`, `out = act(gate) * up` (the GPU joins the three
/// into one dispatch per weight part in decode, and for a batch on cooperative
/// matrices); returns (out, gate, up, dispatches of the three ops) per batch size, gate
/// and up read only where `read_gate_up` (reading them is the CPU's job: the fused GPU
/// path does not write them). Then the two matmuls alone (held as a pair, flushed
/// unfused by the read) give (gate, up) again.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn gated_ffn_script<B: Backend>(
    b: &mut B,
    ty: GgmlType,
    rows: usize,
    cols: usize,
    wg: &[u8],
    wu: &[u8],
    x: &[f32],
    act: Activation,
    read_gate_up: bool,
) -> Vec<(Vec<f32>, Vec<f32>, Vec<f32>, u64)> {
    let cap = *BATCHES.iter().max().unwrap_or(&1);
    let (gt, ut) = (weight(b, "gate", ty, rows, cols, wg), weight(b, "up", ty, rows, cols, wu));
    let xt = table(b, x, cols);
    let xa = b.alloc_activation(cap, cols).expect("alloc");
    let gate = b.alloc_activation(cap, rows).expect("alloc");
    let up = b.alloc_activation(cap, rows).expect("alloc");
    let out = b.alloc_activation(cap, rows).expect("alloc");
    [1, 3, 9]
        .iter()
        .map(|&n| {
            b.begin_batch(&ids(n), 0).expect("batch");
            b.embed(&xt, 1.0, xa);
            let d0 = b.counters().dispatches;
            b.matmul(xa, &gt, gate);
            b.matmul(xa, &ut, up);
            b.gated_activation(gate, up, act, out);
            let o = read(b, out, n);
            let d = b.counters().dispatches - d0;
            let (g, u) = if read_gate_up {
                (read(b, gate, n), read(b, up, n))
            } else {
                b.matmul(xa, &gt, gate);
                b.matmul(xa, &ut, up);
                (read(b, gate, n), read(b, up, n))
            };
            (o, g, u, d)
        })
        .collect()
}

/// Tolerance of a gated output act(gate) * up: each matmul's relative error (`rel` of
/// its Σ|w·x|: sg for gate, su for up) carried through the product (the activation's
/// slope taken as at most 1.2), plus the activation's own f32 error.
fn gated_tol(rel: f32, (sg, su): (f32, f32), (up, act): (f32, f32), out: f32) -> f32 {
    rel * (1.2 * sg * up.abs() + su * act.abs()) + 2e-6 * out.abs() + 1e-5
}

#[test]
fn gate_up_and_gated_activation_fuse_in_decode_and_match_cpu_also_over_split_weights() {
    // (type, rows per weight part, activation, row width where not awkward_cols: the
    // fused norm stages rows of up to 2,048 values in workgroup memory, wider ones not)
    let cases = [
        (GgmlType::Q4_1, None, Activation::Silu, None),
        (GgmlType::Q4K, None, Activation::GeluTanh, None),
        (GgmlType::Q5_0, None, Activation::GeluTanh, None),
        (GgmlType::F16, None, Activation::Silu, None),
        (GgmlType::Q8_0, Some(5), Activation::Silu, None),
        (GgmlType::Q6K, Some(7), Activation::GeluTanh, None),
        (GgmlType::Q8_0, None, Activation::Silu, Some(2304)),
    ];
    for (i, (ty, part, act, width)) in cases.into_iter().enumerate() {
        let mut rng = Rng(400 + i as u64);
        let (rows, cols) = (131, width.unwrap_or_else(|| awkward_cols(ty)));
        let (wg, wu) = (random_weight(&mut rng, ty, rows, cols), random_weight(&mut rng, ty, rows, cols));
        let x = rng.vec(9 * cols, -2.0, 2.0);
        let row_bytes = (cols / ty.block_elems() * ty.block_bytes()).next_multiple_of(4) as u64;
        let max_part_bytes = part.map(|p| (row_bytes * p + 3).max(cols as u64 * 4).max(rows as u64 * 4));
        let mut b = gpu_with(GpuOptions { max_part_bytes, ..Default::default() });
        let want = gated_ffn_script(&mut CpuBackend::new(), ty, rows, cols, &wg, &wu, &x, act, true);
        let got = gated_ffn_script(&mut b, ty, rows, cols, &wg, &wu, &x, act, false);
        let (fg, fu) = (dequant(ty, &wg, rows * cols), dequant(ty, &wu, rows * cols));
        // Batches of 3 rows are not joined: a matvec per part for each weight, then gated.
        let parts = (got[1].3 - 1) / 2;
        assert_eq!(got[0].3, parts, "{ty:?}: dispatches of gate, up and gated in decode over {parts} weight parts");
        assert_eq!(parts > 1, part.is_some());
        // A batch (9 rows) on cooperative matrices: one dispatch for all three where the
        // dot products are not split (split_k: two spans need 2 × 128 values or more).
        if b.shader_features().coop_matrix && parts == 1 && cols < 256 {
            assert_eq!(got[2].3, 1, "{ty:?}: dispatches of gate, up and gated over 9 rows");
        }
        let mut worst = 0.0f32;
        for (n, ((wo, wgv, wuv, _), (go, ggv, guv, _))) in [1usize, 3, 9].iter().zip(want.iter().zip(&got)) {
            for r in 0..*n {
                for j in 0..rows {
                    let sg: f32 = (0..cols).map(|c| (fg[j * cols + c] * x[r * cols + c]).abs()).sum();
                    let su: f32 = (0..cols).map(|c| (fu[j * cols + c] * x[r * cols + c]).abs()).sum();
                    let k = r * rows + j;
                    let (g, u) = (wgv[k], wuv[k]);
                    let a = if wuv[k] != 0.0 { wo[k] / u } else { 0.0 };
                    let rel = matmul_rel_tol(&b, *n);
                    let tol = gated_tol(rel, (sg, su), (u, a), wo[k]);
                    assert!(
                        (go[k] - wo[k]).abs() <= tol,
                        "{ty:?} {act:?} n={n} out [{r}, {j}]: gpu {} cpu {} (g {g}, u {u})",
                        go[k],
                        wo[k]
                    );
                    assert!(
                        (ggv[k] - g).abs() <= rel * sg + 1e-6,
                        "{ty:?} n={n} gate [{r}, {j}]: gpu {} cpu {g}",
                        ggv[k]
                    );
                    assert!(
                        (guv[k] - u).abs() <= rel * su + 1e-6,
                        "{ty:?} n={n} up [{r}, {j}]: gpu {} cpu {u}",
                        guv[k]
                    );
                    worst = worst.max((go[k] - wo[k]).abs());
                }
            }
        }
        eprintln!("gate/up/gated {ty:?} {act:?} parts {parts}: max |Δ| {worst:.2e}");
    }
}

/// A decode feed-forward on integer dot products: gate/up and the gated activation
/// write their output quantized too, and the down projection (with its residual add)
/// reads it so, staging nothing; over whole and split down weights, Q4_K and Q6_K.
/// Each down output against the CPU within 1e-5 of Σ|w·a| plus what the gated
/// activation's own difference carries (Σ|w|·|a_gpu − a_cpu|).
#[test]
fn feed_forward_down_reads_the_gate_up_output_quantized_and_matches_cpu() {
    use GgmlType::{Q4K, Q6K};
    // Rows of 256 values: gate/up get 16 lanes a row (matvec_lanes), a workgroup a run.
    let (d, ff) = (256usize, 768usize);
    // Split: down in parts of 96 rows; gate and up (a third the row size) in parts of
    // 288, whole runs of 16 each.
    for (i, (down_ty, part)) in [(Q4K, None), (Q6K, None), (Q4K, Some(96usize))].into_iter().enumerate() {
        let mut rng = Rng(900 + i as u64);
        let (wg, wu) = (random_weight(&mut rng, Q4K, ff, d), random_weight(&mut rng, Q4K, ff, d));
        let wd = random_weight(&mut rng, down_ty, d, ff);
        let x = rng.vec(d, -2.0, 2.0);
        let row_bytes = (ff / down_ty.block_elems() * down_ty.block_bytes()).next_multiple_of(4) as u64;
        let max_part_bytes = part.map(|p| (row_bytes * p as u64 + 3).max(ff as u64 * 4));
        let mut b = gpu_with(GpuOptions { max_part_bytes, ..Default::default() });
        let run = |b: &mut GpuBackend| ffn_down_script(b, (&wg, &wu, &wd), down_ty, d, ff, &x);
        let (a_gpu, y_gpu) = run(&mut b);
        let (a_cpu, y_cpu) = ffn_down_script(&mut CpuBackend::new(), (&wg, &wu, &wd), down_ty, d, ff, &x);
        if b.shader_features().int_runs > 0 {
            assert!(b.stats().input_staged_matvecs > 0, "case {i}: the down projection read the quantized runs");
        }
        let fd = dequant(down_ty, &wd, d * ff);
        let mut worst = 0.0f32;
        for j in 0..d {
            let w = &fd[j * ff..(j + 1) * ff];
            let scale: f32 = w.iter().zip(&a_cpu).map(|(w, a)| (w * a).abs()).sum();
            let carried: f32 = w.iter().zip(a_gpu.iter().zip(&a_cpu)).map(|(w, (g, c))| w.abs() * (g - c).abs()).sum();
            let tol = 1e-5 * scale + carried + 1e-5 * y_cpu[j].abs() + 1e-6;
            assert!(
                (y_gpu[j] - y_cpu[j]).abs() <= tol,
                "case {i} ({down_ty:?}) out {j}: gpu {} cpu {} (tol {tol})",
                y_gpu[j],
                y_cpu[j]
            );
            worst = worst.max((y_gpu[j] - y_cpu[j]).abs() / scale.max(1e-30));
        }
        eprintln!("feed-forward, down {down_ty:?} parts {part:?}: max |Δ|/Σ|w·a| {worst:.2e}");
    }
}

/// x → gate/up (Q4_K) → SiLU-gated → down (+ x as the residual); returns the gated
/// activation and the residual after the add, one row (decode).
fn ffn_down_script<B: Backend>(
    b: &mut B,
    (wg, wu, wd): (&[u8], &[u8], &[u8]),
    down_ty: GgmlType,
    d: usize,
    ff: usize,
    x: &[f32],
) -> (Vec<f32>, Vec<f32>) {
    let (gt, ut) = (weight(b, "gate", GgmlType::Q4K, ff, d, wg), weight(b, "up", GgmlType::Q4K, ff, d, wu));
    let dt = weight(b, "down", down_ty, d, ff, wd);
    let xt = table(b, x, d);
    let xa = b.alloc_activation(1, d).expect("alloc");
    let [gate, up, act] = [ff, ff, ff].map(|c| b.alloc_activation(1, c).expect("alloc"));
    let out = b.alloc_activation(1, d).expect("alloc");
    b.begin_batch(&ids(1), 0).expect("batch");
    b.embed(&xt, 1.0, xa);
    b.matmul(xa, &gt, gate);
    b.matmul(xa, &ut, up);
    b.gated_activation(gate, up, Activation::Silu, act);
    b.matmul(act, &dt, out);
    b.add(xa, out);
    let y = read(b, xa, 1);
    (read(b, act, 1), y)
}

/// Batch sizes of `qkv_script`: decode rows, then batches of one tile of activation rows
/// and of two (on cooperative matrices, 128 rows a tile).
const QKV_BATCHES: [usize; 4] = [1, 2, 9, 130];

/// q, k, v projections of one input (the GPU joins decode matvecs of one weight type
/// and width into one dispatch, and a batch's into one cooperative-matrix matmul);
/// returns (q, k, v, dispatches of the three) per batch of QKV_BATCHES.
#[allow(clippy::type_complexity)]
fn qkv_script<B: Backend>(
    b: &mut B,
    w: &[(GgmlType, usize, Vec<u8>)],
    cols: usize,
    x: &[f32],
) -> Vec<(Vec<Vec<f32>>, u64)> {
    let ws: Vec<_> = w
        .iter()
        .enumerate()
        .map(|(i, (ty, rows, bytes))| weight(b, &format!("w{i}"), *ty, *rows, cols, bytes))
        .collect();
    let xt = table(b, x, cols);
    let cap = QKV_BATCHES[QKV_BATCHES.len() - 1];
    let xa = b.alloc_activation(cap, cols).expect("alloc");
    let outs: Vec<_> = w.iter().map(|(_, rows, _)| b.alloc_activation(cap, *rows).expect("alloc")).collect();
    QKV_BATCHES
        .iter()
        .map(|&n| {
            b.begin_batch(&ids(n), 0).expect("batch");
            b.embed(&xt, 1.0, xa);
            let d0 = b.counters().dispatches;
            for (wt, o) in ws.iter().zip(&outs) {
                b.matmul(xa, wt, *o);
            }
            let first = read(b, outs[0], n);
            let d = b.counters().dispatches - d0;
            let mut r = vec![first];
            r.extend(outs[1..].iter().map(|o| read(b, *o, n)));
            (r, d)
        })
        .collect()
}

#[test]
fn qkv_projections_join_one_decode_dispatch_and_match_cpu() {
    use GgmlType::{F16, Q4K, Q4_1, Q5_0, Q6K, Q8_0};
    // (types and rows of the weights, split weights (rows per part), decode dispatches)
    // A third weight of another type joins too (v in Q6_K beside q and k in Q4_K, as
    // Q4_K_M files have it); a second one does not. The batches (9 and 130 rows) join
    // the same way on cooperative matrices and on integer dot products, as one
    // matmul_tiled over the weights side by side (whose tiles here hold rows of two or
    // three weights) and the sums routed to the outputs; weights split across buffers do
    // not. Where the third does not take the kernel (Q6_K beside Q4_K on integer dot
    // products) the first two join and it runs alone.
    #[allow(clippy::type_complexity)]
    let cases: [(&[(GgmlType, usize)], Option<usize>, u64); 10] = [
        (&[(Q4_1, 131), (Q4_1, 37), (Q4_1, 37)], None, 1),
        (&[(Q4K, 131), (Q4K, 37), (Q4K, 37)], None, 1),
        (&[(Q5_0, 131), (Q5_0, 37), (Q8_0, 37)], None, 1),
        (&[(Q4K, 131), (Q4K, 37), (Q6K, 37)], None, 1),
        (&[(Q4K, 37), (Q6K, 37), (Q4K, 37)], None, 3),
        // A float third weight: all three through the 4-value path.
        (&[(Q8_0, 37), (Q8_0, 9), (F16, 7)], None, 1),
        (&[(Q4K, 37), (Q4K, 130)], None, 1),
        (&[(F16, 5), (F16, 3), (F16, 2)], None, 1),
        (&[(Q8_0, 9), (Q4_1, 3), (Q8_0, 2)], None, 3),
        (&[(Q8_0, 131), (Q8_0, 37), (Q8_0, 37)], Some(5), 0),
    ];
    for (i, (spec, part, want_d)) in cases.into_iter().enumerate() {
        let mut rng = Rng(500 + i as u64);
        let cols = awkward_cols(spec[0].0);
        let w: Vec<_> = spec.iter().map(|&(ty, rows)| (ty, rows, random_weight(&mut rng, ty, rows, cols))).collect();
        let x = rng.vec(QKV_BATCHES[QKV_BATCHES.len() - 1] * cols, -2.0, 2.0);
        let max_part_bytes = part.map(|p| {
            let row_bytes = (cols / Q8_0.block_elems() * Q8_0.block_bytes()).next_multiple_of(4) as u64;
            (row_bytes * p as u64 + 3).max(cols as u64 * 4).max(131 * 4)
        });
        let mut b = gpu_with(GpuOptions { max_part_bytes, ..Default::default() });
        let want = qkv_script(&mut CpuBackend::new(), &w, cols, &x);
        let got = qkv_script(&mut b, &w, cols, &x);
        if want_d > 0 {
            assert_eq!(got[0].1, want_d, "case {i}: decode dispatches of the projections");
        } else {
            // Split weights are not joined: as many dispatches as in a batch of 2 rows.
            assert_eq!(got[0].1, got[1].1, "case {i}: split weights");
        }
        // Batches join on cooperative matrices, and on integer dot products where each
        // weight takes them (with f32's accuracy, three digits: Q4_K, tuning::int_batch_pays).
        let f = b.shader_features();
        let int = |t: GgmlType| f.int_batch == 3 && t == Q4K;
        let joins = spec[1].0 == spec[0].0 && part.is_none() && (f.coop_matrix || int(spec[0].0));
        let batches = QKV_BATCHES.iter().filter(|&&n| n > MATVEC_MAX_ROWS).count() as u64;
        let want_multi = if joins { batches } else { 0 };
        assert_eq!(b.stats().multi_batch_matmuls, want_multi, "case {i}: batch matmuls over several weights");
        let mut worst = 0.0f32;
        for (n, ((wv, _), (gv, _))) in QKV_BATCHES.iter().zip(want.iter().zip(&got)) {
            for (m, ((ty, rows, bytes), (wo, go))) in w.iter().zip(wv.iter().zip(gv)).enumerate() {
                let wf = dequant(*ty, bytes, rows * cols);
                for r in 0..*n {
                    for j in 0..*rows {
                        let scale: f32 = (0..cols).map(|c| (wf[j * cols + c] * x[r * cols + c]).abs()).sum();
                        let k = r * rows + j;
                        let tol = matmul_rel_tol(&b, *n) * scale + 1e-6;
                        assert!(
                            (go[k] - wo[k]).abs() <= tol,
                            "case {i} n={n} weight {m} ({ty:?}) [{r}, {j}]: gpu {} cpu {}",
                            go[k],
                            wo[k]
                        );
                        worst = worst.max((go[k] - wo[k]).abs() / scale.max(1e-30));
                    }
                }
            }
        }
        eprintln!(
            "qkv case {i} {spec:?}: {} decode dispatch(es), {} batch matmul(s) over several weights, max |Δ|/Σ|w·x| {worst:.2e}",
            got[0].1,
            b.stats().multi_batch_matmuls
        );
    }
}

fn embed_script<B: Backend>(b: &mut B, ty: GgmlType, rows: usize, cols: usize, w: &[u8], tokens: &[u32]) -> Vec<f32> {
    let wt = weight(b, "table", ty, rows, cols, w);
    let out = b.alloc_activation(tokens.len(), cols).expect("alloc");
    b.begin_batch(tokens, 0).expect("batch");
    b.embed(&wt, 0.75, out);
    read(b, out, tokens.len())
}

#[test]
fn embed_matches_cpu_for_every_type_including_split_tables() {
    let mut rng = Rng(7);
    for ty in ALL_TYPES {
        let (rows, cols) = (41, awkward_cols(ty));
        let w = random_weight(&mut rng, ty, rows, cols);
        let tokens: Vec<u32> = (0..11).map(|_| rng.below(rows) as u32).chain([0, 40, 40]).collect();
        let want = embed_script(&mut CpuBackend::new(), ty, rows, cols, &w, &tokens);
        let row_bytes = (cols / ty.block_elems() * ty.block_bytes()).next_multiple_of(4) as u64;
        for max_part in [None, Some(row_bytes * 3)] {
            let mut b = gpu_with(GpuOptions { max_part_bytes: max_part, ..Default::default() });
            let got = embed_script(&mut b, ty, rows, cols, &w, &tokens);
            for (i, (g, c)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - c).abs() <= 1e-6 * c.abs(),
                    "{ty:?} embed (parts {max_part:?}) value {i}: gpu {g} cpu {c}"
                );
            }
            if max_part.is_none() {
                eprintln!("embed {ty:?}: max |Δ| {:.2e}", max_abs_diff(&got, &want).0);
            }
        }
    }
}

/// rms_norm, then gate/up and the gated activation on one row (decode, where the GPU
/// runs all four as one dispatch: the norm fused into the gate/up kernel, which stages
/// the normalised row in workgroup memory); returns (out, the normalised row,
/// dispatches of the four ops).
#[allow(clippy::too_many_arguments)]
fn normed_ffn_script<B: Backend>(
    b: &mut B,
    ty: GgmlType,
    rows: usize,
    cols: usize,
    wg: &[u8],
    wu: &[u8],
    x: &[f32],
    nw: &[f32],
) -> (Vec<f32>, Vec<f32>, u64) {
    let (gt, ut) = (weight(b, "gate", ty, rows, cols, wg), weight(b, "up", ty, rows, cols, wu));
    let nt = weight(b, "ffn_norm", GgmlType::F32, 1, cols, &f32_bytes(nw));
    let xt = table(b, x, cols);
    let (xa, h) = (b.alloc_activation(1, cols).expect("alloc"), b.alloc_activation(1, cols).expect("alloc"));
    let (gate, up, out) = (
        b.alloc_activation(1, rows).expect("alloc"),
        b.alloc_activation(1, rows).expect("alloc"),
        b.alloc_activation(1, rows).expect("alloc"),
    );
    b.begin_batch(&ids(1), 0).expect("batch");
    b.embed(&xt, 1.0, xa);
    let d0 = b.counters().dispatches;
    b.rms_norm(xa, &nt, cols, 1e-6, h);
    b.matmul(h, &gt, gate);
    b.matmul(h, &ut, up);
    b.gated_activation(gate, up, Activation::Silu, out);
    let o = read(b, out, 1);
    let d = b.counters().dispatches - d0;
    (o, read(b, h, 1), d)
}

#[test]
fn normed_gate_up_decode_is_one_dispatch_and_matches_cpu() {
    // Rows of 2,048 values (the most the kernel stages in workgroup memory) over 32
    // lanes, as Qwen2.5-1.5B's 8,960 × 1,536 get 16: Q4_K (its scales decoded without a
    // branch, k4_scales.wgsl) and Q8_0.
    for (i, ty) in [GgmlType::Q4K, GgmlType::Q8_0].into_iter().enumerate() {
        let (rows, cols) = (4096, 2048);
        let mut rng = Rng(450 + i as u64);
        let (wg, wu) = (random_weight(&mut rng, ty, rows, cols), random_weight(&mut rng, ty, rows, cols));
        let x = rng.vec(cols, -2.0, 2.0);
        let nw = rng.vec(cols, 0.5, 1.5);
        let mut b = gpu();
        let (want, h, _) = normed_ffn_script(&mut CpuBackend::new(), ty, rows, cols, &wg, &wu, &x, &nw);
        let (got, _, dispatches) = normed_ffn_script(&mut b, ty, rows, cols, &wg, &wu, &x, &nw);
        assert_eq!(dispatches, 1, "{ty:?}: norm, gate, up and gated in one dispatch");
        let (fg, fu) = (dequant(ty, &wg, rows * cols), dequant(ty, &wu, rows * cols));
        let rel = matmul_rel_tol(&b, 1);
        let mut worst = 0.0f32;
        for j in 0..rows {
            let dot = |f: &[f32]| -> (f32, f32) {
                let row = &f[j * cols..(j + 1) * cols];
                (row.iter().zip(&h).map(|(w, x)| w * x).sum(), row.iter().zip(&h).map(|(w, x)| (w * x).abs()).sum())
            };
            let ((g, sg), (u, su)) = (dot(&fg), dot(&fu));
            let a = g / (1.0 + (-g).exp());
            let tol = gated_tol(rel, (sg, su), (u, a), want[j]);
            assert!((got[j] - want[j]).abs() <= tol, "{ty:?} out {j}: gpu {} cpu {}", got[j], want[j]);
            worst = worst.max((got[j] - want[j]).abs());
        }
        eprintln!("normed gate/up/gated {ty:?} {rows}x{cols}: max |Δ| {worst:.2e}");
    }
}

// ---- rms_norm ---------------------------------------------------------------------------

fn norm_script<B: Backend>(
    b: &mut B,
    n: usize,
    cols: usize,
    group: usize,
    x: &[f32],
    w: &[f32],
    in_place: bool,
) -> Vec<f32> {
    let wt = weight(b, "norm", GgmlType::F32, 1, group, &f32_bytes(w));
    let xt = table(b, x, cols);
    let xa = b.alloc_activation(n + 2, cols).expect("alloc");
    let out = if in_place { xa } else { b.alloc_activation(n + 2, cols).expect("alloc") };
    b.begin_batch(&ids(n), 0).expect("batch");
    b.embed(&xt, 1.0, xa);
    b.rms_norm(xa, &wt, group, 1e-6, out);
    read(b, out, n)
}

#[test]
fn rms_norm_matches_cpu_whole_rows_and_per_head_in_and_out_of_place() {
    let mut rng = Rng(11);
    let mut b = gpu();
    for (n, cols, group) in [(3, 300, 300), (5, 300, 75), (1, 1000, 1000), (4, 640, 256 / 2)] {
        let x = rng.vec(n * cols, -3.0, 3.0);
        let w = rng.vec(group, 0.5, 1.5);
        for in_place in [false, true] {
            let want = norm_script(&mut CpuBackend::new(), n, cols, group, &x, &w, in_place);
            let got = norm_script(&mut b, n, cols, group, &x, &w, in_place);
            for (i, (g, c)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - c).abs() <= 2e-6 * c.abs() + 1e-6,
                    "rms_norm {n}x{cols}/{group} in_place={in_place} [{i}]: {g} vs {c}"
                );
            }
            eprintln!("rms_norm {n}x{cols}/{group} in_place={in_place}: max |Δ| {:.2e}", max_abs_diff(&got, &want).0);
        }
    }
}

// ---- rope -------------------------------------------------------------------------------

struct RopeCase {
    n: usize,
    start: usize,
    heads: usize,
    head_dim: usize,
    cols: usize,
    rope: RopeConfig,
    factors: Option<Vec<f32>>,
}

fn rope_script<B: Backend>(b: &mut B, c: &RopeCase, x: &[f32]) -> Vec<f32> {
    let ff = c.factors.as_ref().map(|f| weight(b, "rope_freqs", GgmlType::F32, 1, f.len(), &f32_bytes(f)));
    let xt = table(b, x, c.cols);
    let xa = b.alloc_activation(c.n, c.cols).expect("alloc");
    b.begin_batch(&ids(c.n), c.start).expect("batch");
    b.embed(&xt, 1.0, xa);
    b.rope(xa, c.heads, c.head_dim, &c.rope, ff.as_ref());
    read(b, xa, c.n)
}

#[test]
fn rope_matches_cpu_normal_neox_partial_scaled_with_factors_and_long_batches() {
    let mut rng = Rng(13);
    let mut b = gpu();
    let cfg = |style, n_rot, base, freq_scale| RopeConfig { style, n_rot, base, freq_scale, attn_factor: 1.0 };
    let cases = [
        RopeCase {
            n: 5,
            start: 1000,
            heads: 3,
            head_dim: 10,
            cols: 34,
            rope: cfg(RopeStyle::Normal, 8, 10000.0, 1.0),
            factors: None,
        },
        RopeCase {
            n: 5,
            start: 7,
            heads: 3,
            head_dim: 10,
            cols: 30,
            rope: cfg(RopeStyle::Neox, 10, 500000.0, 0.25),
            factors: None,
        },
        // LongRoPE: factors and an attention factor scaling cos and sin.
        RopeCase {
            n: 4,
            start: 9,
            heads: 2,
            head_dim: 8,
            cols: 16,
            rope: RopeConfig { attn_factor: 1.19, ..cfg(RopeStyle::Neox, 8, 10000.0, 1.0) },
            factors: Some(vec![1.0, 1.5, 2.5, 3.0]),
        },
        RopeCase {
            n: 3,
            start: 4097,
            heads: 2,
            head_dim: 16,
            cols: 32,
            rope: cfg(RopeStyle::Normal, 16, 500000.0, 1.0),
            factors: Some(vec![1.0, 1.0, 2.0, 4.0, 8.0, 8.0, 16.0, 32.0]),
        },
        // 1 KiB of (cos, sin) per row (a dispatch takes up to 1 MiB of table).
        RopeCase {
            n: 70,
            start: 3,
            heads: 2,
            head_dim: 256,
            cols: 512,
            rope: cfg(RopeStyle::Neox, 256, 1e6, 1.0),
            factors: None,
        },
    ];
    for c in &cases {
        let x = rng.vec(c.n * c.cols, -2.0, 2.0);
        let want = rope_script(&mut CpuBackend::new(), c, &x);
        let got = rope_script(&mut b, c, &x);
        let (d, i) = max_abs_diff(&got, &want);
        assert!(d <= 2e-6, "rope {:?} n={} start={}: max |Δ| {d} at {i}", c.rope.style, c.n, c.start);
        eprintln!("rope {:?} n={} start={}: max |Δ| {d:.2e}", c.rope.style, c.n, c.start);
    }
}

/// `rope(q)` then `rope(k)` with the same table (the GPU joins them into one dispatch);
/// returns (q, k, dispatches of the two ropes).
/// What `qk_script` runs: `rope_qk` with or without the q/k/v biases and the per-head
/// norms, alone or followed by an attention over the prepared q and k.
struct QkCase<'a> {
    rope: &'a RopeCase,
    heads_k: usize,
    cols_k: usize,
    bias: bool,
    norm: bool,
    attend: bool,
}

/// The random inputs of a `qk_script`: q, k, v, the q and k norm weights, and the q, k
/// and v biases.
struct QkData {
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    nq: Vec<f32>,
    nk: Vec<f32>,
    bias: [Vec<f32>; 3],
}

/// Runs `rope_qk` (and an attention when asked) and returns q, k, v, the attention
/// output (empty without) and the dispatches recorded.
fn qk_script<B: Backend>(b: &mut B, t: &QkCase, x: &QkData) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>, u64) {
    let c = t.rope;
    let hd = c.head_dim;
    let ff = c.factors.as_ref().map(|f| weight(b, "rope_freqs", GgmlType::F32, 1, f.len(), &f32_bytes(f)));
    let qn = weight(b, "q_norm", GgmlType::F32, 1, hd, &f32_bytes(&x.nq));
    let kn = weight(b, "k_norm", GgmlType::F32, 1, hd, &f32_bytes(&x.nk));
    let biases = x.bias.each_ref().map(|v| weight(b, "bias", GgmlType::F32, 1, v.len(), &f32_bytes(v)));
    let (qt, kt, vt) = (table(b, &x.q, c.cols), table(b, &x.k, t.cols_k), table(b, &x.v, t.cols_k));
    let qa = b.alloc_activation(c.n, c.cols).expect("alloc");
    let ka = b.alloc_activation(c.n, t.cols_k).expect("alloc");
    let va = b.alloc_activation(c.n, t.cols_k).expect("alloc");
    let out = b.alloc_activation(c.n, c.cols).expect("alloc");
    let mut cache = b.alloc_kv_cache(KvSpec { capacity: c.start + c.n, width: t.heads_k * hd }).expect("cache");
    b.begin_batch(&ids(c.n), c.start).expect("batch");
    b.embed(&qt, 1.0, qa);
    b.embed(&kt, 1.0, ka);
    b.embed(&vt, 1.0, va);
    let d0 = b.counters().dispatches;
    let norm = if t.norm { Some((&qn, &kn, 1e-6)) } else { None };
    let bias = if t.bias { Some(&biases) } else { None };
    let p = QkRope {
        bias,
        heads: c.heads,
        kv_heads: t.heads_k,
        head_dim: hd,
        rope: &c.rope,
        freq_factors: ff.as_ref(),
        norm,
    };
    b.rope_qk(qa, ka, va, &p);
    let ap = AttentionParams {
        head_count: c.heads,
        head_count_kv: t.heads_k,
        head_dim: hd,
        scale: 0.125,
        sliding_window: None,
        softcap: None,
        causal: true,
    };
    if t.attend {
        b.attention(qa, ka, va, &mut cache, &ap, out);
    }
    let qo = read(b, qa, c.n);
    let d = b.counters().dispatches - d0;
    let ko = read(b, ka, c.n);
    let vo = read(b, va, c.n);
    let ao = if t.attend { read(b, out, c.n) } else { Vec::new() };
    (qo, ko, vo, ao, d)
}

#[test]
fn rope_qk_is_one_dispatch_with_biases_norms_and_kv_store_or_none_in_decode_and_matches_cpu() {
    let mut rng = Rng(17);
    let mut b = gpu();
    let cfg = |style, n_rot, base, freq_scale| RopeConfig { style, n_rot, base, freq_scale, attn_factor: 1.0 };
    let cases = [
        (
            RopeCase {
                n: 5,
                start: 1000,
                heads: 3,
                head_dim: 10,
                cols: 34,
                rope: cfg(RopeStyle::Normal, 8, 10000.0, 1.0),
                factors: None,
            },
            1,
            13,
        ),
        (
            RopeCase {
                n: 1,
                start: 7,
                heads: 9,
                head_dim: 64,
                cols: 576,
                rope: cfg(RopeStyle::Normal, 64, 100000.0, 1.0),
                factors: None,
            },
            3,
            192,
        ),
        (
            RopeCase {
                n: 3,
                start: 12,
                heads: 4,
                head_dim: 256,
                cols: 1024,
                rope: cfg(RopeStyle::Neox, 256, 1e6, 1.0),
                factors: None,
            },
            1,
            256,
        ),
        (
            RopeCase {
                n: 3,
                start: 4097,
                heads: 2,
                head_dim: 16,
                cols: 32,
                rope: cfg(RopeStyle::Normal, 16, 500000.0, 1.0),
                factors: Some(vec![1.0, 1.0, 2.0, 4.0, 8.0, 8.0, 16.0, 32.0]),
            },
            1,
            17,
        ),
        (
            RopeCase {
                n: 70,
                start: 3,
                heads: 2,
                head_dim: 256,
                cols: 512,
                rope: cfg(RopeStyle::Neox, 200, 1e6, 0.5),
                factors: None,
            },
            1,
            256,
        ),
        // Decode after 300 positions (Qwen2.5-1.5B's heads): the attention is split
        // among workgroups, one of each KV group's storing the new row.
        (
            RopeCase {
                n: 1,
                start: 300,
                heads: 12,
                head_dim: 128,
                cols: 1536,
                rope: cfg(RopeStyle::Neox, 128, 1e6, 1.0),
                factors: None,
            },
            2,
            256,
        ),
        // Decode at head_dim 256 (Gemma 3).
        (
            RopeCase {
                n: 1,
                start: 40,
                heads: 4,
                head_dim: 256,
                cols: 1024,
                rope: cfg(RopeStyle::Neox, 256, 1e6, 1.0),
                factors: None,
            },
            1,
            256,
        ),
    ];
    for (c, heads_k, cols_k) in &cases {
        let x = QkData {
            q: rng.vec(c.n * c.cols, -2.0, 2.0),
            k: rng.vec(c.n * cols_k, -2.0, 2.0),
            v: rng.vec(c.n * cols_k, -2.0, 2.0),
            nq: rng.vec(c.head_dim, 0.5, 1.5),
            nk: rng.vec(c.head_dim, 0.5, 1.5),
            bias: [rng.vec(c.cols, -1.0, 1.0), rng.vec(*cols_k, -1.0, 1.0), rng.vec(*cols_k, -1.0, 1.0)],
        };
        // Biases, norms and attention need rows of whole heads (k rows exactly one
        // cache row).
        let whole_heads = *cols_k == heads_k * c.head_dim && c.cols == c.heads * c.head_dim;
        let can_attend = whole_heads && c.heads % heads_k == 0;
        for (bias, norm) in [(false, false), (false, true), (true, false), (true, true)] {
            if (bias || norm) && !whole_heads {
                continue;
            }
            for attend in [false, true].into_iter().filter(|&a| !a || can_attend) {
                let t = QkCase { rope: c, heads_k: *heads_k, cols_k: *cols_k, bias, norm, attend };
                let (wq, wk, wv, wa, _) = qk_script(&mut CpuBackend::new(), &t, &x);
                let (gq, gk, gv, ga, d) = qk_script(&mut b, &t, &x);
                let (dq, iq) = max_abs_diff(&gq, &wq);
                let (dk, ik) = max_abs_diff(&gk, &wk);
                let (dv, iv) = max_abs_diff(&gv, &wv);
                let (da, ia) = max_abs_diff(&ga, &wa);
                let what = format!(
                    "rope_qk {:?} n={} start={} heads {}+{heads_k} bias={bias} norm={norm} attend={attend}",
                    c.rope.style, c.n, c.start, c.heads
                );
                // Norms: a few ulps of the 1/rms scale on values up to ~3 after scaling.
                let tol = if norm { 1e-5 } else { 4e-6 };
                // In decode the attention takes the preparation in and leaves q, k and v
                // as they were (Backend::rope_qk: read them before that attention).
                let in_attention = attend && c.n == 1;
                if !in_attention {
                    assert!(dq <= tol && dk <= tol, "{what}: max |Δ| q {dq} at {iq}, k {dk} at {ik}");
                    assert!(dv <= 1e-6, "{what}: v (biased in place) max |Δ| {dv} at {iv}");
                }
                let ta = attention_tol(&b, c.n, c.head_dim);
                assert!(da <= ta, "{what}: attention max |Δ| {da} at {ia}");
                // Biases join the dispatch unless a norm is there too (then they are
                // three dispatches of their own).
                let own = if bias && norm { 3 } else { 0 };
                if attend {
                    // The k/v store rides in the q/k dispatch: as many dispatches as an
                    // attention alone (whose own store is one dispatch); in decode the
                    // q/k dispatch rides in the attention: one fewer.
                    let alone = attention_dispatches(&mut b, c, *heads_k);
                    assert_eq!(d, alone + own - in_attention as u64, "{what}: dispatches");
                } else {
                    assert_eq!(d, 1 + own, "{what}: dispatches");
                }
                eprintln!("{what}: max |Δ| q {dq:.2e} k {dk:.2e} v {dv:.2e} attention {da:.2e}, {d} dispatch(es)");
            }
        }
    }
}

/// Dispatches of an attention recorded on its own (its k/v store included) for `c`'s
/// rows, positions and heads.
fn attention_dispatches(b: &mut GpuBackend, c: &RopeCase, heads_k: usize) -> u64 {
    let width = heads_k * c.head_dim;
    let q = b.alloc_activation(c.n, c.cols).expect("alloc");
    let (k, v) = (b.alloc_activation(c.n, width).expect("alloc"), b.alloc_activation(c.n, width).expect("alloc"));
    let out = b.alloc_activation(c.n, c.cols).expect("alloc");
    let mut cache = b.alloc_kv_cache(KvSpec { capacity: c.start + c.n, width }).expect("cache");
    let ap = AttentionParams {
        head_count: c.heads,
        head_count_kv: heads_k,
        head_dim: c.head_dim,
        scale: 0.125,
        sliding_window: None,
        softcap: None,
        causal: true,
    };
    b.begin_batch(&ids(c.n), c.start).expect("batch");
    let d0 = b.counters().dispatches;
    b.attention(q, k, v, &mut cache, &ap, out);
    read(b, out, c.n);
    b.counters().dispatches - d0
}

// ---- attention ----------------------------------------------------------------------------

/// (heads, kv heads, head_dim) the encoder attention tests sweep: nomic-embed's 12 × 64;
/// GQA; a head_dim that is not a multiple of 4 (the per-row kernel for every batch);
/// Gemma-wide heads.
const HEAD_SHAPES: [(usize, usize, usize); 4] = [(12, 12, 64), (6, 2, 72), (2, 1, 18), (4, 1, 256)];

/// Attention over `heads` query heads of `hd` sharing `kv` key/value heads, scaled by
/// 1/sqrt(hd), without window or soft cap: the params the attention kernel tests sweep.
fn head_shape_params(heads: usize, kv: usize, hd: usize, causal: bool) -> AttentionParams {
    AttentionParams {
        head_count: heads,
        head_count_kv: kv,
        head_dim: hd,
        scale: 1.0 / (hd as f32).sqrt(),
        sliding_window: None,
        softcap: None,
        causal,
    }
}

/// Random q, k and v rows for each `(start, rows)` batch, in `p`'s head shapes.
fn random_qkv(rng: &mut Rng, p: &AttentionParams, batches: &[(usize, usize)]) -> Vec<(Vec<f32>, Vec<f32>, Vec<f32>)> {
    let (q_cols, kv_cols) = (p.head_count * p.head_dim, p.head_count_kv * p.head_dim);
    batches
        .iter()
        .map(|&(_, n)| {
            (rng.vec(n * q_cols, -2.0, 2.0), rng.vec(n * kv_cols, -2.0, 2.0), rng.vec(n * kv_cols, -3.0, 3.0))
        })
        .collect()
}

fn attention_script<B: Backend>(
    b: &mut B,
    p: &AttentionParams,
    batches: &[(usize, usize)],
    data: &[(Vec<f32>, Vec<f32>, Vec<f32>)],
) -> Vec<f32> {
    let q_cols = p.head_count * p.head_dim;
    let width = p.head_count_kv * p.head_dim;
    let cap = batches.iter().map(|b| b.1).max().unwrap_or(1);
    let positions = batches.iter().map(|b| b.0 + b.1).max().unwrap_or(1);
    let mut cache = b.alloc_kv_cache(KvSpec { capacity: positions + 3, width }).expect("cache");
    let (q, k, v) = (
        b.alloc_activation(cap, q_cols).expect("alloc"),
        b.alloc_activation(cap, width).expect("alloc"),
        b.alloc_activation(cap, width).expect("alloc"),
    );
    let out = b.alloc_activation(cap, q_cols).expect("alloc");
    let mut all = Vec::new();
    for (&(start, n), (qd, kd, vd)) in batches.iter().zip(data) {
        let (qt, kt, vt) = (table(b, qd, q_cols), table(b, kd, width), table(b, vd, width));
        b.begin_batch(&ids(n), start).expect("batch");
        b.embed(&qt, 1.0, q);
        b.embed(&kt, 1.0, k);
        b.embed(&vt, 1.0, v);
        b.attention(q, k, v, &mut cache, p, out);
        all.extend(read(b, out, n));
    }
    all
}

/// Largest |GPU − CPU| of an attention output over a batch of `n` rows: f32 kernels
/// differ from the CPU in summation order only. Where the device has cooperative
/// matrices, a batch of more than 8 rows (lib.rs MAX_SPLIT_ROWS) with head_dim ≤ 256, a
/// multiple of 4, goes through attention_coop.wgsl, whose scaled queries, keys, values
/// and weights are rounded to f16 (11 significant bits): with these tests' values
/// (|q|, |k| ≤ 2, |v| ≤ 3) a score moves by up to ~1e-2 and an output by a few 1e-3.
fn attention_tol(b: &GpuBackend, n: usize, hd: usize) -> f32 {
    if b.shader_features().coop_matrix && n > 8 && hd.is_multiple_of(4) && hd <= 256 {
        1e-2
    } else {
        2e-5
    }
}

/// Checks attention_script's outputs batch by batch, each against its own tolerance;
/// the largest difference over all.
fn check_attention(
    b: &GpuBackend,
    what: &str,
    batches: &[(usize, usize)],
    p: &AttentionParams,
    got: &[f32],
    want: &[f32],
) -> f32 {
    let q_cols = p.head_count * p.head_dim;
    let (mut at, mut worst) = (0, 0.0f32);
    for &(start, n) in batches {
        let span = at..at + n * q_cols;
        let (d, i) = max_abs_diff(&got[span.clone()], &want[span]);
        let tol = attention_tol(b, n, p.head_dim);
        assert!(d <= tol, "{what}, {n} rows from {start}: max |Δ| {d} at {i} (tolerance {tol})");
        worst = worst.max(d);
        at += n * q_cols;
    }
    worst
}

#[test]
fn attention_matches_cpu_gqa_windows_and_long_histories() {
    let mut rng = Rng(17);
    let mut b = gpu();
    // (heads, kv heads, head_dim, window, soft cap)
    let cases = [
        (6, 2, 72, None, None),
        (6, 2, 72, Some(7), None),
        (4, 1, 256, Some(4), None),
        // Heads over 128 wide (Gemma: 256): the cooperative-matrix kernel shares them
        // among eight subgroups, padding 136 to 256 (and 72 to 128, 16 to 64).
        (4, 1, 256, None, None),
        (2, 2, 136, Some(40), None),
        (3, 3, 16, None, None),
        (2, 1, 64, Some(100), None),
        // Qwen2.5's head_dim: the batch kernel's tiles of 16 positions.
        (4, 2, 128, None, None),
        // Sixteen heads over one KV head (multi-query attention).
        (16, 1, 128, None, None),
        // Gemma 2: soft-capped scores (a cap the random scores reach), windowed or not.
        (4, 2, 64, None, Some(1.5)),
        (4, 2, 64, Some(5), Some(1.5)),
    ];
    // Prompt chunks then decode steps; the 70-row chunk crosses the 64-position chunk of the kernel.
    let batches = [(0, 5), (5, 1), (6, 70), (76, 1), (77, 2)];
    for (heads, kv, hd, window, softcap) in cases {
        let p = AttentionParams {
            head_count: heads,
            head_count_kv: kv,
            head_dim: hd,
            scale: 1.0 / (hd as f32).sqrt(),
            sliding_window: window,
            softcap,
            causal: true,
        };
        let data = random_qkv(&mut rng, &p, &batches);
        let want = attention_script(&mut CpuBackend::new(), &p, &batches, &data);
        let got = attention_script(&mut b, &p, &batches, &data);
        let what = format!("attention heads {heads}/{kv} × {hd}, window {window:?}, cap {softcap:?}");
        let d = check_attention(&b, &what, &batches, &p, &got, &want);
        eprintln!("{what}: max |Δ| {d:.2e}");
    }
}

/// Scores that climb along the positions: every key is about α·p (p its position) and
/// every query about 0.5, so a row's later tiles pass its earlier maxima by more than
/// attention_coop.wgsl's RESCALE_MARGIN (8) again and again, and its running sums of V
/// must be rescaled each time (on a device with cooperative matrices; elsewhere the f32
/// kernels' online softmax meets the same scores). Values are small (|v| ≤ 0.3) so the
/// f16 rounding of keys up to ~9 stays within the coop tolerance.
#[test]
fn decode_attention_splits_merge_in_the_o_projection_and_match_cpu() {
    // A decode step 300 positions in: its attention splits, and with
    // merge_splits_in_matvec (a browser's default) the o projection's integer-dot matvec
    // merges the splits as it stages its input (matvec_merged, no attn_combine) where
    // every run of its input is one head's (head_dim a multiple of 16); elsewhere, for a
    // weight type without integer-dot units, or with the option off, attn_combine runs
    // first. Either way the attention's output (which the merged matvec's workgroup 0
    // writes), o and res match the CPU. (The browser tests run the same script.)
    for on in [false, true] {
        let mut b = gpu_with(GpuOptions { merge_splits_in_matvec: on, ..GpuOptions::default() });
        for (i, case) in attention_o::CASES.iter().enumerate() {
            let &(ty, heads, kv, hd, merges) = case;
            let x = attention_o::inputs(case, 900 + i as u64);
            let want = pollster::block_on(attention_o::run(&mut CpuBackend::new(), ty, &x));
            let before = b.stats().merged_matvecs;
            let got = pollster::block_on(attention_o::run(&mut b, ty, &x));
            let what = format!("{ty:?} o after attention heads {heads}/{kv} × {hd} (merge option {on})");
            assert_eq!(b.stats().merged_matvecs - before, (on && merges) as u64, "{what}: matvecs that merged");
            let wf = dequant(ty, &x.w, attention_o::O_ROWS * heads * hd);
            let da = attention_o::check(&what, &got, &want, &wf, attention_tol(&b, 1, hd), matmul_rel_tol(&b, 1));
            eprintln!("{what}: attention max |Δ| {da:.2e}, merged: {}", on && merges);
        }
    }
}

#[test]
fn attention_whose_scores_climb_along_the_prompt_matches_cpu() {
    let mut rng = Rng(29);
    let mut b = gpu();
    // A 600-row prompt (long enough that the coop kernel splits a block's positions among
    // workgroups: shares of about 200), then a 70-row chunk over that history, then a
    // decode step.
    let batches = [(0, 600), (600, 70), (670, 1)];
    // (heads, kv heads, head_dim, α): the score climbs 0.5·√hd·α a position, about 20
    // nats per tile of 64 (10 per tile of 32 for Gemma's 256-wide heads), so that each
    // share climbs past the margin several times. (At half these slopes and shares of 55
    // to 75 positions, the 64 and 128 cases never rescaled: a mutation that skipped the
    // rescaling passed them.)
    for (heads, kv, hd, alpha) in [(4, 2, 64, 0.08f32), (2, 1, 128, 0.056), (2, 1, 256, 0.04)] {
        let p = head_shape_params(heads, kv, hd, true);
        let data: Vec<_> = batches
            .iter()
            .map(|&(start, n)| {
                let q = rng.vec(n * heads * hd, 0.4, 0.6);
                let k =
                    (0..n * kv * hd).map(|i| alpha * (start + i / (kv * hd)) as f32 + rng.uniform(-0.1, 0.1)).collect();
                (q, k, rng.vec(n * kv * hd, -0.3, 0.3))
            })
            .collect();
        let want = attention_script(&mut CpuBackend::new(), &p, &batches, &data);
        let got = attention_script(&mut b, &p, &batches, &data);
        let what = format!("climbing attention heads {heads}/{kv} × {hd}");
        let d = check_attention(&b, &what, &batches, &p, &got, &want);
        eprintln!("{what}: max |Δ| {d:.2e}");
    }
}

#[test]
fn attention_over_histories_longer_than_one_chunk() {
    // The per-row kernel takes positions 1024 at a time with an online softmax across
    // chunks: a 1030-row prompt then decode steps cross that boundary, with and without
    // a window that itself spans more than one chunk. The prompt itself goes through the
    // batch kernel (attention_tiled: tiles of up to 32 positions, online softmax across
    // them, or on cooperative matrices one pass over tiles of 64 rescaled lazily; its
    // blocks' positions shared among workgroups merged by attn_combine) where head_dim is
    // a multiple of 4, else (18) through the per-row one.
    let mut rng = Rng(23);
    let mut b = gpu();
    let batches = [(0, 1030), (1030, 1), (1031, 3)];
    for (heads, kv, hd, window) in [(2, 1, 16, None), (2, 1, 18, Some(1026)), (2, 1, 20, Some(1026))] {
        let p = AttentionParams {
            head_count: heads,
            head_count_kv: kv,
            head_dim: hd,
            scale: 1.0 / (hd as f32).sqrt(),
            sliding_window: window,
            softcap: None,
            causal: true,
        };
        let data = random_qkv(&mut rng, &p, &batches);
        let want = attention_script(&mut CpuBackend::new(), &p, &batches, &data);
        let got = attention_script(&mut b, &p, &batches, &data);
        let what = format!("long attention heads {heads}/{kv} × {hd}, window {window:?}");
        let d = check_attention(&b, &what, &batches, &p, &got, &want);
        eprintln!("{what}: max |Δ| {d:.2e}");
    }
}

// ---- elementwise ---------------------------------------------------------------------------

fn elementwise_script<B: Backend>(b: &mut B, n: usize, cols: usize, g: &[f32], u: &[f32]) -> Vec<Vec<f32>> {
    let (gt, ut) = (table(b, g, cols), table(b, u, cols));
    let bias = weight(b, "bias", GgmlType::F32, 1, cols, &f32_bytes(&u[..cols]));
    let (ga, ua, out, row) = (
        b.alloc_activation(n + 1, cols).expect("alloc"),
        b.alloc_activation(n + 1, cols).expect("alloc"),
        b.alloc_activation(n + 1, cols).expect("alloc"),
        b.alloc_activation(1, cols).expect("alloc"),
    );
    let mut res = Vec::new();
    b.begin_batch(&ids(n), 0).expect("batch");
    b.embed(&gt, 1.0, ga);
    b.embed(&ut, 1.0, ua);
    b.gated_activation(ga, ua, Activation::Silu, out);
    res.push(read(b, out, n));
    b.gated_activation(ga, ua, Activation::GeluTanh, out);
    res.push(read(b, out, n));
    b.add(out, ga);
    res.push(read(b, out, n));
    b.select_row(out, n - 2, row);
    res.push(read(b, row, 1));
    b.softcap(ga, 30.0);
    res.push(read(b, ga, n));
    b.add_bias(ga, &bias);
    res.push(read(b, ga, n));
    res
}

#[test]
fn gated_activations_add_select_row_softcap_and_bias_match_cpu() {
    let mut rng = Rng(19);
    let mut b = gpu();
    let (n, cols) = (7, 333);
    let mut g = rng.vec(n * cols, -8.0, 8.0);
    g[5] = 95.0; // far into tanh's and exp's saturation
    g[6] = -95.0;
    g[7] = 0.0;
    let u = rng.vec(n * cols, -2.0, 2.0);
    let want = elementwise_script(&mut CpuBackend::new(), n, cols, &g, &u);
    let got = elementwise_script(&mut b, n, cols, &g, &u);
    for (k, (gv, cv)) in got.iter().zip(&want).enumerate() {
        assert_eq!(gv.len(), cv.len());
        for (i, (x, y)) in gv.iter().zip(cv).enumerate() {
            assert!((x - y).abs() <= 2e-6 * y.abs() + 1e-6, "elementwise step {k} [{i}]: gpu {x} cpu {y}");
        }
        let step = ["silu", "gelu-tanh", "add", "select_row", "softcap", "add_bias"][k];
        eprintln!("{step}: max |Δ| {:.2e}", max_abs_diff(gv, cv).0);
    }
}

// ---- argmax ---------------------------------------------------------------------------------

fn argmax_script<B: Backend>(b: &mut B, n: usize, cols: usize, x: &[f32]) -> Vec<u32> {
    let xt = table(b, x, cols);
    let xa = b.alloc_activation(n, cols).expect("alloc");
    b.begin_batch(&ids(n), 0).expect("batch");
    b.embed(&xt, 1.0, xa);
    pollster::block_on(b.argmax_rows(xa, n)).expect("argmax")
}

#[test]
fn argmax_matches_cpu_with_ties_infinities_and_nans() {
    let mut b = gpu();
    // One workgroup per row, and (past one 4096-value chunk) chunks then a merge.
    for (seed, cols) in [(23u64, 1003usize), (24, 9000)] {
        let mut rng = Rng(seed);
        let mut x = rng.vec(6 * cols, -5.0, 5.0);
        // Row 1: the maximum three times (lowest index wins).
        for c in [900, 17, 500] {
            x[cols + c] = 9.0;
        }
        // Row 2: all -inf (index 0). Row 3: NaNs around the max. Row 4: max in the last column.
        x[2 * cols..3 * cols].fill(f32::NEG_INFINITY);
        x[3 * cols] = f32::NAN;
        x[3 * cols + 600] = 7.5;
        x[3 * cols + 601] = f32::NAN;
        x[5 * cols - 1] = 100.0;
        // Row 5: -inf then all NaN except one.
        x[5 * cols..6 * cols].fill(f32::NAN);
        x[5 * cols + 3] = f32::NEG_INFINITY;
        x[5 * cols + 999] = -1e30;
        let want = argmax_script(&mut CpuBackend::new(), 6, cols, &x);
        let got = argmax_script(&mut b, 6, cols, &x);
        assert_eq!(got, want, "{cols} columns");
        assert_eq!(&want[..5], &[want[0], 17, 0, 600, cols as u32 - 1]);
        // One row alone (the decode read: 4 bytes).
        assert_eq!(argmax_script(&mut b, 1, cols, &x[3 * cols..4 * cols]), vec![600]);
    }
}

fn top_k_script<B: Backend>(b: &mut B, n: usize, cols: usize, k: usize, x: &[f32]) -> Vec<Vec<(u32, f32)>> {
    let xt = table(b, x, cols);
    let xa = b.alloc_activation(n, cols).expect("alloc");
    b.begin_batch(&ids(n), 0).expect("batch");
    b.embed(&xt, 1.0, xa);
    pollster::block_on(b.top_k_rows(xa, n, k)).expect("top k")
}

#[test]
fn top_k_matches_cpu_with_ties_infinities_nans_and_short_rows() {
    let mut rng = Rng(29);
    let mut b = gpu();
    // Over two chunks of the first pass plus a partial third; and a row shorter than k.
    for (cols, ks) in [(9000usize, &[1usize, 5, 40, 300][..]), (7, &[3, 10][..])] {
        let n = 3;
        let mut x = rng.vec(n * cols, -5.0, 5.0);
        // Row 1: ties across chunks (lower index first), NaNs, -inf.
        for c in (0..cols).step_by(3) {
            x[cols + c] = 2.5;
        }
        x[cols] = f32::NAN;
        x[cols + cols / 2] = f32::NEG_INFINITY;
        // Row 2: mostly -inf.
        x[2 * cols..3 * cols].fill(f32::NEG_INFINITY);
        x[2 * cols + cols - 1] = 1.0;
        for &k in ks {
            let want = top_k_script(&mut CpuBackend::new(), n, cols, k, &x);
            let got = top_k_script(&mut b, n, cols, k, &x);
            for (r, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.len(), k.min(cols), "cols {cols} k {k} row {r}: candidates");
                let ids = |v: &[(u32, f32)]| v.iter().map(|e| e.0).collect::<Vec<_>>();
                assert_eq!(ids(g), ids(w), "cols {cols} k {k} row {r}: ids");
                for (ge, we) in g.iter().zip(w) {
                    // NaN and -inf come back as the lowest finite value.
                    let low = we.1.is_nan() || we.1 == f32::NEG_INFINITY;
                    assert!(
                        ge.1 == we.1 || (low && ge.1 == f32::MIN),
                        "cols {cols} k {k} row {r}: value of {} {} vs {}",
                        ge.0,
                        ge.1,
                        we.1
                    );
                }
            }
        }
    }
}

// ---- encoder ops: layer norm, learned positions, a non-gated activation, non-causal attention

fn layer_norm_script<B: Backend>(b: &mut B, n: usize, cols: usize, x: &[f32], wb: &[f32], in_place: bool) -> Vec<f32> {
    let wt = weight(b, "norm", GgmlType::F32, 1, cols, &f32_bytes(&wb[..cols]));
    let bt = weight(b, "norm_bias", GgmlType::F32, 1, cols, &f32_bytes(&wb[cols..]));
    let xt = table(b, x, cols);
    let xa = b.alloc_activation(n + 2, cols).expect("alloc");
    let out = if in_place { xa } else { b.alloc_activation(n + 2, cols).expect("alloc") };
    b.begin_batch(&ids(n), 0).expect("batch");
    b.embed(&xt, 1.0, xa);
    b.layer_norm(xa, &wt, &bt, 1e-12, out);
    read(b, out, n)
}

#[test]
fn layer_norm_matches_cpu_in_and_out_of_place_on_rows_far_from_zero_mean() {
    let mut rng = Rng(31);
    let mut b = gpu();
    // nomic-embed's 768-wide rows; rows wider than the workgroup's 128 invocations by an
    // odd amount; one short row. Values offset by up to 1000 (a residual stream's
    // outliers) with a spread of 3: f32 sums of the raw values lost 2e-5 there.
    for (n, cols, offset) in [(5, 768, 40.0), (3, 333, -7.0), (2, 50, 0.0), (1, 1000, 1e3)] {
        let x: Vec<f32> = rng.vec(n * cols, -3.0, 3.0).iter().map(|v| v + offset).collect();
        let mut wb = rng.vec(cols, 0.5, 1.5);
        wb.extend(rng.vec(cols, -1.0, 1.0));
        for in_place in [false, true] {
            let want = layer_norm_script(&mut CpuBackend::new(), n, cols, &x, &wb, in_place);
            let got = layer_norm_script(&mut b, n, cols, &x, &wb, in_place);
            // f32 sums (relative to the row's first value, so the offset costs nothing)
            // against the CPU's f64.
            for (i, (g, c)) in got.iter().zip(&want).enumerate() {
                let tol = 2e-6 * (1.0 + c.abs());
                assert!((g - c).abs() <= tol, "layer_norm {n}x{cols} in_place={in_place} [{i}]: {g} vs {c}");
            }
            eprintln!(
                "layer_norm {n}x{cols} +{offset} in_place={in_place}: max |Δ| {:.2e}",
                max_abs_diff(&got, &want).0
            );
        }
    }
}

fn positions_script<B: Backend>(
    b: &mut B,
    ty: GgmlType,
    rows: usize,
    cols: usize,
    w: &[u8],
    x: &[f32],
    batches: &[(usize, usize)],
) -> Vec<f32> {
    let wt = weight(b, "position_embd", ty, rows, cols, w);
    let xt = table(b, x, cols);
    let cap = batches.iter().map(|b| b.1).max().unwrap_or(1);
    let xa = b.alloc_activation(cap, cols).expect("alloc");
    let mut all = Vec::new();
    for &(start, n) in batches {
        b.begin_batch(&ids(n), start).expect("batch");
        b.embed(&xt, 1.0, xa);
        b.add_position_embedding(xa, &wt);
        all.extend(read(b, xa, n));
    }
    all
}

#[test]
fn position_embedding_add_matches_cpu_from_any_start_including_split_tables() {
    let mut rng = Rng(37);
    // F32 and F16 (BERT files), a quantized table, and a table split across buffers.
    for ty in [GgmlType::F32, GgmlType::F16, GgmlType::Q8_0] {
        let (rows, cols) = (40, awkward_cols(ty));
        let w = random_weight(&mut rng, ty, rows, cols);
        let batches = [(0, 9), (9, 1), (31, 9), (3, 4)];
        let x = rng.vec(9 * cols, -2.0, 2.0);
        let want = positions_script(&mut CpuBackend::new(), ty, rows, cols, &w, &x, &batches);
        let row_bytes = (cols / ty.block_elems() * ty.block_bytes()).next_multiple_of(4) as u64;
        for max_part in [None, Some(row_bytes * 7)] {
            let mut b = gpu_with(GpuOptions { max_part_bytes: max_part, ..Default::default() });
            let got = positions_script(&mut b, ty, rows, cols, &w, &x, &batches);
            for (i, (g, c)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - c).abs() <= 1e-6 * c.abs() + 1e-7,
                    "{ty:?} positions (parts {max_part:?}) value {i}: gpu {g} cpu {c}"
                );
            }
            eprintln!(
                "add_position_embedding {ty:?} (parts {max_part:?}): max |Δ| {:.2e}",
                max_abs_diff(&got, &want).0
            );
        }
    }
    // Positions past the table: an error at the next read, not a panic.
    let mut b = gpu();
    let wt = weight(&mut b, "position_embd", GgmlType::F32, 4, 8, &f32_bytes(&[0.5; 32]));
    let xa = b.alloc_activation(3, 8).expect("alloc");
    b.begin_batch(&ids(3), 2).expect("batch");
    b.add_position_embedding(xa, &wt);
    let e = pollster::block_on(b.read_rows(xa, 3)).expect_err("positions 2..5 of a 4-row table");
    assert!(e.to_string().contains("position"), "{e}");
}

fn activation_script<B: Backend>(b: &mut B, n: usize, cols: usize, x: &[f32], act: Activation) -> Vec<f32> {
    let xt = table(b, x, cols);
    let xa = b.alloc_activation(n, cols).expect("alloc");
    b.begin_batch(&ids(n), 0).expect("batch");
    b.embed(&xt, 1.0, xa);
    b.activation(xa, act);
    read(b, xa, n)
}

#[test]
fn non_gated_activations_match_cpu_into_saturation() {
    let mut rng = Rng(41);
    let mut b = gpu();
    let (n, cols) = (5, 3072 / 4 + 1);
    let mut x = rng.vec(n * cols, -8.0, 8.0);
    x[..5].copy_from_slice(&[95.0, -95.0, 0.0, 1e-4, -1e-4]);
    for act in [Activation::GeluTanh, Activation::Silu] {
        let want = activation_script(&mut CpuBackend::new(), n, cols, &x, act);
        let got = activation_script(&mut b, n, cols, &x, act);
        for (i, (g, c)) in got.iter().zip(&want).enumerate() {
            assert!((g - c).abs() <= 2e-6 * c.abs() + 1e-6, "{act:?} [{i}] (x {}): gpu {g} cpu {c}", x[i]);
        }
        eprintln!("activation {act:?}: max |Δ| {:.2e}", max_abs_diff(&got, &want).0);
    }
}

#[test]
fn non_causal_attention_matches_cpu_in_every_kernel() {
    let mut rng = Rng(43);
    let mut b = gpu();
    // One input per batch from position 0 (as an encoder runs): a short one (the per-row
    // kernel), 9 rows (the batch kernel's first size), 70 (several blocks), 300 (blocks
    // sharing their positions among workgroups, merged by attn_combine); then rows
    // after a history (start > 0: every row still sees the whole batch), over
    // 256 positions so that the per-row kernel splits.
    let batches = [(0, 5), (0, 9), (0, 70), (0, 300), (300, 3)];
    for (heads, kv, hd) in HEAD_SHAPES {
        let p = head_shape_params(heads, kv, hd, false);
        let data = random_qkv(&mut rng, &p, &batches);
        let want = attention_script(&mut CpuBackend::new(), &p, &batches, &data);
        let got = attention_script(&mut b, &p, &batches, &data);
        let what = format!("non-causal attention heads {heads}/{kv} × {hd}");
        let d = check_attention(&b, &what, &batches, &p, &got, &want);
        // And not the causal result: the last row of a batch is the only one alike.
        let causal =
            attention_script(&mut CpuBackend::new(), &AttentionParams { causal: true, ..p }, &batches[..1], &data[..1]);
        assert!(max_abs_diff(&causal, &want[..causal.len()]).0 > 1e-2, "{what}: same as causal");
        eprintln!("{what}: max |Δ| {d:.2e}");
    }
    // A window needs causal attention: refused at the next read.
    let p = AttentionParams {
        head_count: 2,
        head_count_kv: 1,
        head_dim: 8,
        scale: 0.3,
        sliding_window: Some(4),
        softcap: None,
        causal: false,
    };
    let mut cache = b.alloc_kv_cache(KvSpec { capacity: 4, width: 8 }).expect("cache");
    let (q, k, v, out) = (
        b.alloc_activation(2, 16).expect("alloc"),
        b.alloc_activation(2, 8).expect("alloc"),
        b.alloc_activation(2, 8).expect("alloc"),
        b.alloc_activation(2, 16).expect("alloc"),
    );
    b.begin_batch(&ids(2), 0).expect("batch");
    b.attention(q, k, v, &mut cache, &p, out);
    assert!(pollster::block_on(b.read_rows(out, 2)).is_err(), "a window over non-causal attention");
}

#[test]
fn encoder_rope_and_non_causal_attention_fuse_as_a_decoders_and_match_cpu() {
    let mut rng = Rng(47);
    let mut b = gpu();
    // nomic-embed-text-v1.5: 12 heads of 64, NeoX rotation over the whole head, base 1000.
    let rope = RopeConfig { style: RopeStyle::Neox, n_rot: 64, base: 1000.0, freq_scale: 1.0, attn_factor: 1.0 };
    let p = AttentionParams {
        head_count: 12,
        head_count_kv: 12,
        head_dim: 64,
        scale: 0.125,
        sliding_window: None,
        softcap: None,
        causal: false,
    };
    // One token (the rope taken into the attention: attention_rope), a short input (the
    // per-row kernel) and a longer one (the batch kernel): the rope's dispatch stores k
    // and v, then one attention dispatch, as in a decoder.
    for (n, dispatches) in [(1, 1), (7, 2), (40, 2)] {
        let x = (rng.vec(n * 768, -2.0, 2.0), rng.vec(n * 768, -2.0, 2.0), rng.vec(n * 768, -3.0, 3.0));
        let (want, _) = packed_attention_script(&mut CpuBackend::new(), &[n], &p, Some(&rope), &x);
        let (got, d) = packed_attention_script(&mut b, &[n], &p, Some(&rope), &x);
        let (diff, i) = max_abs_diff(&got, &want);
        let tol = attention_tol(&b, n, 64);
        assert!(diff <= tol, "encoder attention over {n} rows: max |Δ| {diff} at {i} (tolerance {tol})");
        assert_eq!(d, dispatches, "encoder attention over {n} rows: dispatches");
        eprintln!("encoder rope + non-causal attention, {n} rows: max |Δ| {diff:.2e}, {d} dispatch(es)");
    }
}

// ---- packed batches: several sequences in one batch (encoders' many inputs) -----------------

/// The attention of one packed batch of sequences of `lens` rows, as an encoder layer
/// records it (`begin_packed_batch`, then with `rope` the `rope_qk` before it): each
/// row's positions restart at its sequence's first row and it attends only within its
/// sequence. With one length, the same through `begin_batch` at position 0 (one input,
/// as `forward/encoder.rs` records it). Returns the attention output and the dispatches
/// of `rope_qk` and `attention`.
fn packed_attention_script<B: Backend>(
    b: &mut B,
    lens: &[usize],
    p: &AttentionParams,
    rope: Option<&RopeConfig>,
    x: &(Vec<f32>, Vec<f32>, Vec<f32>),
) -> (Vec<f32>, u64) {
    let n: usize = lens.iter().sum();
    let (q_cols, width) = (p.head_count * p.head_dim, p.head_count_kv * p.head_dim);
    let (qt, kt, vt) = (table(b, &x.0, q_cols), table(b, &x.1, width), table(b, &x.2, width));
    let (q, k, v) = (
        b.alloc_activation(n, q_cols).expect("alloc"),
        b.alloc_activation(n, width).expect("alloc"),
        b.alloc_activation(n, width).expect("alloc"),
    );
    let out = b.alloc_activation(n, q_cols).expect("alloc");
    let mut cache = b.alloc_kv_cache(KvSpec { capacity: n, width }).expect("cache");
    b.begin_packed_batch(&ids(n), lens).expect("packed batch");
    b.embed(&qt, 1.0, q);
    b.embed(&kt, 1.0, k);
    b.embed(&vt, 1.0, v);
    let d0 = b.counters().dispatches;
    if let Some(rope) = rope {
        let qk = QkRope {
            bias: None,
            heads: p.head_count,
            kv_heads: p.head_count_kv,
            head_dim: p.head_dim,
            rope,
            freq_factors: None,
            norm: None,
        };
        b.rope_qk(q, k, v, &qk);
    }
    b.attention(q, k, v, &mut cache, p, out);
    let o = read(b, out, n);
    (o, b.counters().dispatches - d0)
}

/// Rows `first..first + len` of each of q, k and v.
fn rows_of(x: &(Vec<f32>, Vec<f32>, Vec<f32>), first: usize, len: usize, q_cols: usize, width: usize) -> [Vec<f32>; 3] {
    [
        x.0[first * q_cols..(first + len) * q_cols].to_vec(),
        x.1[first * width..(first + len) * width].to_vec(),
        x.2[first * width..(first + len) * width].to_vec(),
    ]
}

#[test]
fn packed_attention_masks_each_sequence_and_restarts_rope_in_every_kernel() {
    let mut rng = Rng(53);
    let mut b = gpu();
    let rope = RopeConfig { style: RopeStyle::Neox, n_rot: 16, base: 1000.0, freq_scale: 1.0, attn_factor: 1.0 };
    // Packed batches: 8 rows (the per-row kernel), 58 rows whose blocks span several
    // sequences (the batch kernel), 311 rows (blocks sharing their positions among
    // workgroups, merged by attn_combine), with sequences of one row among them.
    let packs: [&[usize]; 3] = [&[1, 4, 3], &[5, 1, 30, 2, 20], &[1, 250, 60]];
    for (heads, kv, hd) in HEAD_SHAPES {
        for causal in [false, true] {
            let p = head_shape_params(heads, kv, hd, causal);
            let (q_cols, width) = (heads * hd, kv * hd);
            for lens in packs {
                let n: usize = lens.iter().sum();
                let x = random_qkv(&mut rng, &p, &[(0, n)]).remove(0);
                let rope = (hd >= 16).then_some(&rope);
                let (want, _) = packed_attention_script(&mut CpuBackend::new(), lens, &p, rope, &x);
                // The reference itself: each sequence alone gives its rows.
                let mut first = 0;
                for &len in lens {
                    let [qs, ks, vs] = rows_of(&x, first, len, q_cols, width);
                    let (alone, _) = packed_attention_script(&mut CpuBackend::new(), &[len], &p, rope, &(qs, ks, vs));
                    let (d, i) = max_abs_diff(&alone, &want[first * q_cols..(first + len) * q_cols]);
                    assert!(d <= 1e-6, "cpu packed {lens:?} vs alone, rows {first}..: max |Δ| {d} at {i}");
                    first += len;
                }
                let (got, _) = packed_attention_script(&mut b, lens, &p, rope, &x);
                let what = format!(
                    "packed {lens:?} attention (causal {causal}, rope {}) heads {heads}/{kv} × {hd}",
                    rope.is_some()
                );
                let (d, i) = max_abs_diff(&got, &want);
                let tol = attention_tol(&b, n, hd);
                assert!(d <= tol, "{what}: max |Δ| {d} at {i} (tolerance {tol})");
                eprintln!("{what}: max |Δ| {d:.2e}");
            }
        }
    }
    // Lengths that do not add up to the batch are refused by both backends.
    for e in [CpuBackend::new().begin_packed_batch(&ids(5), &[2, 2]), b.begin_packed_batch(&ids(5), &[5, 0])] {
        assert!(e.expect_err("bad lengths").to_string().contains("packed batch"));
    }
}

/// Learned positions (`add_position_embedding`) and a plain `rope` in a packed batch:
/// each sequence's rows take positions 0, 1, ... as they would alone.
fn packed_positions_script<B: Backend>(
    b: &mut B,
    ty: GgmlType,
    rows: usize,
    cols: usize,
    w: &[u8],
    x: &[f32],
    lens: &[usize],
) -> (Vec<f32>, Vec<f32>) {
    let rope = RopeConfig { style: RopeStyle::Normal, n_rot: 16, base: 10000.0, freq_scale: 1.0, attn_factor: 1.0 };
    let n: usize = lens.iter().sum();
    let wt = weight(b, "position_embd", ty, rows, cols, w);
    let xt = table(b, x, cols);
    let (xa, ra) = (b.alloc_activation(n, cols).expect("alloc"), b.alloc_activation(n, cols).expect("alloc"));
    b.begin_packed_batch(&ids(n), lens).expect("packed batch");
    b.embed(&xt, 1.0, xa);
    b.add_position_embedding(xa, &wt);
    b.embed(&xt, 1.0, ra);
    b.rope(ra, cols / 16, 16, &rope, None);
    (read(b, xa, n), read(b, ra, n))
}

#[test]
fn packed_positions_restart_per_sequence_including_split_tables() {
    let mut rng = Rng(59);
    for ty in [GgmlType::F32, GgmlType::F16, GgmlType::Q8_0] {
        let (rows, cols) = (40, 64);
        let w = random_weight(&mut rng, ty, rows, cols);
        let lens = [3, 1, 40, 7];
        let n: usize = lens.iter().sum();
        let x = rng.vec(n * cols, -2.0, 2.0);
        let want = packed_positions_script(&mut CpuBackend::new(), ty, rows, cols, &w, &x, &lens);
        // The reference: each sequence alone, from position 0.
        let mut first = 0;
        for len in lens {
            let xs = &x[first * cols..(first + len) * cols];
            let alone = packed_positions_script(&mut CpuBackend::new(), ty, rows, cols, &w, xs, &[len]);
            let span = first * cols..(first + len) * cols;
            assert_eq!(alone.0, want.0[span.clone()], "{ty:?}: cpu positions packed vs alone");
            assert_eq!(alone.1, want.1[span], "{ty:?}: cpu rope packed vs alone");
            first += len;
        }
        let row_bytes = (cols / ty.block_elems() * ty.block_bytes()).next_multiple_of(4) as u64;
        for max_part in [None, Some(row_bytes * 7)] {
            let mut b = gpu_with(GpuOptions { max_part_bytes: max_part, ..Default::default() });
            let got = packed_positions_script(&mut b, ty, rows, cols, &w, &x, &lens);
            for (i, (g, c)) in got.0.iter().zip(&want.0).enumerate() {
                assert!((g - c).abs() <= 1e-6 * c.abs() + 1e-7, "{ty:?} packed positions value {i}: gpu {g} cpu {c}");
            }
            let (d, i) = max_abs_diff(&got.1, &want.1);
            assert!(d <= 2e-6, "{ty:?} packed rope: max |Δ| {d} at {i}");
            eprintln!(
                "packed positions {ty:?} (parts {max_part:?}): max |Δ| {:.2e}, rope {d:.2e}",
                max_abs_diff(&got.0, &want.0).0
            );
        }
    }
    // A sequence longer than the table: an error at the next read, not a panic.
    let mut b = gpu();
    let wt = weight(&mut b, "position_embd", GgmlType::F32, 4, 8, &f32_bytes(&[0.5; 32]));
    let xa = b.alloc_activation(7, 8).expect("alloc");
    b.begin_packed_batch(&ids(7), &[2, 5]).expect("batch");
    b.add_position_embedding(xa, &wt);
    let e = pollster::block_on(b.read_rows(xa, 7)).expect_err("a 5-row sequence over a 4-row table");
    assert!(e.to_string().contains("position"), "{e}");
}

// ---- shaders -------------------------------------------------------------------------------

/// Every assembled kernel source passes wgpu's own WGSL front end (naga) and Chrome's
/// (tint), so what runs here also compiles in a browser.
#[test]
fn every_kernel_variant_validates_with_naga_and_tint() {
    let dir = std::env::temp_dir().join(format!("kindling-wgsl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut failures = Vec::new();
    // Browser variants through both; the subgroup and cooperative-matrix variants
    // (native only: naga takes subgroup operations without an `enable`, which tint
    // requires, and `wgpu_cooperative_matrix` is wgpu's own) through naga.
    let plain = KernelKey::all(&ALL_TYPES);
    // (with room for the integer-dot kernels' staging and the integer-dot batch matmul, so
    // their subgroup variants are kept)
    let subgroups = ShaderFeatures { subgroup_size: 32, int_runs: 1024, int_batch: 3, ..Default::default() };
    let coop = ShaderFeatures { subgroup_size: 32, coop_matrix: true, ..Default::default() };
    let kv_f16 = ShaderFeatures { kv_f16: true, ..Default::default() };
    let variants = |f: ShaderFeatures| {
        plain.iter().map(move |k| k.with_features(f)).filter(|k| k.features != ShaderFeatures::default())
    };
    let keys: Vec<(KernelKey, bool)> = plain
        .iter()
        .map(|&k| (k, true))
        .chain(variants(kv_f16).map(|k| (k, true)))
        .chain(variants(subgroups).map(|k| (k, false)))
        .chain(variants(coop).filter(|k| k.features.coop_matrix).map(|k| (k, false)))
        .collect();
    // naga is wgpu's own front end, linked in (`naga_validate`); tint is in no registry.
    // Without tint the browser half is skipped here, loudly, unless KINDLING_REQUIRE_TINT
    // is set: then a missing tint fails below as before. The browser variants are also
    // compiled by Chromium's own WebGPU (tint inside), where no tint binary is needed:
    // crates/web/tests/browser/shaders.rs, in scripts/test_browser.sh's WebGPU run.
    let tint_found = std::process::Command::new("tint").arg("--help").output().is_ok();
    let use_tint = tint_found || std::env::var_os("KINDLING_REQUIRE_TINT").is_some();
    if !use_tint {
        eprintln!("\n!!!!!!!! WARNING: `tint` (Chrome's WGSL compiler) is not on PATH: the browser variants are NOT validated as Chrome would !!!!!!!!");
        eprintln!("!!!!!!!! (only through naga). Put tint on PATH, or set KINDLING_REQUIRE_TINT=1 to make its absence a failure. !!!!!!!!\n");
    }
    for (key, browser) in &keys {
        let f = key.features;
        let path = dir.join(format!(
            "{:?}_{:?}_{:?}_{}_{}_{}_{}_{}_{}.wgsl",
            key.op,
            key.ty,
            key.ty3,
            f.subgroup_size,
            f.kv_f16,
            f.coop_matrix,
            f.int_runs,
            f.int_input_staged,
            f.int_batch
        ));
        // A browser compiles the module with its marked loops bounded (loop_bounds.rs):
        // that form goes to tint, and to naga beside the native one.
        let source = if *browser { key.browser_source() } else { key.source() };
        std::fs::write(&path, &source).expect("write shader");
        // The cooperative-matrix variants also go through naga's SPIR-V writer (what wgpu
        // runs natively), which no device here exercises: lavapipe has no cooperative
        // matrices, and the writer has failed on sources its validator accepts.
        if let Err(e) = naga_validate(&source, f.coop_matrix) {
            failures.push(format!("naga {}:\n{e}", path.display()));
        }
        if *browser {
            if let Err(e) = naga_validate(&key.source(), false) {
                failures.push(format!("naga (native form) {}:\n{e}", path.display()));
            }
        }
        if *browser && use_tint {
            let out = std::process::Command::new("tint").args(["--format=wgsl", "-o", "/dev/null"]).arg(&path).output();
            let out = out.unwrap_or_else(|e| {
                panic!("cannot run `tint` (Chrome's WGSL compiler validates the browser variants; see docs/TESTING.md): {e}")
            });
            if !out.status.success() {
                failures.push(format!(
                    "tint {}:\n{}{}",
                    path.display(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // And the device compiles them all.
    let mut b = gpu();
    b.compile_all(&ALL_TYPES).expect("every pipeline compiles on the device");
    eprintln!("{} kernel variants validated", keys.len());
}

/// What `naga FILE [OUT.spv]` checks: the WGSL parses and validates with every
/// capability (those SPIR-V allows, when writing it), and the SPIR-V writer takes it.
fn naga_validate(source: &str, spirv: bool) -> Result<(), String> {
    use naga::valid::{Capabilities, ShaderStages, SubgroupOperationSet, ValidationFlags, Validator};
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let caps = if spirv {
        naga::back::spv::supported_capabilities()
    } else {
        Capabilities::all() - Capabilities::TEXTURE_EXTERNAL
    };
    let info = Validator::new(ValidationFlags::all(), caps)
        .subgroup_stages(ShaderStages::all())
        .subgroup_operations(SubgroupOperationSet::all())
        .validate(&module)
        .map_err(|e| e.emit_to_string(source))?;
    if spirv {
        let (module, info) =
            naga::back::pipeline_constants::process_overrides(&module, &info, None, &Default::default())
                .map_err(|e| format!("{e:?}"))?;
        naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None)
            .map_err(|e| format!("{e:?}"))?;
    }
    Ok(())
}
