//! Every tuning choice of the backend in one file: the constants (each with the
//! measurement behind it) and the rules that turn a shape into a kernel's geometry.
//! The sizes a shader depends on are written into its module from here
//! (`shader_consts`), never restated in WGSL.

use kindling_gguf::GgmlType;

use crate::key::ShaderFeatures;

// ---- recording ----------------------------------------------------------------------

/// Bytes of the parameter blob one submission can carry (beyond it the batch is split
/// into two submissions).
pub const BLOB_BYTES: u64 = 4 << 20;
/// Weight bytes uploaded between two flushes of wgpu's staging memory.
pub const UPLOAD_FLUSH_BYTES: u64 = 64 << 20;
/// A batch of more rows than a matvec takes (a prompt's chunk) submits its work in
/// parts as it is recorded (`GpuOptions::submit_parts`, natively), the first after this
/// many dispatches and each next part twice the last, up to PREFILL_SUBMIT_MAX: the
/// device starts on the first layers while the host records the rest, instead of
/// waiting for the whole chunk's recording (~8 ms of host time for the 0.5B's 512-row
/// chunk on the 2-core development VM, a quarter of it in wgpu's encoding at `finish`).
/// Qwen2.5-0.5B's 512-token prefill on an H200: 1.07× (bench/results/qkv-submit-h200.md).
/// Decode steps stay one submission each (chain.rs).
pub const PREFILL_FIRST_SUBMIT: u32 = 16;
pub const PREFILL_SUBMIT_MAX: u32 = 256;
/// Natively, the fewest batch rows each thread computing a RoPE table takes (a thread
/// costs tens of µs to start; 256 rows of 64 pairs are ~0.4 ms of angles).
#[cfg(not(target_arch = "wasm32"))]
pub const ROPE_ROWS_PER_THREAD: usize = 256;

// ---- one invocation per item ----------------------------------------------------------

/// Invocations per workgroup of the kernels that give each item (value, pair, output)
/// an invocation: elementwise.wgsl, rope, kv_store, matmul_split_sum (`ITEMS_WG`).
pub const ITEMS_WG: usize = 256;

/// Workgroups for `items` items at one invocation each.
pub fn item_groups(items: usize) -> u32 {
    items.div_ceil(ITEMS_WG) as u32
}

// ---- decode matvecs -------------------------------------------------------------------

/// Most activation rows the matrix-vector kernel takes; larger batches use the tiled one
/// (`MV_MAX_B` in shaders/matmul.wgsl).
pub const MATVEC_MAX_ROWS: usize = 8;
/// Invocations per workgroup of the decode matvecs (`MV_WG`).
pub const MATVEC_WG: usize = 256;
/// Decode matvecs over weights of at least this many rows use `matvec_tall`.
pub const TALL_MIN_ROWS: usize = 16384;
/// Rows each invocation of `matvec_tall` walks at once (`TALL_ITERS`).
pub const TALL_ITERS: usize = 4;
/// Largest weight (rows) a decode matvec takes its input's norm into: each of its
/// workgroups recomputes the norm, which only pays off below vocabulary sizes.
pub const NORM_FUSE_MAX_ROWS: usize = 16384;

/// Invocations per weight row in a decode matvec of `rows` rows of `k` values (of 256
/// per workgroup): the fewest, from 16, that give rows × lanes ≥ 128k invocations (an
/// H100 holds 270k; fewer left short wide matrices such as a 1,536 × 8,960 down
/// projection latency-bound), doubling only while lanes × 28 ≤ k, so that each lane
/// keeps at least 14 of its row's values. Tall matrices
/// (gate/up, the vocabulary) keep 16 lanes, each walking several chunks with their
/// loads in flight.
///
/// The 28 is measured (H100, Vulkan; bench/results/h100-matvec-lanes.md). It was 32:
/// Qwen2.5 0.5B's 896-wide q/k/v and o projections now get 64 lanes instead of 32,
/// +19% decode; 24 gave the 1.5B's 1,536-wide o projection 128 lanes and cost it 3%;
/// the other models' lanes are unchanged.
pub fn matvec_lanes(rows: usize, k: usize) -> u32 {
    let mut lanes = 16usize;
    while lanes < MATVEC_WG && rows * lanes < 131_072 && lanes * 28 <= k {
        lanes *= 2;
    }
    lanes as u32
}

/// Weight rows per workgroup of a decode matvec with `lanes` invocations per row.
pub fn matvec_rows(lanes: u32) -> usize {
    MATVEC_WG / lanes as usize
}

/// Rows per workgroup of `matvec_tall` (TALL_ITERS rows per invocation).
pub fn matvec_tall_rows(lanes: u32) -> usize {
    TALL_ITERS * matvec_rows(lanes)
}

// ---- decode matvecs on integer dot products --------------------------------------------

/// Workgroup memory the integer-dot matvecs take besides their staging (the 256-value
/// sum array), and per staged run of 16 input values (three vec4<u32> and a vec2<f32>).
pub const INT_FIXED_STORAGE: u32 = 1024;
pub const INT_RUN_STORAGE: u32 = 56;
/// Staging sizes come in steps of this many runs (each size is its own module).
pub const INT_RUNS_STEP: u32 = 128;
/// The longest input row an integer-dot matvec stages itself. Every workgroup
/// quantizes the whole row, so past this its staging costs more than the integer
/// products save: Qwen2.5-1.5B's down projections (8,960 inputs, 768 workgroups) took
/// 21.5 → 34.8 µs (Q4_K) and 22.4 → 36.0 (Q6_K) a layer on an H100, where gate/up
/// (1,536 inputs) took 31.4 → 19.2.
pub const INT_STAGE_MAX_K: usize = 4096;

/// The most input runs a device's integer-dot matvecs can stage (`int_runs` of
/// `ShaderFeatures`) with this much workgroup memory, at most 1,024 (rows of 16,384).
pub fn int_runs_capacity(workgroup_storage: u32) -> u32 {
    let runs = workgroup_storage.saturating_sub(INT_FIXED_STORAGE) / INT_RUN_STORAGE;
    runs.min(1024) / INT_RUNS_STEP * INT_RUNS_STEP
}

