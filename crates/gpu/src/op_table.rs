//! One description per GPU op: its name, entry point, family (shader file), bindings
//! and layout, whether it reads a weight, how its module is assembled, which variants
//! it has and its tuning rule, all in one table entry (`OPS`), as ratchet and cubecl
//! keep an op in one place. Adding an op is adding an `Op` and its entry; everything
//! else (layouts, module assembly, the kernel list, `kindling shaders`) reads the table.
//!
//! A table of plain data rather than one impl per op: the ops differ in data, not
//! behaviour, so a table shows them side by side (a reader compares two ops' bindings
//! on adjacent lines), and the code that reads it is written once.

use crate::params::{
    ArgmaxParams, AttnParams, EmbedParams, EwParams, MatmulParams, NormParams, QuantParams, RopeParams, TopKParams,
};
use crate::shaders;
use crate::tuning::Tuning;

/// A shader file (one family of kernels), whose entry points share a `Params` struct.
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
    Quantize,
}

/// What a family's modules are made of besides the prelude.
pub struct FamilySpec {
    /// The family file (shaders/<name>.wgsl).
    pub body: &'static str,
    /// Its `struct Params`, generated from the Rust definition (params.rs).
    pub params: &'static str,
    /// The sizes its files use, written into each module from tuning.rs.
    pub sizes: &'static [&'static str],
}

impl Family {
    pub fn spec(self) -> FamilySpec {
        let (body, params, sizes): (_, _, &[&str]) = match self {
            Family::Embed => (shaders::EMBED, EmbedParams::WGSL, &[]),
            Family::RmsNorm => (shaders::RMS_NORM, NormParams::WGSL, &[]),
            Family::Matmul => (
                shaders::MATMUL,
                MatmulParams::WGSL,
                &["ITEMS_WG", "MV_WG", "MV_MAX_B", "TALL_ITERS", "SUM_STEP", "SUM_COLS"],
            ),
            Family::Rope => (shaders::ROPE, RopeParams::WGSL, &["ITEMS_WG", "MAX_HD"]),
            Family::Attention => (
                shaders::ATTENTION,
                AttnParams::WGSL,
                &["ITEMS_WG", "MAX_HD", "COMBINE_WG", "ROW_TABLE_VEC4S", "SPLIT_HEAD"],
            ),
            Family::Elementwise => (shaders::ELEMENTWISE, EwParams::WGSL, &["ITEMS_WG"]),
            Family::Argmax => (shaders::ARGMAX, ArgmaxParams::WGSL, &[]),
            Family::TopK => (shaders::TOP_K, TopKParams::WGSL, &[]),
            Family::Quantize => (shaders::QUANTIZE_RUNS, QuantParams::WGSL, &["ITEMS_WG"]),
        };
        FamilySpec { body, params, sizes }
    }
}

/// One entry point (with the module it is compiled in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Embed,
    /// Learned absolute positions added to the batch's rows (BERT).
    AddPositions,
    Matvec,
    /// A matvec over a vocabulary-sized weight (several rows per invocation).
    MatvecTall,
    MatvecGated,
    MatvecMulti,
    /// The three matvecs with the RMS norm of their input fused in (decode).
    MatvecNormed,
    MatvecGatedNormed,
    MatvecMultiNormed,
    /// The o projection's decode matvec with the merge of the attention's splits before
    /// it taken in: its input is the split scratch, merged as it is staged
    /// (shaders/matvec_int.wgsl's INPUT_MERGED), one attn_combine dispatch fewer a layer.
    MatvecMerged,
    MatmulTiled,
    /// Sums matmul_tiled's partial results over the spans of a split dot product.
    MatmulSplitSum,
    /// The same sums where they add into a residual stream, with the RMS norm of that
    /// stream's rows after them taken in (a prefill's o and down projections).
    MatmulSplitSumNorm,
    /// The sums of a matmul over several weights at once (q, k and v), each column into
    /// its weight's output (`MatmulParams::multi`).
    MatmulSplitSumMulti,
    /// A panel of weight rows dequantized (a large batch's matmul: shaders/
    /// dequant_rows.wgsl): to f32 on the shader cores, to f16 on cooperative matrices.
    DequantRows,
    /// A large batch's matmul over a dequantized panel (shaders/matmul_wide.wgsl, or
    /// matmul_wide_coop.wgsl on cooperative matrices).
    MatmulWide,
    /// A batch's activation runs quantized for the integer-dot batch matmul.
    QuantizeRuns,
    RmsNorm,
    RmsNormInPlace,
    RmsNormAdd,
    /// Encoders' norm: centred, scaled, a bias added (shaders/rms_norm.wgsl).
    LayerNorm,
    LayerNormInPlace,
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
    /// A non-gated activation in place (BERT's GELU).
    Activation,
    Softcap,
    SelectRow,
    /// Constrained decoding: the ids a token mask forbids set to the lowest finite
    /// value (chain.rs).
    MaskLogits,
    Argmax,
    TopKChunks,
    TopKMerge,
}

