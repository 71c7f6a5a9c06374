//! Kernels named by a typed key, their binding layouts, and the cache of compiled
//! pipelines, layouts and bind groups. Nothing here is looked up by string.

use std::collections::HashMap;

use kindling_gguf::GgmlType;

use crate::shaders;

/// A shader file (one family of kernels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    Embed,
    RmsNorm,
    Matmul,
    Rope,
    Attention,
    Elementwise,
    Argmax,
    TopK,
}

/// One entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Embed,
    Matvec,
    /// A matvec over a vocabulary-sized weight (several rows per invocation).
    MatvecTall,
    MatvecGated,
    MatvecMulti,
    /// The three matvecs with the RMS norm of their input fused in (decode).
    MatvecNormed,
    MatvecGatedNormed,
    MatvecMultiNormed,
    MatmulTiled,
    /// Sums matmul_tiled's partial results over the spans of a split dot product.
    MatmulSplitSum,
    RmsNorm,
    RmsNormInPlace,
    RmsNormAdd,
    Rope,
    QkRope,
    /// `qk_rope` adding the q/k/v projection biases first (Qwen2).
    QkRopeBias,
    KvStore,
    Attention,
    /// Decode attention with qk_rope's work (biases, q/k norms, rotation, KV store)
    /// taken in.
    AttentionRope,
    /// Attention of a batch (prefill): the cache read once per block of rows.
    AttentionTiled,
    AttnCombine,
    Add,
    Gated,
    Softcap,
    SelectRow,
    Argmax,
    TopKChunks,
    TopKMerge,
}

/// How a kernel sees one binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The op's `Params`: a 256-byte window of the parameter blob (dynamic offset).
    Params,
    /// A read-only storage buffer.
    Read,
    /// A read-write storage buffer.
    Write,
    /// A read-only table in the parameter blob (dynamic offset, `TABLE_BYTES` long).
    Table,
    /// A table of at most `ROW_TABLE_BYTES` in the parameter blob (one row's RoPE
    /// (cos, sin), dynamic offset) bound as a uniform: it counts toward no storage-buffer
    /// limit, which browsers often hold at 10 per stage.
    RowTable,
}

use Slot::{Params, Read, RowTable, Table, Write};

impl Op {
    pub const ALL: [Op; 28] = [
        Op::Embed,
        Op::Matvec,
        Op::MatvecTall,
        Op::MatvecGated,
        Op::MatvecMulti,
        Op::MatvecNormed,
        Op::MatvecGatedNormed,
        Op::MatvecMultiNormed,
        Op::MatmulTiled,
        Op::MatmulSplitSum,
        Op::RmsNorm,
        Op::RmsNormInPlace,
        Op::RmsNormAdd,
        Op::Rope,
        Op::QkRope,
        Op::QkRopeBias,
        Op::KvStore,
        Op::Attention,
        Op::AttentionRope,
        Op::AttentionTiled,
        Op::AttnCombine,
        Op::Add,
        Op::Gated,
        Op::Softcap,
        Op::SelectRow,
        Op::Argmax,
        Op::TopKChunks,
        Op::TopKMerge,
    ];

    pub fn family(self) -> Family {
        match self {
            Op::Embed => Family::Embed,
            Op::Matvec
            | Op::MatvecTall
            | Op::MatvecGated
            | Op::MatvecMulti
            | Op::MatvecNormed
            | Op::MatvecGatedNormed
            | Op::MatvecMultiNormed
            | Op::MatmulTiled
            | Op::MatmulSplitSum => Family::Matmul,
            Op::RmsNorm | Op::RmsNormInPlace | Op::RmsNormAdd => Family::RmsNorm,
            Op::Rope | Op::QkRope | Op::QkRopeBias => Family::Rope,
            Op::KvStore | Op::Attention | Op::AttentionRope | Op::AttentionTiled | Op::AttnCombine => Family::Attention,
            Op::Add | Op::Gated | Op::Softcap | Op::SelectRow => Family::Elementwise,
            Op::Argmax => Family::Argmax,
            Op::TopKChunks | Op::TopKMerge => Family::TopK,
        }
    }