/// Whether a weight type has 32-value units for the integer-dot matvecs
/// (shaders/quant_int/).
pub fn has_int_units(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::Q4K | GgmlType::Q6K | GgmlType::Q8_0 | GgmlType::Q5_0 | GgmlType::Q4_0 | GgmlType::Q4_1)
}

// ---- batch matmul (prefill) on integer dot products -----------------------------------

/// Signed-byte digits per activation value in the integer-dot batch kernel
/// (shaders/matmul_int.wgsl's QD, 1..=3): three keep each value within 6e-8 of its run's
/// largest, the f32 accuracy class the kernel tests hold every matmul to (and the decode
/// kernels' staging); each digit fewer drops a third of the dot products but rounds to
/// 2^-16 (two) or 2^-8 (one, llama.cpp's 8-bit activations) of the run's largest.
pub const INT_BATCH_DIGITS: u32 = 3;
const _: () = assert!(INT_BATCH_DIGITS >= 1 && INT_BATCH_DIGITS <= 3);

/// Whether the integer-dot batch kernel with `digits` digits beat the f32 one
/// (matmul_tiled) on `ty`, as timed per op on an H200 through Vulkan (op_timing with
/// NO_COOP=1, n = 512; bench/results/int-dot-prefill-h200.md). With three digits (the f32
/// accuracy class) only Q4_K: its time 0.85–0.95× the f32 kernel's, Q5_0 0.99–1.0×, Q6_K
/// 1.04–1.18×, Q4_1 1.07–1.17×, Q8_0 1.14–1.19×. Fewer digits (measuring only) pay on all.
pub fn int_batch_pays(ty: GgmlType, digits: u32) -> bool {
    digits < 3 || ty == GgmlType::Q4K
}

/// Workgroup memory of the integer-dot batch kernel with activations of `digits` digits:
/// per step, four runs of 16 values of each of the TM activation rows (a vec4 per digit
/// and a (scale, Σ) pair) and of the TN weight rows (a vec4 of quants and a pair of
/// factors). 20 KiB with three digits: above WebGPU's guaranteed 16 KiB, so devices with
/// less keep the f32 kernel.
pub const fn int_batch_storage(digits: u32) -> u32 {
    4 * (BATCH_TILE_F32.0 as u32 * (16 * digits + 8) + BATCH_TILE_F32.1 as u32 * (16 + 8))
}
// matmul_int.wgsl (as matmul_tiled.wgsl) lays its 16 × 16 invocations over 64 × 64.
const _: () = assert!(BATCH_TILE_F32.0 == 64 && BATCH_TILE_F32.1 == 64);

// ---- batch matmul (prefill) -----------------------------------------------------------

/// The f32 batch kernel's output tile (shaders/matmul_tiled.wgsl's TM × TN: activation
/// rows × weight rows; its 16 × 16 invocations each hold a 4 × 4 block).
pub const BATCH_TILE_F32: (usize, usize) = (64, 64);

/// The output tile of the batch kernel (`matmul_tiled`), which the host dispatches by:
/// (activation rows, weight rows).
pub fn batch_tile(f: ShaderFeatures) -> (usize, usize) {
    if f.coop_matrix {
        COOP_TILE
    } else {
        BATCH_TILE_F32
    }
}

/// The cooperative-matrix kernel's tile: 128 activation rows × 128 weight rows, sixteen
/// subgroups. Measured on an H100 (Qwen2.5-1.5B's prefill shapes, 512 rows): 128 × 128
/// beat 128 × 64 by 10-30% and 64 × 64 by 25-40%, even where it leaves most of the GPU
/// idle (48 workgroups for a 1,536-row weight): staging a step, not the multiplies, is
/// the cost, and a larger tile stages less per product.
pub const COOP_TILE: (usize, usize) = (128, 128);

/// Values per step of the cooperative-matrix kernel (CK in shaders/matmul_coop.wgsl):
/// a split's span is a multiple of it.
pub const COOP_STEP: usize = 32;
// matmul_coop.wgsl stages one chunk of 8 values of each tile per invocation and step
// (its subgroups of 32 each own a 32 × 32 piece of the tile).
const _: () = {
    let invocations = (COOP_TILE.0 / 32) * (COOP_TILE.1 / 32) * 32;
    assert!(COOP_TILE.0 * COOP_STEP / 8 == invocations && COOP_TILE.1 * COOP_STEP / 8 == invocations);
};

/// How a family of batch kernels splits its dot products into spans (each a workgroup
/// per output tile, summed by matmul_split_sum). A workgroup walks its span serially (a
/// step costs ~2 µs on an H100 whatever the tile), so a 1,536 × 8,960 down projection
/// over 512 rows (48 tiles, 280 steps) or a 256-row k projection (8 tiles) left most of
/// the GPU idle for the length of one long walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitK {
    /// From this many output tiles on, no split: the GPU is full without one.
    pub full_tiles: usize,
    /// The workgroups a split aims at.
    pub target: usize,
    /// The fewest values a span may hold.
    pub min_span: usize,
    /// The most spans.
    pub max_splits: usize,
}