/// How a kernel sees one binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The op's `Params`: a `PARAMS_SLOT`-byte window of the parameter blob (dynamic offset).
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

/// Bytes of the parameter window every kernel binds (dynamic-offset alignment).
pub const PARAMS_SLOT: u64 = 256;
/// Bytes of a table binding (RoPE's cos/sin) in the parameter blob.
pub const TABLE_BYTES: u64 = 1 << 20;
/// Bytes of a `RowTable` binding: (cos, sin) of 128 pairs (head_dim 256), as
/// `array<vec4<f32>, ROW_TABLE_VEC4S>` in WGSL.
pub const ROW_TABLE_BYTES: u64 = 1024;
const _: () = assert!(ROW_TABLE_BYTES == crate::tuning::MAX_HEAD_DIM as u64 / 2 * 8);

/// How an op's module differs from its family's shared one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Module {
    /// The family's module, shared with the family's other `Shared` ops of the same
    /// weight type and features.
    Shared,
    /// A decode matvec that takes the RMS norm of its input in (shaders/norm_in.wgsl:
    /// bindings 9 `nw` and 10 `h`); `staged`: the normalised row is kept in workgroup
    /// memory (shaders/norm_stage.wgsl), which pays off for gate/up only.
    NormIn { staged: bool },
    /// qk_rope binding the v bias it reads through v_bias() (binding 5), which the plain
    /// module must not declare (it would not fit that layout).
    VBias,
    /// Attention that writes the KV cache and reads it back: through the writable
    /// bindings only (one dispatch cannot bind a buffer both read-only and writable).
    CacheReadWrite,
    /// The integer-dot matvec whose input is attention's split scratch, merged as it is
    /// staged (`INPUT_MERGED`).
    MergedIn,
}

/// The variants an op has besides its plain kernel (see `KernelKey`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Forms {
    /// A decode matvec over integer dot products (shaders/matvec_int.wgsl) for weight
    /// types with 32-value units.
    pub int_dot: bool,
    /// A third weight in a type of its own (matvec_multi's v).
    pub third_type: bool,
    /// The integer-dot matvec reading its input as the gate/up kernel left it.
    pub staged_input: bool,
    /// A batch kernel on cooperative matrices.
    pub coop_matrix: bool,
    /// The batch matmul over integer dot products (shaders/matmul_int.wgsl) for weight
    /// types with 32-value units.
    pub int_batch: bool,
    /// Subgroup reductions (the matmul family's decode sums).
    pub subgroups: bool,
    /// An f16 KV cache (the families that read or write it).
    pub kv_f16: bool,
    /// Only the integer-dot form exists (no f32 kernel is written for it): the op has
    /// no plain variant, and the host records it only where that form runs.
    pub int_only: bool,
}

/// Everything about one op.
pub struct OpSpec {
    pub op: Op,
    /// Its name in kernel names (`kindling shaders`) and profiles.
    pub name: &'static str,
    pub entry_point: &'static str,
    pub family: Family,
    /// (binding number, slot) of every binding, in binding order; the buffers given to
    /// a dispatch fill the non-parameter slots in this order.
    pub bindings: &'static [(u32, Slot)],
    /// The op whose bind group layout (and bind groups) it shares: identical bindings.
    pub shares_layout_of: Option<Op>,
    /// Whether the kernel reads a weight through a type's `dq4` snippet.
    pub reads_weight: bool,
    pub module: Module,
    pub forms: Forms,
    pub tuning: Tuning,
}