    pub fn entry_point(self) -> &'static str {
        match self {
            Op::Embed => "embed",
            // The normed kernels are the same entry points in a module assembled with
            // shaders/norm_in.wgsl (see `normed`).
            Op::Matvec | Op::MatvecNormed => "matvec",
            Op::MatvecTall => "matvec_tall",
            Op::MatvecGated | Op::MatvecGatedNormed => "matvec_gated",
            Op::MatvecMulti | Op::MatvecMultiNormed => "matvec_multi",
            Op::MatmulTiled => "matmul_tiled",
            Op::MatmulSplitSum => "matmul_split_sum",
            Op::RmsNorm => "rms_norm",
            Op::RmsNormInPlace => "rms_norm_in_place",
            Op::RmsNormAdd => "rms_norm_add",
            Op::Rope => "rope",
            // The bias variant is the same entry point in a module that binds the v
            // bias (see `shaders::assemble`).
            Op::QkRope | Op::QkRopeBias => "qk_rope",
            Op::KvStore => "kv_store",
            Op::Attention => "attention",
            Op::AttentionRope => "attention_rope",
            Op::AttentionTiled => "attention_tiled",
            Op::AttnCombine => "attn_combine",
            Op::Add => "add",
            Op::Gated => "gated",
            Op::Softcap => "softcap",
            Op::SelectRow => "select_row",
            Op::Argmax => "argmax",
            Op::TopKChunks => "top_k_chunks",
            Op::TopKMerge => "top_k_merge",
        }
    }

    /// Whether the kernel reads a weight through a type's `dq4` snippet.
    pub fn reads_weight(self) -> bool {
        self.family() == Family::Matmul || self == Op::Embed
    }

    /// Whether the kernel normalises its input row itself (its module is assembled
    /// with shaders/norm_in.wgsl, which adds the `nw` and `h` bindings).
    pub fn normed(self) -> bool {
        matches!(self, Op::MatvecNormed | Op::MatvecGatedNormed | Op::MatvecMultiNormed)
    }

    /// (binding number, slot) of every binding, in binding order; the buffers given to
    /// a dispatch fill the non-parameter slots in this order.
    pub fn bindings(self) -> &'static [(u32, Slot)] {
        match self {
            // tokens, table part, out
            Op::Embed => &[(0, Params), (1, Read), (2, Read), (3, Write)],
            // x, weight part, out, residual (or a dummy)
            Op::Matvec | Op::MatvecTall => &[(0, Params), (1, Read), (2, Read), (3, Write), (4, Write)],
            // x, weight part, out, residual (or a dummy), split partial sums (or a dummy),
            // the up weight where gated (or the weight part again)
            Op::MatmulTiled => &[(0, Params), (1, Read), (2, Read), (3, Write), (4, Write), (6, Write), (5, Read)],
            // out, residual (or a dummy), split partial sums
            Op::MatmulSplitSum => &[(0, Params), (3, Write), (4, Write), (6, Write)],
            // x, first weight part, out, second weight part, the output's quantized runs
            // (integer-dot kernel, or a dummy)
            Op::MatvecGated => &[(0, Params), (1, Read), (2, Read), (3, Write), (5, Read), (11, Write)],
            // x, w, out, w2, out2, w3, out3
            Op::MatvecMulti => &[(0, Params), (1, Read), (2, Read), (3, Write), (5, Read), (6, Write), (7, Read), (8, Write)],
            // As the plain ones, then the norm weight and the normalised row (h).
            Op::MatvecNormed => &[(0, Params), (1, Read), (2, Read), (3, Write), (4, Write), (9, Read), (10, Write)],
            Op::MatvecGatedNormed => &[(0, Params), (1, Read), (2, Read), (3, Write), (5, Read), (9, Read), (10, Write), (11, Write)],
            // Nine storage buffers: used where the device allows that many per stage.
            Op::MatvecMultiNormed => &[
                (0, Params),
                (1, Read),
                (2, Read),
                (3, Write),
                (5, Read),
                (6, Write),
                (7, Read),
                (8, Write),
                (9, Read),
                (10, Write),
            ],
            // x, out, weight
            Op::RmsNorm => &[(0, Params), (1, Read), (2, Write), (4, Read)],
            // x (in and out), weight
            Op::RmsNormInPlace => &[(0, Params), (3, Write), (4, Read)],
            // x, out, weight, residual
            Op::RmsNormAdd => &[(0, Params), (1, Read), (2, Write), (4, Read), (5, Write)],
            // x, (cos, sin) table
            Op::Rope => &[(0, Params), (1, Write), (2, Table)],
            // q, k, v, q norm, k norm, k cache, v cache ((cos, sin) table after q)
            Op::QkRope => &[(0, Params), (1, Write), (2, Table), (3, Write), (4, Write), (7, Read), (8, Read), (9, Write), (10, Write)],
            // q, k, v, v bias, q bias, k bias (in the norm weights' bindings), k cache, v
            // cache: nine storage buffers, used where the device allows that many.
            Op::QkRopeBias => &[
                (0, Params),
                (1, Write),
                (2, Table),
                (3, Write),
                (4, Write),
                (5, Read),
                (7, Read),
                (8, Read),
                (9, Write),
                (10, Write),
            ],
            // k, v, k cache, v cache
            Op::KvStore => &[(0, Params), (5, Read), (6, Read), (9, Write), (10, Write)],
            // q, out, k cache, v cache, split scratch
            Op::Attention | Op::AttentionTiled => &[(0, Params), (1, Read), (2, Write), (3, Read), (4, Read), (11, Write)],
            // q, out, k, v, q norm (or bias), k norm (or bias), k cache, v cache (read and
            // written), split scratch, the row's (cos, sin), v bias: ten storage buffers,
            // used where the device allows that many per stage.
            Op::AttentionRope => &[
                (0, Params),
                (1, Read),
                (2, Write),
                (5, Read),
                (6, Read),
                (7, Read),
                (8, Read),
                (9, Write),
                (10, Write),
                (11, Write),
                (12, RowTable),
                (13, Read),
            ],
            // out, split scratch
            Op::AttnCombine => &[(0, Params), (2, Write), (11, Write)],
            // x, y
            Op::Add => &[(0, Params), (1, Write), (2, Read)],
            // gate, up, out
            Op::Gated => &[(0, Params), (3, Read), (4, Read), (5, Write)],
            // x
            Op::Softcap => &[(0, Params), (1, Write)],
            // dst, src
            Op::SelectRow => &[(0, Params), (5, Write), (6, Read)],
            // x, out
            Op::Argmax => &[(0, Params), (1, Read), (2, Write)],
            // x, chunk candidates
            Op::TopKChunks => &[(0, Params), (1, Read), (2, Write)],
            // chunk candidates, out
            Op::TopKMerge => &[(0, Params), (2, Write), (3, Write)],
        }
    }

    /// Ops with identical bindings share one layout (and their bind groups).
    pub fn layout(self) -> Op {
        match self {
            Op::MatvecTall => Op::Matvec,
            Op::AttentionTiled => Op::Attention,
            other => other,
        }
    }
}

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
    while lanes < 256 && rows * lanes < 131_072 && lanes * 28 <= k {
        lanes *= 2;
    }
    lanes as u32
}