/// On cooperative matrices (a 128 × 128 tile, sixteen subgroups). Timed on an H200 over
/// Qwen2.5-1.5B's shapes and 512 rows (bench/results/prefill-probes-h200.md): from a
/// target of 256 workgroups and spans of 256 values to 1,024 and 128, down 230 → 193 µs,
/// q and o 67.5 → 59.7, k and v 31.4 → 28.6; but gate (280 tiles) split in 4 went 218 →
/// 239, and in 2 (a target of 512) 231: 256 tiles and more stay whole.
pub const SPLIT_K_COOP: SplitK = SplitK { full_tiles: 256, target: 1024, min_span: 128, max_splits: 8 };
/// On cooperative matrices, a matmul over several weights side by side (a layer's q, k
/// and v: fusion.rs `record_batch_multi`), whose every tile writes partial sums: fewer
/// spans. On an H200 the 1.5B's q, k and v (64 tiles over 512 rows) took 65.8 µs in 8
/// spans, 62.0 in 6, 57.2 in 4 and 52.0 in 2 (targets of 1,024, 384, 256, 128); their
/// sums 14.2, 13.6, 13.2 and 13.2 (bench/results/qkv-submit-h200.md, calls 2 and 3). The
/// 48 tiles of q or o alone keep 8 spans: in 6 (a target of 256) o and down took 17%
/// longer.
pub const SPLIT_K_COOP_MULTI: SplitK = SplitK { target: 128, ..SPLIT_K_COOP };
/// On the shader cores (a 64 × 64 tile of 256 invocations: the f32 and integer-dot
/// kernels browsers run). The target was timed on an H200 at 1 (no split), 256, 512 and
/// 1,024 (bench/results/browser-prefill-h200.md): 1,024 was best or within 1% of it on
/// each shape; down 816 → 605 µs (f32), q and o 176 → 144 (integer dots), k and v 111 → 45.
pub const SPLIT_K_SHADER: SplitK = SplitK { full_tiles: 1024, target: 1024, min_span: 256, max_splits: 8 };
/// matmul_wide on the shader cores (a 128 × 128 tile of 256 invocations): as
/// SPLIT_K_SHADER, up to 16 spans. Its tiles are a quarter as many, so a weight with few
/// of them stopped at 8 spans with the GPU's last wave of workgroups part-empty: on an H200
/// under Dawn (two workgroups a multiprocessor, 264 at once), the 1.5B's down (48 tiles)
/// took 549 µs in 8 spans (384 workgroups, 1.45 waves) and 420 in 16 (768), its
/// spans' sums then about 10 µs more; gate (280 tiles) stays at 4 spans, the 0.5B's down
/// (28 tiles) went 156 → 162 µs at 16 (bench/results/wide-splits-h200.md).
pub const SPLIT_K_WIDE: SplitK = SplitK { full_tiles: 1024, target: 1024, min_span: 256, max_splits: 16 };

/// Workgroups of matmul_wide that run at once on the GPU its spans are measured on: an
/// H200's 132 multiprocessors, two each (its 119 registers under Tint and naga,
/// bench/results/tint-stores-h200.md). A browser cannot ask how many fit; on another GPU
/// the count is a guess whose error costs only part of a wave.
pub const WIDE_WAVE_GROUPS: usize = 264;

/// Spans matmul_wide splits a matmul of `tiles` output tiles over `k` values into: at most
/// SPLIT_K_WIDE's (`split_k`), the count whose time is least as waves of WIDE_WAVE_GROUPS
/// workgroups × a span's values, the last wave counted whole (fewest spans on ties: less
/// to sum). Under Dawn on an H200 this orders the measured counts as their times do: over
/// 2,048 rows the 1.5B's q/o and down took 268 and 1,489 µs in 4 spans (768 workgroups,
/// 2.9 waves) against 300 and 1,599 in SPLIT_K_WIDE's 6 (1,152: 4.4 waves), the 0.5B's
/// down 474 in 7 against 515 in 10; over 1,024 rows the 1.5B's down 741 in 11 against 765
/// in 8 and 910 in 6 (bench/results/wide-tail-h200.md).
pub fn wide_split_k(tiles: usize, k: usize) -> usize {
    let time_and_spans = |s: usize| {
        let span = k.div_ceil(s).next_multiple_of(SPLIT_K_ALIGN).max(1);
        let spans = k.div_ceil(span).max(1);
        ((tiles * spans).div_ceil(WIDE_WAVE_GROUPS) * span, spans)
    };
    (1..=split_k(tiles, k, SPLIT_K_WIDE)).map(time_and_spans).min().map_or(1, |(_, spans)| spans)
}

/// The split of a batch kernel family: see SplitK.
pub fn split_k_rule(f: ShaderFeatures) -> SplitK {
    if f.coop_matrix {
        SPLIT_K_COOP
    } else {
        SPLIT_K_SHADER
    }
}

/// Spans a batch matmul of `tiles` output tiles over `k` values is split into under
/// `rule`: enough for about `rule.target` workgroups, each span at least `rule.min_span`
/// values, at most `rule.max_splits`; none from `rule.full_tiles` tiles on.
pub fn split_k(tiles: usize, k: usize, rule: SplitK) -> usize {
    if tiles >= rule.full_tiles {
        return 1;
    }
    rule.target.div_ceil(tiles.max(1)).min(k / rule.min_span).clamp(1, rule.max_splits)
}
/// A span's values are a multiple of this: every batch kernel's step (COOP_STEP, the f32
/// kernel's 32, the integer-dot kernel's 64) divides it.
pub const SPLIT_K_ALIGN: usize = 64;
const _: () = assert!(SPLIT_K_ALIGN.is_multiple_of(COOP_STEP));
/// Spans whose partial sums `matmul_split_sum` reads in one go (`SUM_STEP`: loads issued
/// together, not one after another).
pub const SUM_STEP: usize = 8;
/// Columns of a row each invocation of `matmul_split_sum_norm` (a split matmul's sums
/// with the RMS norm after them: one MATVEC_WG workgroup a row) sums at a time
/// (`SUM_COLS`), each over SUM_STEP spans: their loads issued together.
pub const SUM_COLS: usize = 4;

// ---- large batches on the shader cores: dequantized panels ----------------------------