use Slot::{Params, Read, RowTable, Table, Write};

const NO_FORMS: Forms = Forms {
    int_dot: false,
    third_type: false,
    staged_input: false,
    coop_matrix: false,
    int_batch: false,
    subgroups: false,
    kv_f16: false,
    int_only: false,
};
/// The matmul family's decode matvecs: integer-dot forms and subgroup sums.
const DECODE: Forms = Forms { int_dot: true, subgroups: true, ..NO_FORMS };
const MULTI: Forms = Forms { third_type: true, ..DECODE };
const MATMUL: Forms = Forms { subgroups: true, ..NO_FORMS };
const KV: Forms = Forms { kv_f16: true, ..NO_FORMS };

/// Every op, in `Op` order (`Op::spec` indexes it; a test checks the order).
pub const OPS: [OpSpec; 39] = [
    OpSpec {
        op: Op::Embed,
        name: "embed",
        entry_point: "embed",
        family: Family::Embed,
        // tokens, table part, out
        bindings: &[(0, Params), (1, Read), (2, Read), (3, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerRow,
    },
    OpSpec {
        op: Op::AddPositions,
        name: "add_positions",
        entry_point: "add_positions",
        family: Family::Embed,
        // table part, x (added into), the batch's row spans (packed batches)
        bindings: &[(0, Params), (2, Read), (3, Write), (4, Read)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerRow,
    },
    OpSpec {
        op: Op::Matvec,
        name: "matvec",
        entry_point: "matvec",
        family: Family::Matmul,
        // x, weight part, out, residual (or a dummy)
        bindings: &[(0, Params), (1, Read), (2, Read), (3, Write), (4, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: Forms { staged_input: true, ..DECODE },
        tuning: Tuning::MatvecLanes,
    },
    OpSpec {
        op: Op::MatvecTall,
        name: "matvec_tall",
        entry_point: "matvec_tall",
        family: Family::Matmul,
        bindings: &[(0, Params), (1, Read), (2, Read), (3, Write), (4, Write)],
        shares_layout_of: Some(Op::Matvec),
        reads_weight: true,
        module: Module::Shared,
        forms: MATMUL,
        tuning: Tuning::MatvecTall,
    },
    OpSpec {
        op: Op::MatvecGated,
        name: "matvec_gated",
        entry_point: "matvec_gated",
        family: Family::Matmul,
        // x, first weight part, out, second weight part, the output's quantized runs
        // (integer-dot kernel, or a dummy)
        bindings: &[(0, Params), (1, Read), (2, Read), (3, Write), (5, Read), (11, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: DECODE,
        tuning: Tuning::MatvecLanes,
    },
    OpSpec {
        op: Op::MatvecMulti,
        name: "matvec_multi",
        entry_point: "matvec_multi",
        family: Family::Matmul,
        // x, w, out, w2, out2, w3, out3
        bindings: &[(0, Params), (1, Read), (2, Read), (3, Write), (5, Read), (6, Write), (7, Read), (8, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: MULTI,
        tuning: Tuning::MatvecLanes,
    },
    OpSpec {
        op: Op::MatvecNormed,
        name: "matvec_normed",
        entry_point: "matvec",
        family: Family::Matmul,
        // As matvec's, then the norm weight and the normalised row (h).
        bindings: &[(0, Params), (1, Read), (2, Read), (3, Write), (4, Write), (9, Read), (10, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::NormIn { staged: false },
        forms: DECODE,
        tuning: Tuning::MatvecLanes,
    },
    OpSpec {
        op: Op::MatvecGatedNormed,
        name: "matvec_gated_normed",
        entry_point: "matvec_gated",
        family: Family::Matmul,
        bindings: &[(0, Params), (1, Read), (2, Read), (3, Write), (5, Read), (9, Read), (10, Write), (11, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::NormIn { staged: true },
        forms: DECODE,
        tuning: Tuning::MatvecLanes,
    },
    OpSpec {
        op: Op::MatvecMultiNormed,
        name: "matvec_multi_normed",
        entry_point: "matvec_multi",
        family: Family::Matmul,
        // Nine storage buffers: used where the device allows that many per stage.
        bindings: &[
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
        shares_layout_of: None,
        reads_weight: true,
        module: Module::NormIn { staged: false },
        forms: MULTI,
        tuning: Tuning::MatvecLanes,
    },
    OpSpec {
        op: Op::MatvecMerged,
        name: "matvec_merged",
        entry_point: "matvec",
        family: Family::Matmul,
        // The attention's split scratch, weight part, out, residual (or a dummy), the
        // attention's output (the merged row, which workgroup 0 writes).
        bindings: &[(0, Params), (1, Read), (2, Read), (3, Write), (4, Write), (6, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::MergedIn,
        forms: Forms { int_only: true, ..DECODE },
        tuning: Tuning::MatvecLanes,
    },
    OpSpec {
        op: Op::MatmulTiled,
        name: "matmul_tiled",
        entry_point: "matmul_tiled",
        family: Family::Matmul,
        // x, weight part, out, residual (or a dummy), split partial sums (or a dummy),
        // the up weight where gated or the second weight of several (over integer dot
        // products, the quantized x runs; else the weight part again), the third weight
        // of several, the second of several over integer dot products (each else the
        // weight part again)
        bindings: &[
            (0, Params),
            (1, Read),
            (2, Read),
            (3, Write),
            (4, Write),
            (6, Write),
            (5, Read),
            (7, Read),
            (9, Read),
        ],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: Forms { coop_matrix: true, int_batch: true, third_type: true, ..MATMUL },
        tuning: Tuning::BatchTiles,
    },
    OpSpec {
        op: Op::MatmulSplitSum,
        name: "matmul_split_sum",
        entry_point: "matmul_split_sum",
        family: Family::Matmul,
        // out, residual (or a dummy), split partial sums
        bindings: &[(0, Params), (3, Write), (4, Write), (6, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: MATMUL,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::MatmulSplitSumNorm,
        name: "matmul_split_sum_norm",
        entry_point: "matmul_split_sum_norm",
        family: Family::Matmul,
        // the norm's weight, out, the residual stream, split partial sums, the norm's output
        bindings: &[(0, Params), (2, Read), (3, Write), (4, Write), (6, Write), (8, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: MATMUL,
        tuning: Tuning::PerRow,
    },
    OpSpec {
        op: Op::MatmulSplitSumMulti,
        name: "matmul_split_sum_multi",
        entry_point: "matmul_split_sum_multi",
        family: Family::Matmul,
        // the first weight's output, the second's, split partial sums, the third's (or
        // a dummy)
        bindings: &[(0, Params), (3, Write), (4, Write), (6, Write), (8, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: MATMUL,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::DequantRows,
        name: "dequant_rows",
        entry_point: "dequant_rows",
        family: Family::Matmul,
        // weight part, up's part beside gate (gated; else the weight again), the panel
        bindings: &[(0, Params), (2, Read), (5, Read), (13, Write)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: Forms { coop_matrix: true, ..MATMUL },
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::MatmulWide,
        name: "matmul_wide",
        entry_point: "matmul_wide",
        family: Family::Matmul,
        // x, out, residual (or a dummy), split partial sums (or a dummy), the panel
        // (its key's type is F32: the module reads no quantized weight)
        bindings: &[(0, Params), (1, Read), (3, Write), (4, Write), (6, Write), (12, Read)],
        shares_layout_of: None,
        reads_weight: true,
        module: Module::Shared,
        forms: Forms { coop_matrix: true, ..MATMUL },
        tuning: Tuning::WideTiles,
    },
    OpSpec {
        op: Op::QuantizeRuns,
        name: "quantize_runs",
        entry_point: "quantize_runs",
        family: Family::Quantize,
        // x, its runs quantized (read by matmul_tiled over integer dot products)
        bindings: &[(0, Params), (1, Read), (2, Write)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::RmsNorm,
        name: "rms_norm",
        entry_point: "rms_norm",
        family: Family::RmsNorm,
        // x, out, weight
        bindings: &[(0, Params), (1, Read), (2, Write), (4, Read)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerNormGroup,
    },
    OpSpec {
        op: Op::RmsNormInPlace,
        name: "rms_norm_in_place",
        entry_point: "rms_norm_in_place",
        family: Family::RmsNorm,
        // x (in and out), weight
        bindings: &[(0, Params), (3, Write), (4, Read)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerNormGroup,
    },
    OpSpec {
        op: Op::RmsNormAdd,
        name: "rms_norm_add",
        entry_point: "rms_norm_add",
        family: Family::RmsNorm,
        // x, out, weight, residual
        bindings: &[(0, Params), (1, Read), (2, Write), (4, Read), (5, Write)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerNormGroup,
    },
    OpSpec {
        op: Op::LayerNorm,
        name: "layer_norm",
        entry_point: "layer_norm",
        family: Family::RmsNorm,
        // x, out, weight, bias
        bindings: &[(0, Params), (1, Read), (2, Write), (4, Read), (6, Read)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerNormGroup,
    },
    OpSpec {
        op: Op::LayerNormInPlace,
        name: "layer_norm_in_place",
        entry_point: "layer_norm_in_place",
        family: Family::RmsNorm,
        // x (in and out), weight, bias
        bindings: &[(0, Params), (3, Write), (4, Read), (6, Read)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerNormGroup,
    },
    OpSpec {
        op: Op::Rope,
        name: "rope",
        entry_point: "rope",
        family: Family::Rope,
        // x, (cos, sin) table
        bindings: &[(0, Params), (1, Write), (2, Table)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: KV,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::QkRope,
        name: "qk_rope",
        entry_point: "qk_rope",
        family: Family::Rope,
        // q, k, v, q norm, k norm, k cache, v cache ((cos, sin) table after q)
        bindings: &[
            (0, Params),
            (1, Write),
            (2, Table),
            (3, Write),
            (4, Write),
            (7, Read),
            (8, Read),
            (9, Write),
            (10, Write),
        ],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: KV,
        tuning: Tuning::PerQkHead,
    },
    OpSpec {
        op: Op::QkRopeBias,
        name: "qk_rope_bias",
        entry_point: "qk_rope",
        family: Family::Rope,
        // q, k, v, v bias, q bias, k bias (in the norm weights' bindings), k cache, v
        // cache: nine storage buffers, used where the device allows that many.
        bindings: &[
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
        shares_layout_of: None,
        reads_weight: false,
        module: Module::VBias,
        forms: KV,
        tuning: Tuning::PerQkHead,
    },
    OpSpec {
        op: Op::KvStore,
        name: "kv_store",
        entry_point: "kv_store",
        family: Family::Attention,
        // k, v, k cache, v cache
        bindings: &[(0, Params), (5, Read), (6, Read), (9, Write), (10, Write)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: KV,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::Attention,
        name: "attention",
        entry_point: "attention",
        family: Family::Attention,
        // q, out, k cache, v cache, split scratch, the batch's row spans (packed batches)
        bindings: &[(0, Params), (1, Read), (2, Write), (3, Read), (4, Read), (11, Write), (14, Read)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: KV,
        tuning: Tuning::AttentionSplits,
    },
    OpSpec {
        op: Op::AttentionRope,
        name: "attention_rope",
        entry_point: "attention_rope",
        family: Family::Attention,
        // q, out, k, v, q norm (or bias), k norm (or bias), k cache, v cache (read and
        // written), split scratch, the row's (cos, sin), v bias: ten storage buffers,
        // used where the device allows that many per stage.
        bindings: &[
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
        shares_layout_of: None,
        reads_weight: false,
        module: Module::CacheReadWrite,
        forms: KV,
        tuning: Tuning::AttentionSplits,
    },
    OpSpec {
        op: Op::AttentionTiled,
        name: "attention_tiled",
        entry_point: "attention_tiled",
        family: Family::Attention,
        bindings: &[(0, Params), (1, Read), (2, Write), (3, Read), (4, Read), (11, Write), (14, Read)],
        shares_layout_of: Some(Op::Attention),
        reads_weight: false,
        module: Module::Shared,
        forms: Forms { coop_matrix: true, ..KV },
        tuning: Tuning::AttentionTiles,
    },
    OpSpec {
        op: Op::AttnCombine,
        name: "attn_combine",
        entry_point: "attn_combine",
        family: Family::Attention,
        // out, split scratch
        bindings: &[(0, Params), (2, Write), (11, Write)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: KV,
        tuning: Tuning::PerRowHead,
    },
    OpSpec {
        op: Op::Add,
        name: "add",
        entry_point: "add",
        family: Family::Elementwise,
        // x, y
        bindings: &[(0, Params), (1, Write), (2, Read)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::Gated,
        name: "gated",
        entry_point: "gated",
        family: Family::Elementwise,
        // gate, up, out
        bindings: &[(0, Params), (3, Read), (4, Read), (5, Write)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::Activation,
        name: "activation",
        entry_point: "activation",
        family: Family::Elementwise,
        // x
        bindings: &[(0, Params), (1, Write)],
        shares_layout_of: Some(Op::Softcap),
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::Softcap,
        name: "softcap",
        entry_point: "softcap",
        family: Family::Elementwise,
        // x
        bindings: &[(0, Params), (1, Write)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::SelectRow,
        name: "select_row",
        entry_point: "select_row",
        family: Family::Elementwise,
        // dst, src
        bindings: &[(0, Params), (5, Write), (6, Read)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::MaskLogits,
        name: "mask_logits",
        entry_point: "mask_logits",
        family: Family::Elementwise,
        // x (a logit row), mask words
        bindings: &[(0, Params), (1, Write), (7, Read)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerItem,
    },
    OpSpec {
        op: Op::Argmax,
        name: "argmax",
        entry_point: "argmax",
        family: Family::Argmax,
        // x, out
        bindings: &[(0, Params), (1, Read), (2, Write)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerRow,
    },
    OpSpec {
        op: Op::TopKChunks,
        name: "top_k_chunks",
        entry_point: "top_k_chunks",
        family: Family::TopK,
        // x, chunk candidates
        bindings: &[(0, Params), (1, Read), (2, Write)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerChunk,
    },
    OpSpec {
        op: Op::TopKMerge,
        name: "top_k_merge",
        entry_point: "top_k_merge",
        family: Family::TopK,
        // chunk candidates, out
        bindings: &[(0, Params), (2, Write), (3, Write)],
        shares_layout_of: None,
        reads_weight: false,
        module: Module::Shared,
        forms: NO_FORMS,
        tuning: Tuning::PerRow,
    },
];

impl Op {
    /// Every op, in table order.
    pub fn all() -> impl Iterator<Item = Op> {
        OPS.iter().map(|s| s.op)
    }

    /// The op's table entry.
    pub fn spec(self) -> &'static OpSpec {
        &OPS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn family(self) -> Family {
        self.spec().family
    }

    pub fn entry_point(self) -> &'static str {
        self.spec().entry_point
    }

    pub fn reads_weight(self) -> bool {
        self.spec().reads_weight
    }

    /// Whether the kernel normalises its input row itself (`Module::NormIn`).
    pub fn normed(self) -> bool {
        matches!(self.spec().module, Module::NormIn { .. })
    }

    pub fn bindings(self) -> &'static [(u32, Slot)] {
        self.spec().bindings
    }

    /// The op whose layout (and bind groups) this one uses.
    pub fn layout(self) -> Op {
        self.spec().shares_layout_of.unwrap_or(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_op_order_with_unique_names_and_honest_layout_sharing() {
        for (i, s) in OPS.iter().enumerate() {
            assert_eq!(s.op as usize, i, "{:?} out of order", s.op);
            assert_eq!(OPS.iter().filter(|o| o.name == s.name).count(), 1, "{} twice", s.name);
            if let Some(o) = s.shares_layout_of {
                assert_eq!(s.bindings, o.bindings(), "{:?} shares {o:?}'s layout with other bindings", s.op);
            }
            // Integer-dot and subgroup forms exist only in the matmul family.
            assert!(!(s.forms.int_dot || s.forms.int_batch || s.forms.subgroups) || s.family == Family::Matmul);
        }
    }
}