/// Weight rows per workgroup of a decode matvec with `lanes` invocations per row.
pub fn matvec_rows(lanes: u32) -> usize {
    256 / lanes as usize
}

/// Rows per workgroup of `matvec_tall` (TALL_ITERS in matmul.wgsl rows per invocation).
pub fn matvec_tall_rows(lanes: u32) -> usize {
    4 * matvec_rows(lanes)
}

/// Optional shader features a variant is compiled for. The kernels run without any;
/// these select faster variants where the adapter has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ShaderFeatures {
    /// The matmul family sums a row's lanes with subgroup operations of this fixed size
    /// (0: through workgroup memory). Native only: wgpu offers subgroups there.
    pub subgroup_size: u32,
    /// The attention and rope families keep the KV cache as f16 pairs (packed in u32,
    /// no shader-f16 needed).
    pub kv_f16: bool,
    /// The batch kernels (prefill's matmul and attention) run on cooperative matrices:
    /// shaders/matmul_coop.wgsl and attention_coop.wgsl (native only: wgpu's
    /// experimental feature; see `coop_matrix_usable`).
    pub coop_matrix: bool,
    /// The decode matvecs over integer dot products (shaders/matvec_int.wgsl) for
    /// weight types with 32-value units (`has_int_units`): of a device, the most input
    /// runs (16 values each) its workgroup memory can stage, 0 where they are switched
    /// off; of a kernel, the runs its staging holds (`KernelKey::with_int_runs`), 0 for
    /// the f32 kernels of matmul.wgsl.
    pub int_runs: u32,
    /// Of an integer-dot `matvec`: its input binding holds the runs the gate/up kernel
    /// before it wrote (`KernelKey::with_input_staged`), so it stages nothing (`int_runs` 1).
    pub int_input_staged: bool,
}