/// matmul_wide's output tile (WM activation rows × WN weight rows, 16 × 16 invocations
/// of an 8 × 8 block) and values a step (WK): shaders/matmul_wide.wgsl is written for
/// these (its loads: 128 invocations of a 4 × 4 block each fill both 8-value tiles,
/// 8 KiB of workgroup memory). An f32 GEMM probe on an H200 (Qwen2.5-1.5B's shapes, 512
/// rows) had this shape fastest: gate 468 µs against 645 for 64 × 64 tiles of 4 × 4
/// blocks; 128 × 64 or 64 × 128 tiles 579–614 (bench/results/f32-gemm-h200.md).
pub const WIDE_TILE: (usize, usize) = (128, 128);
pub const WIDE_STEP: usize = 8;
/// The shader-core batch kernels' steps (matmul_wide's WIDE_STEP values, matmul_int's 4
/// run slots) as calls written out (1) or as a loop over one call (0). The two compilers
/// measured disagree (an H200, µs a call, bench/results/wide-unrolled-h200.md): Chrome's
/// Tint (Dawn) ran matmul_wide on gate's / down's shapes in 437 / 390 written out against
/// 471 / 420 as a loop, and matmul_int on q's in 118.8 against 124.4; wgpu's naga ran
/// matmul_wide in 535 / 482 written out against 473 / 469. The wasm build runs where a
/// browser compiles its kernels (Tint in Chrome and Edge), so it writes them out; native
/// builds keep the loops.
pub const STEP_WRITTEN_OUT: bool = cfg!(target_arch = "wasm32");
const _: () = assert!(WIDE_TILE.0 == 128 && WIDE_TILE.1 == 128 && WIDE_STEP == 8);
const _: () = assert!(SPLIT_K_ALIGN.is_multiple_of(WIDE_STEP));
/// Values a step of matmul_wide on cooperative matrices (shaders/matmul_wide_coop.wgsl,
/// written for WIDE_TILE and 64: each of 256 invocations loads four 8-value chunks of
/// both tiles; 45,056 bytes of workgroup memory with its result pieces). In
/// coop_gemm_probe on an H200 (gate's shape, 512 rows) 64 values a step took 142 µs
/// against 196 for 32 (bench/results/coop-panels-h200.md).
pub const WIDE_COOP_STEP: usize = 64;
const _: () = assert!(SPLIT_K_ALIGN.is_multiple_of(WIDE_COOP_STEP));

/// Fewest activation rows a batch matmul runs as dequant_rows + matmul_wide (where the
/// device has no cooperative matrices): each matmul first writes its weight as f32, which
/// a short batch does not repay (on an H200, dequantizing gate's 8,960 × 1,536 Q4_K
/// takes 45 µs, its GEMM over 512 rows 475; at 256 rows gate took 330 µs against 345 on
/// integer dots, down 371 against 370: even, bench/results/f32-gemm-h200.md, call 5).
/// On cooperative matrices (gate and up as one f16 panel) the same bound, taken over
/// unmeasured: prompts are prefilled in chunks of 512 rows (the browser) or 2,048 (native),
/// where it gains (bench/results/coop-panels-h200.md).
pub const WIDE_MIN_ROWS: usize = 256;
/// Which weights a batch of `n` rows takes as panels: 512 rows or more (on a 256-row weight,
/// the 1.5B's k and v, its 128-row tiles leave the GPU idle even split: 46 µs against 30
/// for 64 × 64 tiles in the probe), and
///   - WIDE_MIN_WEIGHT_VALUES values or more: at 512 rows, on the 1.5B's 1,536 × 1,536 q
///     and o the dequantizing and the split sums (26 µs) ate the GEMM's gain (144 µs in
///     all against 133 on integer dots), while gate/up and down (13.8 M values) gained
///     12% and 23% (bench/results/f32-gemm-h200.md, call 4);
///   - or WIDE_LONG_BATCH_MIN_VALUES or more over WIDE_LONG_BATCH_ROWS rows or more (the
///     browser's prompts past 1,024 tokens, in batches of 2,048), where the dequantizing is
///     shared by more rows: the 1.5B's q/o took 218 µs against 239 at 1,024 rows, 366
///     against 461 at 2,048 (bench/results/wide-qkvo-h200.md).
pub fn wide_weight_pays(n: usize, rows: usize, k: usize) -> bool {
    let values = rows * k;
    let long_batch = n >= WIDE_LONG_BATCH_ROWS && values >= WIDE_LONG_BATCH_MIN_VALUES;
    rows >= 512 && (values >= WIDE_MIN_WEIGHT_VALUES || long_batch)
}
pub const WIDE_MIN_WEIGHT_VALUES: usize = 1 << 22;
pub const WIDE_LONG_BATCH_ROWS: usize = 1024;
/// 2 M values: the 1.5B's q and o (2.4 M) and larger, not the 0.5B's 896 × 896 (0.8 M),
/// whose panels were not measured at these batches.
pub const WIDE_LONG_BATCH_MIN_VALUES: usize = 1 << 21;
/// Most bytes of one f32 panel (a weight larger is dequantized and multiplied a panel of
/// rows at a time): the 1.5B's gate (8,960 × 1,536 × 4 bytes, 55 MB) in one, a 7B's
/// (14,336 × 4,096) in four. Also at most a weight part's bytes (`max_part_bytes`).
pub const WIDE_PANEL_BYTES: u64 = 64 << 20;
/// Most bytes of one gated f32 panel (`PanelForm::GatedF32`): twice WIDE_PANEL_BYTES, so the
/// 1.5B's gate and up (110 MB together) are one panel and one dispatch. Split into two
/// panels they would be two dispatches again, each ending in its own part-empty wave,
/// which is the time the gated dispatch saves (bench/results/wide-tail-h200.md).
pub const WIDE_GATED_F32_PANEL_BYTES: u64 = 2 * WIDE_PANEL_BYTES;

/// Fewest activation rows whose batch takes a feed-forward's gate and up as one gated f32
/// panel (`wide_gated_pays`) on the shader cores. Under Dawn on an H200, one matmul_wide
/// over the 1.5B's gate and up together (a 17,920-row panel, 2,240 workgroups over 2,048
/// rows) took 3,036 µs where the two took 1,681 µs each (1,120 workgroups: 4.24 waves of
/// the 264 that fit at once, the last one a quarter full), and 1,680 against 2 × 851
/// (each in two spans) over 1,024 rows; the gated activation's own dispatch (109 µs at
/// 2,048 rows) goes too (bench/results/wide-tail-h200.md). Not measured below 1,024 rows,
/// where each weight's GEMM splits into more spans than an unsplit gated one would have.
pub const WIDE_GATED_MIN_ROWS: usize = 1024;

/// Whether a batch of `n` rows takes a feed-forward's gate and up (each `rows` × `k`) as
/// one gated f32 panel on the shader cores (shaders/matmul_wide.wgsl, gated): from
/// WIDE_GATED_MIN_ROWS rows, where each weight alone would take panels.
pub fn wide_gated_pays(n: usize, rows: usize, k: usize) -> bool {
    n >= WIDE_GATED_MIN_ROWS && wide_weight_pays(n, rows, k)
}

/// What a panel holds (wide.rs): one weight part's rows as f32 (the shader cores; the
/// cooperative-matrix kernel's f16 rows are counted as f32), or a feed-forward's gate and
/// up interleaved (`wide_gated_rows`) as f16 (cooperative matrices) or as f32 (the shader
/// cores, `wide_gated_pays`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PanelForm {
    F32,
    GatedF16,
    GatedF32,
}

impl PanelForm {
    /// The form of a panel on a device with or without cooperative matrices.
    pub fn of(coop_matrix: bool, gated: bool) -> PanelForm {
        match (gated, coop_matrix) {
            (false, _) => PanelForm::F32,
            (true, true) => PanelForm::GatedF16,
            (true, false) => PanelForm::GatedF32,
        }
    }

    fn is_gated(self) -> bool {
        self != PanelForm::F32
    }

    /// Most bytes of one such panel (before `max_part_bytes`).
    fn limit(self) -> u64 {
        match self {
            PanelForm::GatedF32 => WIDE_GATED_F32_PANEL_BYTES,
            _ => WIDE_PANEL_BYTES,
        }
    }

    fn value_bytes(self) -> usize {
        match self {
            PanelForm::GatedF16 => 2,
            _ => 4,
        }
    }
}

/// Weight rows per panel of a `k`-value weight with panels of at most `max_bytes`: a
/// multiple of the tile's WN rows (None where not even WN rows fit: the weight then
/// takes matmul_tiled).
pub fn wide_panel_rows(k: usize, max_bytes: u64) -> Option<usize> {
    let rows = (max_bytes / (k as u64 * 4).max(1)) as usize;
    match rows / WIDE_TILE.1 * WIDE_TILE.1 {
        0 => None,
        r => Some(r),
    }
}

/// Weight rows (of a gated pair: gate rows, each with the same row of up) per panel of
/// `form` over a `k`-value weight, with weight parts of at most `max_part_bytes`: a
/// multiple of WN rows, or of WN / 2 gate rows (None where not even that fits). An f16
/// gated panel holds as many pairs as an f32 panel holds rows.
pub fn wide_form_rows(k: usize, max_part_bytes: u64, form: PanelForm) -> Option<usize> {
    let rows = wide_panel_rows(k, form.limit().min(max_part_bytes))?;
    Some(if form == PanelForm::GatedF32 { rows / 2 } else { rows })
}

/// Rows of a gated panel (matmul_wide_coop.wgsl, matmul_wide.wgsl) that holds `rows` rows
/// of a gate and the same rows of up: 128-row tiles of 64 gate rows then their 64 up rows.
pub fn wide_gated_rows(rows: usize) -> usize {
    rows.div_ceil(WIDE_TILE.1 / 2) * WIDE_TILE.1
}

/// Bytes of the panel scratch a batch matmul over a `rows` × `k` weight part allocates
/// where it takes panels of `form` (wide.rs: whole panels of `wide_form_rows` rows,
/// rounded up to a power of two within the form's limit so a larger weight later rarely
/// needs another), with weight parts and panels of at most `max_part_bytes`; None where
/// no panel fits.
pub fn wide_panel_bytes(rows: usize, k: usize, max_part_bytes: u64, form: PanelForm) -> Option<u64> {
    let limit = form.limit().min(max_part_bytes);
    let weight_rows = wide_form_rows(k, max_part_bytes, form)?.min(rows);
    let panel_rows = if form.is_gated() { wide_gated_rows(weight_rows) } else { weight_rows };
    let bytes = (panel_rows * k * form.value_bytes()) as u64;
    Some(bytes.next_power_of_two().min(limit).max(bytes))
}

/// Workgroup memory the cooperative-matrix kernels need (attention_coop.wgsl's 47,624 bytes;
/// matmul_coop.wgsl's is 36 KB): a device offering less runs the f32 batch kernels.
pub const COOP_WORKGROUP_STORAGE: u32 = 47_624;

// ---- attention ------------------------------------------------------------------------

/// Largest head the attention and rope kernels handle (their head buffers in workgroup
/// memory, `MAX_HD`).
pub const MAX_HEAD_DIM: usize = 256;