impl ShaderFeatures {
    /// What the matmul kernels can use on a device: subgroups when the device has them
    /// at one fixed power-of-two size; cooperative matrices where the device has the
    /// configuration the kernel is written for (`coop_matrix_usable`) and subgroups of 32
    /// (its subgroups split the tile by local invocation index).
    pub fn for_device(subgroups: bool, min_size: u32, max_size: u32, coop_matrix: bool) -> Self {
        let usable = subgroups && min_size == max_size && max_size.is_power_of_two() && (4..=128).contains(&max_size);
        let subgroup_size = if usable { max_size } else { 0 };
        ShaderFeatures { subgroup_size, coop_matrix: coop_matrix && subgroup_size == 32, ..Default::default() }
    }
}

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

/// The output tile of the batch kernel (`matmul_tiled`), which the host dispatches by:
/// (activation rows, weight rows). The f32 kernel's is fixed in shaders/matmul_tiled.wgsl;
/// the cooperative-matrix kernel's is written into its module (shaders.rs) from here.
pub fn batch_tile(f: ShaderFeatures) -> (usize, usize) {
    if f.coop_matrix {
        COOP_TILE
    } else {
        (64, 64)
    }
}

/// The cooperative-matrix kernel's tile: 128 activation rows × 128 weight rows, sixteen
/// subgroups. Measured on an H100 (Qwen2.5-1.5B's prefill shapes, 512 rows): 128 × 128
/// beat 128 × 64 by 10-30% and 64 × 64 by 25-40%, even where it leaves most of the GPU
/// idle (48 workgroups for a 1,536-row weight): staging a step, not the multiplies, is
/// the cost, and a larger tile stages less per product.
pub const COOP_TILE: (usize, usize) = (128, 128);

/// Spans a cooperative-matrix batch matmul's dot products are split into (each a
/// workgroup per output tile, summed by matmul_split_sum), for `tiles` output tiles and
/// `k` values: enough for about SPLIT_K_TARGET workgroups, each span at least
/// SPLIT_K_MIN_SPAN values, at most SPLIT_K_MAX. A workgroup walks its span serially
/// (a step costs ~2 µs on an H100 whatever the tile), so a 1,536 × 8,960 down
/// projection over 512 rows (48 tiles, 280 steps) or a 256-row k projection (8 tiles)
/// left most of the GPU idle for the length of one long walk.
pub fn split_k(tiles: usize, k: usize) -> usize {
    SPLIT_K_TARGET.div_ceil(tiles.max(1)).min(k / SPLIT_K_MIN_SPAN).clamp(1, SPLIT_K_MAX)
}

const SPLIT_K_TARGET: usize = 256;
const SPLIT_K_MIN_SPAN: usize = 256;
const SPLIT_K_MAX: usize = 8;

/// Values per step of the cooperative-matrix kernel (CK in shaders/matmul_coop.wgsl):
/// a split's span is a multiple of it.
pub const COOP_STEP: usize = 32;
// matmul_coop.wgsl stages one chunk of 8 values of each tile per invocation and step
// (its subgroups of 32 each own a 32 × 32 piece of the tile).
const _: () = {
    let invocations = (COOP_TILE.0 / 32) * (COOP_TILE.1 / 32) * 32;
    assert!(COOP_TILE.0 * COOP_STEP / 8 == invocations && COOP_TILE.1 * COOP_STEP / 8 == invocations);
};

/// Workgroup memory the cooperative-matrix kernels need (attention_coop.wgsl's 44.5 KB;
/// matmul_coop.wgsl's is 36 KB): a device offering less runs the f32 batch kernels.
pub const COOP_WORKGROUP_STORAGE: u32 = 45_568;

/// Whether a device's cooperative matrix configurations include the one
/// shaders/matmul_coop.wgsl and attention_coop.wgsl use: 16 × 16 × 16, f16 inputs, f32
/// accumulator, subgroup scope (what NVIDIA's tensor cores offer through
/// VK_KHR_cooperative_matrix).
pub fn coop_matrix_usable(configs: &[wgpu::CooperativeMatrixProperties]) -> bool {
    use wgpu::CooperativeScalarType::{F16, F32};
    configs.iter().any(|c| c.m_size == 16 && c.n_size == 16 && c.k_size == 16 && c.ab_type == F16 && c.cr_type == F32)
}