/// Rows per workgroup of `attention_tiled` (`TQ`), which takes batches of more than
/// MAX_SPLIT_ROWS rows where head_dim is a multiple of 4 and at most
/// ATTN_TILE_MAX_HEAD_DIM. 64, two per invocation (each key and value loaded once for
/// both), against 32, one per invocation: on an H200 the 1.5B's heads at chunk start
/// 3,584 took 1,242 → 846 µs, the 0.5B's 730 → 588, SmolLM2's 476 → 412
/// (bench/results/attention-two-rows-h200.md).
pub const ATTN_TILE_ROWS: usize = 64;
/// Measured on an H100 over 512 rows (bench/results/h100-attention-tiled.md): the
/// tiled kernel takes 23-44% off the per-row one's time at head_dim 128 and 64, but
/// at 256 (Gemma 3: tiles of 8 positions, 64 workgroups) it is 65% slower.
pub const ATTN_TILE_MAX_HEAD_DIM: usize = 128;
// attention_tiled.wgsl's weighted sum holds two vec4s of head_dim (16 apart) per row of a
// row quad and invocation, and its tiles at most 16 positions of 128 values; its TQ / 2
// row pairs of 8 invocations (the scores) and its TQ / 4 row quads of 16 (the weighted
// sum) are each its workgroup of 256.
const _: () = assert!(
    ATTN_TILE_MAX_HEAD_DIM <= 128
        && ATTN_TILE_ROWS.is_multiple_of(4)
        && ATTN_TILE_ROWS / 2 * 8 == 256
        && ATTN_TILE_ROWS / 4 * 16 == 256
);
/// Positions per workgroup of attention_tiled aimed at: a block of rows attending to
/// more is shared among several (its last blocks otherwise walk the whole prompt
/// alone while the GPU idles), as long as there are fewer than
/// ATTN_TILE_TARGET_GROUPS workgroups (which also bounds the scratch: rows × splits).
pub const ATTN_TILE_SPLIT_POSITIONS: usize = 128;
pub const ATTN_TILE_TARGET_GROUPS: usize = 1024;

/// Rows per workgroup of attention_tiled on cooperative matrices, for heads up to
/// ATTN_COOP_NARROW_HEAD_DIM wide and wider (attention_coop.wgsl's geometry: each 16
/// rows' work is shared by four subgroups, or eight for wider heads).
pub const ATTN_COOP_ROWS: usize = 64;
pub const ATTN_COOP_ROWS_WIDE: usize = 32;
pub const ATTN_COOP_NARROW_HEAD_DIM: usize = 128;
/// Invocations of a cooperative-matrix attention workgroup: sixteen subgroups of 32, four
/// (narrow heads) or eight (wide) per 16 rows. 512, not 256: a workgroup of 512 holds
/// the driver to 128 registers an invocation, so a multiprocessor holds sixteen subgroups.
/// On an H200, inside a 4,096-token prefill, that is 1.03× faster than the same work in
/// eight subgroups at 164 registers, and 1.49× faster than main's four at 207 (`op_timing`,
/// one layer's call repeated, says 1.14× and 1.65×, on zeros or random inputs alike;
/// bench/results/attention-partners-h200.md, attention-inputs-h200.md).
pub const ATTN_COOP_WG: usize = 512;
const _: () = assert!(ATTN_COOP_WG / 2 / ATTN_COOP_ROWS == 4 && ATTN_COOP_WG / 2 / ATTN_COOP_ROWS_WIDE == 8);
/// Rows per workgroup of attention_tiled on cooperative matrices.
pub fn coop_attention_rows(head_dim: usize) -> usize {
    if head_dim > ATTN_COOP_NARROW_HEAD_DIM {
        ATTN_COOP_ROWS_WIDE
    } else {
        ATTN_COOP_ROWS
    }
}
/// The widest head the cooperative-matrix attention takes (eight subgroups of 32 values
/// each for the weighted sum).
pub const ATTN_COOP_MAX_HEAD_DIM: usize = 256;
/// Positions per workgroup the cooperative-matrix attention aims at, and the workgroups
/// aimed at in all (as ATTN_TILE_SPLIT_POSITIONS and ATTN_TILE_TARGET_GROUPS). Since the
/// kernel takes one pass, fewer and longer shares pay: 256 and 512 against 128 and 1,024
/// on an H200, µs a layer at chunk starts 512 / 2,048 / 3,584 (coop-staging-h200.md §9):
/// Qwen2.5-1.5B's heads 250 → 196 / 535 → 498 / 768 → 764, Gemma 3's 180 → 162 /
/// 452 → 379 / 654 → 577, the 0.5B's 194 → 178 / 409 → 403 / 615 → 630.
pub const ATTN_COOP_SPLIT_POSITIONS: usize = 256;
pub const ATTN_COOP_TARGET_GROUPS: usize = 512;

/// Most workgroups one (row, head) of attention is spread over (decode, long contexts).
pub const MAX_SPLITS: usize = 32;
/// Values before a split's partial result in attention's split scratch: its max, its sum
/// and two unused, so that the result starts on a vec4 (the o projection's matvec reads
/// it as vec4s where it merges the splits itself: matvec_int.wgsl's INPUT_MERGED).
pub const SPLIT_HEAD: usize = 4;
/// Invocations of attn_combine, which loads the splits' sums with one invocation each
/// (`COMBINE_WG`).
pub const COMBINE_WG: usize = 64;
const _: () = assert!(MAX_SPLITS <= COMBINE_WG);
/// Batches up to this many rows may split attention (decode and short chunks).
pub const MAX_SPLIT_ROWS: usize = 8;
/// Positions per split workgroup aimed at, and the workgroups aimed at in all. 64, not
/// 32: decode after a 512-token prompt +5-8% on the four models on an H100, and none
/// slower after 1,536 (bench/results/h100-attention-splits.md).
pub const SPLIT_POSITIONS: usize = 64;
/// Up to this many positions a (row, head) is one workgroup: below it the merge
/// dispatch costs more than the parallelism gains (measured on an H100).
pub const SPLIT_MIN_SPAN: usize = 256;
pub const SPLIT_TARGET_GROUPS: usize = 256;

// ---- sampling -------------------------------------------------------------------------

/// Values per chunk of top_k_rows' first pass (one workgroup each).
pub const TOP_K_CHUNK: usize = 4096;
/// Most candidates top_k_rows selects per row.
pub const MAX_TOP_K: usize = 1024;

// ---- sizes written into the shaders ----------------------------------------------------