/// A compiled kernel: entry point, weight type (for kernels that read weights) and
/// the feature flags of the variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelKey {
    pub op: Op,
    pub ty: Option<GgmlType>,
    /// matvec_multi's third weight's type where it differs from `ty` (v beside q and k:
    /// Q4_K_M files store v in Q6_K in half the layers).
    pub ty3: Option<GgmlType>,
    pub features: ShaderFeatures,
}

impl KernelKey {
    pub fn new(op: Op, ty: Option<GgmlType>) -> Self {
        KernelKey { op, ty: if op.reads_weight() { ty } else { None }, ty3: None, features: ShaderFeatures::default() }
    }

    /// The variant whose third weight is of type `t` (matvec_multi only; the same type
    /// as the first is the plain variant).
    pub fn with_third_type(mut self, t: GgmlType) -> Self {
        if matches!(self.op, Op::MatvecMulti | Op::MatvecMultiNormed) && self.ty != Some(t) {
            self.ty3 = Some(t);
        }
        self
    }

    /// The integer-dot variant of a decode matvec whose input row is `k` values, where
    /// it has one (its weight types have units, `has_int_units`, rows of whole units
    /// and blocks, and `k` ≤ INT_STAGE_MAX_K); its staging holds `k` rounded up to a
    /// step of runs. `with_features` keeps it where the device stages that many.
    pub fn with_int_runs(mut self, k: usize) -> Self {
        let decode = matches!(
            self.op,
            Op::Matvec | Op::MatvecNormed | Op::MatvecGated | Op::MatvecGatedNormed | Op::MatvecMulti | Op::MatvecMultiNormed
        );
        let fits = k > 0 && k <= INT_STAGE_MAX_K;
        if decode && fits && self.int_units_fit(k) {
            self.features.int_runs = ((k / 16) as u32).next_multiple_of(INT_RUNS_STEP);
        }
        self
    }

    /// The integer-dot `matvec` whose input binding holds the input row's runs as a
    /// gate/up kernel wrote them (`MatmulParams::qx_runs`), where its weight type has
    /// units; rows of any length (it stages nothing).
    pub fn with_input_staged(mut self, k: usize) -> Self {
        if self.op == Op::Matvec && k > 0 && self.int_units_fit(k) {
            // A staging of one run: the module's arrays are never touched.
            self.features.int_runs = 1;
            self.features.int_input_staged = true;
        }
        self
    }

    /// Whether rows of `k` values of this kernel's weight types are whole integer-dot
    /// units (and whole blocks).
    fn int_units_fit(self, k: usize) -> bool {
        let fits = |t: GgmlType| has_int_units(t) && k % t.block_elems().max(32) == 0;
        self.ty.is_some_and(fits) && self.ty3.is_none_or(fits)
    }

    /// The variant for these features (each family keeps the ones it has variants for,
    /// so the others are not compiled twice).
    pub fn with_features(mut self, f: ShaderFeatures) -> Self {
        let int_runs = self.features.int_runs;
        self.features = match self.op.family() {
            // Only the batch kernel (matmul_tiled) has a cooperative-matrix variant: the
            // decode kernels' modules stay as they are, or are the integer-dot ones
            // where the key asked for them and the device stages that many runs.
            Family::Matmul => ShaderFeatures {
                subgroup_size: f.subgroup_size,
                coop_matrix: f.coop_matrix && self.op == Op::MatmulTiled,
                int_runs: if int_runs <= f.int_runs { int_runs } else { 0 },
                int_input_staged: self.features.int_input_staged && int_runs <= f.int_runs,
                ..Default::default()
            },
            // So has the batch attention (attention_tiled): its module is the family's
            // with attention_coop.wgsl in place of attention_tiled.wgsl.
            Family::Attention => ShaderFeatures {
                kv_f16: f.kv_f16,
                coop_matrix: f.coop_matrix && self.op == Op::AttentionTiled,
                ..Default::default()
            },
            Family::Rope => ShaderFeatures { kv_f16: f.kv_f16, ..Default::default() },
            _ => ShaderFeatures::default(),
        };
        self
    }

    /// The module a kernel lives in: entry points of one family and type share it,
    /// except those assembled with bindings of their own (the fused norm's, the v bias,
    /// attention_rope's cache reads).
    fn module_key(self) -> ModuleKey {
        let own_bindings = self.op.normed() || matches!(self.op, Op::QkRopeBias | Op::AttentionRope);
        (self.op.family(), self.ty, self.ty3, self.features, own_bindings)
    }

    /// The WGSL module source of this kernel.
    pub fn source(self) -> String {
        shaders::assemble(self)
    }

    /// Every kernel the backend can build, for the given weight types; of the mixed
    /// matvec_multi variants, each type with the next one in `types` as its third.
    pub fn all(types: &[GgmlType]) -> Vec<KernelKey> {
        let mut keys = Vec::new();
        for op in Op::ALL {
            if op.reads_weight() {
                keys.extend(types.iter().map(|&t| KernelKey::new(op, Some(t))));
            } else {
                keys.push(KernelKey::new(op, None));
            }
            if matches!(op, Op::MatvecMulti | Op::MatvecMultiNormed) && types.len() > 1 {
                let next = types.iter().cycle().skip(1);
                keys.extend(types.iter().zip(next).map(|(&t, &t3)| KernelKey::new(op, Some(t)).with_third_type(t3)));
            }
            // The integer-dot variants (one staging size; the others differ only in it),
            // and the matvec that reads its input as the gate/up kernel left it.
            let mine = keys.iter().filter(|k| k.op == op);
            let int = mine.clone().map(|k| k.with_int_runs(256)).chain(mine.map(|k| k.with_input_staged(256)));
            let int: Vec<KernelKey> = int.filter(|k| k.features.int_runs > 0).collect();
            keys.extend(int);
        }
        keys
    }
}

/// Bytes of the parameter window every kernel binds (dynamic-offset alignment).
pub const PARAMS_SLOT: u64 = 256;
/// Bytes of a table binding (RoPE's cos/sin) in the parameter blob.
pub const TABLE_BYTES: u64 = 1 << 20;
/// Bytes of a `RowTable` binding: (cos, sin) of 128 pairs (head_dim 256), as
/// `array<vec4<f32>, 64>` in WGSL.
pub const ROW_TABLE_BYTES: u64 = 1024;

/// A shader module: family, weight type, third weight's type, features, input norm
/// fused (see `Op::normed`).
type ModuleKey = (Family, Option<GgmlType>, Option<GgmlType>, ShaderFeatures, bool);

/// Most non-parameter buffers a kernel binds.
const MAX_BUFFERS: usize = 10;

/// Identifies a buffer of the backend's arena (bind groups are cached by these).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufId(pub u32);

/// Pipelines, layouts and bind groups, created on first use and kept.
#[derive(Default)]
pub struct Cache {
    modules: HashMap<ModuleKey, wgpu::ShaderModule>,
    layouts: HashMap<Op, (wgpu::BindGroupLayout, wgpu::PipelineLayout)>,
    pipelines: HashMap<KernelKey, wgpu::ComputePipeline>,
    bind_groups: HashMap<(Op, [BufId; MAX_BUFFERS]), wgpu::BindGroup>,
    /// Objects created so far (a test checks none is created in the token loop).
    pub created: u64,
    /// Shaders are compiled without wgpu's loop counters and index clamps: natively,
    /// unless `GpuOptions::checked_shaders` (a browser keeps its own checks anyway).
    trusted: bool,
}

impl Cache {
    /// An empty cache whose shaders keep wgpu's run-time checks or not
    /// (`GpuOptions::checked_shaders`).
    pub fn new(checked_shaders: bool) -> Self {
        Cache { trusted: !checked_shaders && !cfg!(target_arch = "wasm32"), ..Cache::default() }
    }