/// The value of a size a shader depends on, by its WGSL name: each family names the
/// ones its files use (`FamilySpec::sizes`) and gets them as `const` lines from here,
/// so shader and host cannot disagree.
pub fn shader_size(name: &str) -> u64 {
    match name {
        "ITEMS_WG" => ITEMS_WG as u64,
        "MV_WG" => MATVEC_WG as u64,
        "MV_MAX_B" => MATVEC_MAX_ROWS as u64,
        "TALL_ITERS" => TALL_ITERS as u64,
        "SUM_COLS" => SUM_COLS as u64,
        "SUM_STEP" => SUM_STEP as u64,
        "TM" => BATCH_TILE_F32.0 as u64,
        "TN" => BATCH_TILE_F32.1 as u64,
        "WM" => WIDE_TILE.0 as u64,
        "WN" => WIDE_TILE.1 as u64,
        "WK" => WIDE_STEP as u64,
        "STEP_WRITTEN_OUT" => STEP_WRITTEN_OUT as u64,
        "WCK" => WIDE_COOP_STEP as u64,
        "CM" => COOP_TILE.0 as u64,
        "CN" => COOP_TILE.1 as u64,
        "CK" => COOP_STEP as u64,
        "MAX_HD" => MAX_HEAD_DIM as u64,
        "TQ" => ATTN_TILE_ROWS as u64,
        "COOP_ATTN_ROWS" => ATTN_COOP_ROWS as u64,
        "COOP_ATTN_ROWS_WIDE" => ATTN_COOP_ROWS_WIDE as u64,
        "COOP_ATTN_NARROW_HD" => ATTN_COOP_NARROW_HEAD_DIM as u64,
        "COOP_ATTN_WG" => ATTN_COOP_WG as u64,
        "COMBINE_WG" => COMBINE_WG as u64,
        "SPLIT_HEAD" => SPLIT_HEAD as u64,
        "MAX_SPLITS" => MAX_SPLITS as u64,
        "ROW_TABLE_VEC4S" => crate::op_table::ROW_TABLE_BYTES / 16,
        _ => unreachable!("no shader size named {name}"),
    }
}