    fn layout(&mut self, device: &wgpu::Device, op: Op) -> &(wgpu::BindGroupLayout, wgpu::PipelineLayout) {
        let op = op.layout();
        if !self.layouts.contains_key(&op) {
            let entries: Vec<wgpu::BindGroupLayoutEntry> = op
                .bindings()
                .iter()
                .map(|&(binding, slot)| {
                    let (ty, has_dynamic_offset) = match slot {
                        Params => (wgpu::BufferBindingType::Uniform, true),
                        Read => (wgpu::BufferBindingType::Storage { read_only: true }, false),
                        Write => (wgpu::BufferBindingType::Storage { read_only: false }, false),
                        Table => (wgpu::BufferBindingType::Storage { read_only: true }, true),
                        RowTable => (wgpu::BufferBindingType::Uniform, true),
                    };
                    wgpu::BindGroupLayoutEntry {
                        binding,
                        visibility: wgpu::ShaderStages::COMPUTE,
                        ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset, min_binding_size: None },
                        count: None,
                    }
                })
                .collect();
            let label = format!("{op:?}");
            let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(&label),
                entries: &entries,
            });
            let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&label),
                bind_group_layouts: &[Some(&bgl)],
                immediate_size: 0,
            });
            self.created += 2;
            self.layouts.insert(op, (bgl, pl));
        }
        &self.layouts[&op]
    }

    /// The pipeline of a kernel, compiling it on first use.
    pub fn pipeline(&mut self, device: &wgpu::Device, key: KernelKey) -> wgpu::ComputePipeline {
        if let Some(p) = self.pipelines.get(&key) {
            return p.clone();
        }
        let mk = key.module_key();
        if !self.modules.contains_key(&mk) {
            let label = format!("{:?} {:?} {:?}", mk.0, mk.1, mk.2);
            let desc = wgpu::ShaderModuleDescriptor { label: Some(&label), source: wgpu::ShaderSource::Wgsl(key.source().into()) };
            let module = if self.trusted {
                let mut checks = wgpu::ShaderRuntimeChecks::checked();
                checks.bounds_checks = false;
                checks.force_loop_bounding = false;
                // SAFETY: see GpuOptions::checked_shaders: the loops and indices of
                // every kernel are bounded by parameters derived from validated shapes.
                unsafe { device.create_shader_module_trusted(desc, checks) }
            } else {
                device.create_shader_module(desc)
            };
            self.created += 1;
            self.modules.insert(mk, module);
        }
        let layout = self.layout(device, key.op).1.clone();
        let label = format!("{key:?}");
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&label),
            layout: Some(&layout),
            module: &self.modules[&mk],
            entry_point: Some(key.op.entry_point()),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        });
        self.created += 1;
        self.pipelines.insert(key, pipeline.clone());
        pipeline
    }

    /// The bind group of `op` over `bufs` (filling its non-parameter slots in order),
    /// created on first use. `params` is the parameter blob buffer.
    pub fn bind_group(
        &mut self,
        device: &wgpu::Device,
        op: Op,
        bufs: &[BufId],
        arena: &[wgpu::Buffer],
        params: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let mut ids = [BufId(u32::MAX); MAX_BUFFERS];
        ids[..bufs.len()].copy_from_slice(bufs);
        let key = (op.layout(), ids);
        if let Some(bg) = self.bind_groups.get(&key) {
            return bg.clone();
        }
        let layout = self.layout(device, op).0.clone();
        let mut next = bufs.iter();
        let entries: Vec<wgpu::BindGroupEntry> = op
            .bindings()
            .iter()
            .map(|&(binding, slot)| {
                let resource = match slot {
                    Params => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: params,
                        offset: 0,
                        size: wgpu::BufferSize::new(PARAMS_SLOT),
                    }),
                    Table => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: params,
                        offset: 0,
                        size: wgpu::BufferSize::new(TABLE_BYTES),
                    }),
                    RowTable => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: params,
                        offset: 0,
                        size: wgpu::BufferSize::new(ROW_TABLE_BYTES),
                    }),
                    Read | Write => {
                        let id = next.next().copied().unwrap_or(BufId(0));
                        arena[id.0 as usize].as_entire_binding()
                    }
                };
                wgpu::BindGroupEntry { binding, resource }
            })
            .collect();
        let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(op.entry_point()),
            layout: &layout,
            entries: &entries,
        });
        self.created += 1;
        self.bind_groups.insert(key, bg.clone());
        bg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_k_spreads_few_tiles_over_spans_of_at_least_256_values() {
        // Qwen2.5-1.5B over 512 rows, 128 × 128 tiles: down (48 tiles, 8,960 values),
        // k (8 tiles, 1,536), gate (280 tiles).
        assert_eq!(split_k(48, 8960), 6);
        assert_eq!(split_k(8, 1536), 6);
        assert_eq!(split_k(280, 1536), 1);
        // Short rows are never split; at most SPLIT_K_MAX spans.
        assert_eq!(split_k(1, 300), 1);
        assert_eq!(split_k(1, 100_000), SPLIT_K_MAX);
        assert_eq!(split_k(0, 0), 1);
    }
}