/// `const NAME: u32 = <value>u;` for each of `names`.
pub fn shader_consts(names: &[&str]) -> String {
    names.iter().map(|n| format!("const {n}: u32 = {}u;\n", shader_size(n))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_k_spreads_few_tiles_over_spans_of_a_least_size() {
        // Qwen2.5-1.5B over 512 rows, 128 × 128 tiles: down (48 tiles, 8,960 values),
        // q (48, 1,536), k (8 tiles, 1,536), gate (280 tiles: whole).
        let coop = SPLIT_K_COOP;
        assert_eq!(split_k(48, 8960, coop), 8);
        assert_eq!(split_k(48, 1536, coop), 8);
        assert_eq!(split_k(8, 1536, coop), 8);
        assert_eq!(split_k(280, 1536, coop), 1);
        // Short rows are never split; at most max_splits spans.
        assert_eq!(split_k(1, 200, coop), 1);
        assert_eq!(split_k(1, 300, coop), 2);
        assert_eq!(split_k(1, 100_000, coop), coop.max_splits);
        assert_eq!(split_k(0, 0, coop), 1);
        // The shader cores' 64 × 64 tiles: down (192 tiles), k (32), gate (1,120).
        let shader = SPLIT_K_SHADER;
        assert_eq!(split_k(192, 8960, shader), 6);
        assert_eq!(split_k(32, 1536, shader), 6);
        assert_eq!(split_k(1120, 1536, shader), 1);
        assert_eq!(split_k(1, 300, shader), 1);
        // matmul_wide's 128 × 128 tiles: the 1.5B's down (48 tiles) and gate (280), the
        // 0.5B's down (28 tiles, 4,864 values) and gate (152, 896).
        let wide = SPLIT_K_WIDE;
        assert_eq!(split_k(48, 8960, wide), 16);
        assert_eq!(split_k(280, 1536, wide), 4);
        assert_eq!(split_k(28, 4864, wide), 16);
        assert_eq!(split_k(152, 896, wide), 3);
        // The spans matmul_wide takes (wide_split_k): at most those, fewer where the
        // last wave of workgroups would be part-empty. Over 2,048 rows the 1.5B's q/o and
        // down (192 tiles) and the 0.5B's down (112); over 1,024 the 1.5B's down (96);
        // over 512 its gate (280) and down (48), the 0.5B's gate (152); never past 1.
        assert_eq!(wide_split_k(192, 1536), 4);
        assert_eq!(wide_split_k(192, 8960), 4);
        assert_eq!(wide_split_k(112, 4864), 7);
        assert_eq!(wide_split_k(96, 8960), 11);
        assert_eq!(wide_split_k(280, 1536), 4);
        assert_eq!(wide_split_k(48, 8960), 11);
        assert_eq!(wide_split_k(152, 896), 3);
        assert_eq!(wide_split_k(1120, 1536), 1);
        assert_eq!(wide_split_k(0, 0), 1);
    }

    #[test]
    fn panels_take_large_weights_only() {
        // Qwen2.5-1.5B at 512 rows: gate/up (8,960 × 1,536) and down (1,536 × 8,960), not
        // q/o (1,536 × 1,536) nor k/v (256 × 1,536); a 7B's k/v (1,024 × 4,096) and q
        // (4,096 × 4,096).
        assert!(wide_weight_pays(512, 8960, 1536) && wide_weight_pays(512, 1536, 8960));
        assert!(!wide_weight_pays(512, 1536, 1536) && !wide_weight_pays(512, 256, 1536));
        assert!(wide_weight_pays(512, 1024, 4096) && wide_weight_pays(512, 4096, 4096));
        // From 1,024 rows the 1.5B's q/o too, still not k/v nor the 0.5B's q/o (896 × 896).
        assert!(!wide_weight_pays(1023, 1536, 1536) && wide_weight_pays(1024, 1536, 1536));
        assert!(wide_weight_pays(2048, 1536, 1536) && !wide_weight_pays(2048, 256, 1536));
        assert!(!wide_weight_pays(2048, 896, 896));
        // Short of a 128-row tile's worth of rows by much: never, however long the rows.
        assert!(!wide_weight_pays(2048, 256, 1 << 20));
        // Panels of whole tiles within the limit, none where not even one tile fits.
        assert_eq!(wide_panel_rows(1536, 64 << 20), Some(10880));
        assert_eq!(wide_panel_rows(1024, 1 << 20), Some(256));
        assert_eq!(wide_panel_rows(1 << 20, 64 << 20), None);
        // The 1.5B's gate: one panel of 8,960 rows (52.5 MiB, rounded up to the 64 MiB
        // limit); its down (1,536 × 8,960: 52.5 MiB as well).
        let f32 = PanelForm::F32;
        assert_eq!(wide_panel_bytes(8960, 1536, u64::MAX, f32), Some(64 << 20));
        assert_eq!(wide_panel_bytes(1536, 1536, u64::MAX, f32), Some(16 << 20));
        // Panels held to a part's bytes: 256 rows of 1,024 values in 1 MiB.
        assert_eq!(wide_panel_bytes(650, 1024, 1 << 20, f32), Some(1 << 20));
        assert_eq!(wide_panel_bytes(650, 1 << 20, 64 << 20, f32), None);
        // Gated: a pair of 300 rows interleaves into 640 rows of f16 (1.6 MB at 1,280
        // values a row), rounded up to 2 MiB; the gate's whole panel holds the pair too.
        let (f16_pair, f32_pair) = (PanelForm::GatedF16, PanelForm::GatedF32);
        assert_eq!(wide_gated_rows(300), 640);
        assert_eq!(wide_panel_bytes(300, 1280, u64::MAX, f16_pair), Some(2 << 20));
        assert_eq!(wide_panel_bytes(8960, 1536, u64::MAX, f16_pair), Some(64 << 20));
        // As f32 on the shader cores, the 1.5B's pair in one panel of 17,920 rows (105
        // MiB, rounded up to the 128 MiB limit); a part's bytes halve the pairs a panel
        // holds (1 MiB: 128 pairs of 1,024 values).
        assert_eq!(wide_form_rows(1536, u64::MAX, f32_pair), Some(10880));
        assert_eq!(wide_panel_bytes(8960, 1536, u64::MAX, f32_pair), Some(128 << 20));
        assert_eq!(wide_form_rows(1024, 1 << 20, f32_pair), Some(128));
        assert_eq!(wide_panel_bytes(650, 1024, 1 << 20, f32_pair), Some(1 << 20));
        assert_eq!(wide_form_rows(1024, 1 << 20, f16_pair), Some(256));
        // The gated f32 pair from 1,024 rows, on weights that take panels alone.
        assert!(!wide_gated_pays(1023, 8960, 1536) && wide_gated_pays(1024, 8960, 1536));
        assert!(wide_gated_pays(2048, 4864, 896) && !wide_gated_pays(2048, 256, 1536));
    }
}

/// How an op's workgroup count follows from its shape: each op's entry in the op table
/// names its rule, whose constants and functions are above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tuning {
    /// One workgroup per batch row.
    PerRow,
    /// One workgroup per normalised group of a row (a whole row, or a head).
    PerNormGroup,
    /// One invocation per item, ITEMS_WG to a workgroup (`item_groups`).
    PerItem,
    /// `matvec_lanes` invocations per weight row, `matvec_rows` rows per workgroup
    /// (each weight of a group in turn).
    MatvecLanes,
    /// `matvec_lanes`, `matvec_tall_rows` rows per workgroup.
    MatvecTall,
    /// A workgroup per `batch_tile` output tile, times the `split_k` spans on
    /// cooperative matrices.
    BatchTiles,
    /// A workgroup per WIDE_TILE output tile of a panel (`wide_panel_rows` weight rows),
    /// times its `wide_split_k` spans.
    WideTiles,
    /// One workgroup per (row, head) of q and of k.
    PerQkHead,
    /// One workgroup per (row, head), times its splits over long contexts
    /// (SPLIT_POSITIONS, SPLIT_MIN_SPAN, SPLIT_TARGET_GROUPS, MAX_SPLITS).
    AttentionSplits,
    /// One workgroup per (block of ATTN_TILE_ROWS or `coop_attention_rows` rows, head),
    /// times its splits (ATTN_TILE_SPLIT_POSITIONS, ATTN_TILE_TARGET_GROUPS; on cooperative
    /// matrices ATTN_COOP_SPLIT_POSITIONS, ATTN_COOP_TARGET_GROUPS).
    AttentionTiles,
    /// One workgroup per (row, head): the merge of attention's splits.
    PerRowHead,
    /// One workgroup per (row, chunk of TOP_K_CHUNK values).
    PerChunk,
}

impl Tuning {
    /// The rule in a few words (for `kindling shaders`).
    pub fn describe(self) -> &'static str {
        match self {
            Tuning::PerRow => "one workgroup per batch row",
            Tuning::PerNormGroup => "one workgroup per normalised group (row or head)",
            Tuning::PerItem => "one invocation per item, ITEMS_WG a workgroup",
            Tuning::MatvecLanes => "matvec_lanes lanes a weight row, matvec_rows rows a workgroup",
            Tuning::MatvecTall => "matvec_lanes lanes a weight row, matvec_tall_rows rows a workgroup",
            Tuning::BatchTiles => "one workgroup per batch_tile output tile, times its split_k spans",
            Tuning::WideTiles => "one workgroup per WIDE_TILE output tile of a panel, times its wide_split_k spans",
            Tuning::PerQkHead => "one workgroup per (row, head) of q and k",
            Tuning::AttentionSplits => "one workgroup per (row, head) times its splits (SPLIT_*)",
            Tuning::AttentionTiles => {
                "one workgroup per (block of TQ or coop_attention_rows rows, head) times its splits (ATTN_TILE_*, ATTN_COOP_*)"
            }
            Tuning::PerRowHead => "one workgroup per (row, head)",
            Tuning::PerChunk => "one workgroup per (row, TOP_K_CHUNK values)",
        }
    }
}
