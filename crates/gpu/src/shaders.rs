//! Every WGSL source of the backend, included once from `shaders/`, and the assembly
//! of a kernel's source from its typed key and its op's table entry (op_table.rs): the
//! family's generated `struct Params` and sizes (tuning.rs), the shared prelude, the
//! weight type's dequantization snippet (for kernels that read weights), the op's own
//! module parts (`Module`) and the family file. No kernel body is copied per type.

use kindling_gguf::GgmlType;

use crate::key::{KernelKey, ShaderFeatures};
use crate::op_table::{Family, Module};
use crate::params::MatmulParams;
use crate::tuning::shader_consts;

pub const PRELUDE: &str = include_str!("../../../shaders/prelude.wgsl");
pub const EMBED: &str = include_str!("../../../shaders/embed.wgsl");
pub const RMS_NORM: &str = include_str!("../../../shaders/rms_norm.wgsl");
pub const MATMUL: &str = include_str!("../../../shaders/matmul.wgsl");
pub const MATMUL_TILED: &str = include_str!("../../../shaders/matmul_tiled.wgsl");
pub const MATMUL_WIDE: &str = include_str!("../../../shaders/matmul_wide.wgsl");
pub const MATMUL_COOP: &str = include_str!("../../../shaders/matmul_coop.wgsl");
pub const MATMUL_WIDE_COOP: &str = include_str!("../../../shaders/matmul_wide_coop.wgsl");
pub const DEQUANT_ROWS: &str = include_str!("../../../shaders/dequant_rows.wgsl");
pub const ROPE: &str = include_str!("../../../shaders/rope.wgsl");
pub const HEAD_PREP: &str = include_str!("../../../shaders/head_prep.wgsl");
pub const ATTENTION: &str = include_str!("../../../shaders/attention.wgsl");
pub const ATTENTION_TILED: &str = include_str!("../../../shaders/attention_tiled.wgsl");
pub const ATTENTION_COOP: &str = include_str!("../../../shaders/attention_coop.wgsl");
pub const ELEMENTWISE: &str = include_str!("../../../shaders/elementwise.wgsl");
pub const ARGMAX: &str = include_str!("../../../shaders/argmax.wgsl");
pub const TOP_K: &str = include_str!("../../../shaders/top_k.wgsl");
pub const QUANTIZE_RUNS: &str = include_str!("../../../shaders/quantize_runs.wgsl");
pub const KV_READ_F32: &str = include_str!("../../../shaders/kv_read_f32.wgsl");
pub const KV_READ_F16: &str = include_str!("../../../shaders/kv_read_f16.wgsl");
pub const KV_WRITE_F32: &str = include_str!("../../../shaders/kv_write_f32.wgsl");
pub const KV_WRITE_F16: &str = include_str!("../../../shaders/kv_write_f16.wgsl");
pub const REDUCE_WG: &str = include_str!("../../../shaders/reduce_wg.wgsl");
pub const REDUCE_SG: &str = include_str!("../../../shaders/reduce_sg.wgsl");
pub const NORM_IN: &str = include_str!("../../../shaders/norm_in.wgsl");
pub const NORM_STAGE: &str = include_str!("../../../shaders/norm_stage.wgsl");

/// norm_in.wgsl's staging hooks where the input row is not staged (every fused-norm
/// kernel but matvec_gated_normed): no workgroup memory held for it.
const NO_STAGE: &str = "fn staged() -> bool { return false; }
fn xn_get(i: u32) -> vec4<f32> { return vec4<f32>(); }
fn xn_put(i: u32, v: vec4<f32>) {}";
pub const NORM_OFF: &str = include_str!("../../../shaders/norm_off.wgsl");
pub const WEIGHT_ROWS: &str = include_str!("../../../shaders/weight_rows.wgsl");
pub const MATVEC_INT: &str = include_str!("../../../shaders/matvec_int.wgsl");
pub const MATMUL_INT: &str = include_str!("../../../shaders/matmul_int.wgsl");
pub const MATMUL_OUT: &str = include_str!("../../../shaders/matmul_out.wgsl");
pub const UNIT_INT: &str = include_str!("../../../shaders/quant_int/unit.wgsl");
pub const NORM_INT: &str = include_str!("../../../shaders/norm_int.wgsl");
/// norm_int.wgsl's functions for the plain integer-dot kernels: the row as it is.
const INT_NORM_OFF: &str = "fn in_run(raw: vec4<f32>, i: u32) -> vec4<f32> { return raw; }
fn in_finish(lid: u32, first: bool, ss: f32) -> f32 { workgroupBarrier(); return 1.0; }";
pub const Q4_K_INT: &str = include_str!("../../../shaders/quant_int/q4_k.wgsl");
pub const Q6_K_INT: &str = include_str!("../../../shaders/quant_int/q6_k.wgsl");
pub const Q8_0_INT: &str = include_str!("../../../shaders/quant_int/q8_0.wgsl");
pub const Q5_0_INT: &str = include_str!("../../../shaders/quant_int/q5_0.wgsl");
pub const Q4_0_INT: &str = include_str!("../../../shaders/quant_int/q4_0.wgsl");

pub const Q_F32: &str = include_str!("../../../shaders/quant/f32.wgsl");
pub const Q_F16: &str = include_str!("../../../shaders/quant/f16.wgsl");
pub const Q_BF16: &str = include_str!("../../../shaders/quant/bf16.wgsl");
pub const Q4_0: &str = include_str!("../../../shaders/quant/q4_0.wgsl");
pub const Q4_1: &str = include_str!("../../../shaders/quant/q4_1.wgsl");
pub const Q5_0: &str = include_str!("../../../shaders/quant/q5_0.wgsl");
pub const Q5_1: &str = include_str!("../../../shaders/quant/q5_1.wgsl");
pub const Q8_0: &str = include_str!("../../../shaders/quant/q8_0.wgsl");
pub const Q2_K: &str = include_str!("../../../shaders/quant/q2_k.wgsl");
pub const Q3_K: &str = include_str!("../../../shaders/quant/q3_k.wgsl");
pub const Q4_K: &str = include_str!("../../../shaders/quant/q4_k.wgsl");
pub const Q5_K: &str = include_str!("../../../shaders/quant/q5_k.wgsl");
pub const Q6_K: &str = include_str!("../../../shaders/quant/q6_k.wgsl");
pub const Q8_K: &str = include_str!("../../../shaders/quant/q8_k.wgsl");
pub const K4_SCALES: &str = include_str!("../../../shaders/quant/k4_scales.wgsl");

/// The dequantization snippet of a weight type (every type the backend supports), with
/// the helpers it shares with other types.
pub fn quant_snippet(ty: GgmlType) -> String {
    let own = own_snippet(ty);
    let shared = match ty {
        GgmlType::Q4K | GgmlType::Q5K => K4_SCALES,
        _ => "",
    };
    // dq8 (8 values at once, for the decode matvecs) is written by hand where one
    // decode of the scales serves all 8; elsewhere it is two dq4 calls.
    let dq8 = if own.contains("fn dq8(") { "" } else { DQ8_FROM_DQ4 };
    format!("{shared}\n{own}\n{dq8}")
}

/// The generic `dq8`: values 8i..8i+7 of a block as two `dq4` calls.
const DQ8_FROM_DQ4: &str = "fn dq8(b: u32, i: u32) -> mat2x4<f32> {
    return mat2x4<f32>(dq4(b, 2u * i), dq4(b, 2u * i + 1u));
}";

/// The snippet file of a weight type alone.
fn own_snippet(ty: GgmlType) -> &'static str {
    match ty {
        GgmlType::F32 => Q_F32,
        GgmlType::F16 => Q_F16,
        GgmlType::BF16 => Q_BF16,
        GgmlType::Q4_0 => Q4_0,
        GgmlType::Q4_1 => Q4_1,
        GgmlType::Q5_0 => Q5_0,
        GgmlType::Q5_1 => Q5_1,
        GgmlType::Q8_0 => Q8_0,
        GgmlType::Q2K => Q2_K,
        GgmlType::Q3K => Q3_K,
        GgmlType::Q4K => Q4_K,
        GgmlType::Q5K => Q5_K,
        GgmlType::Q6K => Q6_K,
        GgmlType::Q8K => Q8_K,
    }
}

/// The 32-value unit snippet of a weight type for the integer-dot matvecs, with the
/// helpers it shares (`tuning::has_int_units` names the types that have one).
fn int_snippet(ty: GgmlType) -> String {
    match ty {
        GgmlType::Q4K => format!("{K4_SCALES}\n{Q4_K_INT}"),
        GgmlType::Q6K => Q6_K_INT.to_string(),
        GgmlType::Q8_0 => Q8_0_INT.to_string(),
        GgmlType::Q5_0 => Q5_0_INT.to_string(),
        // One snippet for both, told apart by a constant.
        GgmlType::Q4_0 => format!("const Q4_1: bool = false;\n{Q4_0_INT}"),
        GgmlType::Q4_1 => format!("const Q4_1: bool = true;\n{Q4_0_INT}"),
        _ => unreachable!("{ty:?} has no integer-dot units (tuning::has_int_units)"),
    }
}

/// A decode matvec over integer dot products (`ShaderFeatures::int_runs`): the family's
/// params and prelude, the unit snippet over each weight binding, the input norm (or
/// not), the row sums, matvec_int.wgsl.
fn assemble_int(key: KernelKey) -> String {
    let ty = key.ty.expect("a matvec reads a weight");
    let first = int_snippet(ty);
    // The third weight's rows are p.row_words3 wide (matvec_multi's v may be of another type).
    let third = rows_of_third(&int_snippet(key.ty3.unwrap_or(ty)));
    let norm = if key.op.normed() { NORM_INT } else { INT_NORM_OFF };
    let f = key.features;
    let merged = key.op.spec().module == Module::MergedIn;
    let runs = format!(
        "const QX_RUNS: u32 = {}u;\nconst INPUT_STAGED: bool = {};\nconst INPUT_MERGED: bool = {merged};",
        f.int_runs, f.int_input_staged
    );
    // The merged row goes to out2, which only matvec_merged binds (a module that wrote
    // it anywhere, even behind a false constant, would need the binding in every layout).
    let put_merged = match merged {
        true => "fn put_merged(i: u32, v: f32) { out2[i] = v; }",
        false => "fn put_merged(i: u32, v: f32) {}",
    };
    let sizes = shader_consts(&["MV_WG", "SPLIT_HEAD", "MAX_SPLITS"]);
    [
        MatmulParams::WGSL,
        &sizes,
        PRELUDE,
        UNIT_INT,
        &first,
        &other_weight(&first, "2"),
        &other_weight(&third, "3"),
        norm,
        &reduce_snippet(f),
        &runs,
        put_merged,
        MATVEC_INT,
    ]
    .join("\n")
}

/// The batch matmul over integer dot products (`ShaderFeatures::int_batch`): the
/// family's params, the tile and digit sizes, the prelude, the unit struct and the weight
/// type's unit snippet, matmul_int.wgsl and the output writes (matmul_out.wgsl).
fn assemble_int_batch(key: KernelKey) -> String {
    let ty = key.ty.expect("matmul_tiled reads a weight");
    let qd = key.features.int_batch;
    let digits = format!("const QD: u32 = {qd}u;\n{}", multi_const(key));
    let sizes = shader_consts(&["TM", "TN", "STEP_WRITTEN_OUT"]);
    let first = int_snippet(ty);
    // Over several weights: the second of the first's type, the third of its own.
    let third = rows_of_third(&int_snippet(key.ty3.unwrap_or(ty)));
    let (second, third) = (other_weight(&first, "2"), other_weight(&third, "3"));
    [MatmulParams::WGSL, &sizes, &digits, PRELUDE, UNIT_INT, &first, &second, &third, MATMUL_INT, MATMUL_OUT].join("\n")
}

/// `MULTI`: whether a matmul module's matmul_tiled may be given several weights side by
/// side (`MatmulParams::multi`), which only a key with a third weight type compiles in
/// (`KernelKey::over_several_weights`): the routing compiled into every matmul_tiled
/// made o and down 10% slower on cooperative matrices (bench/results/qkv-submit-h200.md).
fn multi_const(key: KernelKey) -> String {
    format!("const MULTI: bool = {};\n", key.ty3.is_some())
}

/// A unit snippet read as the third weight's: its rows are p.row_words3 wide.
fn rows_of_third(snippet: &str) -> String {
    snippet.lines().map(|l| rename_word(l, "row_words", "row_words3", None) + "\n").collect()
}

/// The row and workgroup sums of the matmul family's decode kernels: through workgroup
/// memory, or subgroups of a size fixed here.
fn reduce_snippet(f: ShaderFeatures) -> String {
    match f.subgroup_size {
        0 => REDUCE_WG.to_string(),
        sg => format!("const SG: u32 = {sg}u;\n{REDUCE_SG}"),
    }
}

/// The complete WGSL module a kernel is compiled from.
pub fn assemble(key: KernelKey) -> String {
    let family = key.op.family();
    if family == Family::Matmul && key.features.int_runs > 0 {
        return assemble_int(key);
    }
    if family == Family::Matmul && key.features.int_batch > 0 {
        return assemble_int_batch(key);
    }
    let spec = family.spec();
    let module = key.op.spec().module;
    // quantize_runs reads no weight; it takes run_max_sum from the integer-dot units.
    let snippet =
        if family == Family::Quantize { UNIT_INT.to_string() } else { key.ty.map(quant_snippet).unwrap_or_default() };
    let snippet = snippet.as_str();
    // The matmul family reads a second and third weight too (`w2`, `w3`: matvec_gated,
    // matvec_multi).
    // Its decode kernels read their input through in4()/in_scale() (plain, or with the
    // RMS norm before them fused in, `Module::NormIn`) and sum through
    // row_sum()/wg_sum() (workgroup memory, or subgroups of a size fixed here).
    // The attention family reads and writes the KV cache, the rope family writes it:
    // as f32 or as f16 pairs.
    // attention_rope writes the cache and reads it back (`Module::CacheReadWrite`), so
    // its module reads over kw/vw. Both families prepare heads with head_prep.wgsl.
    let f16 = key.features.kv_f16;
    let (kv_read, kv_write, head_prep) = match family {
        Family::Attention => {
            let read = if f16 { KV_READ_F16 } else { KV_READ_F32 };
            let read = if module == Module::CacheReadWrite { kv_read_over_writable(read) } else { read.to_string() };
            (read, if f16 { KV_WRITE_F16 } else { KV_WRITE_F32 }, HEAD_PREP)
        }
        Family::Rope => (String::new(), if f16 { KV_WRITE_F16 } else { KV_WRITE_F32 }, HEAD_PREP),
        _ => (String::new(), "", ""),
    };
    // qk_rope reads the v bias through v_bias(): a binding only in the bias variant
    // (`Module::VBias`).
    let v_bias = match (module, family) {
        (Module::VBias, _) => {
            "@group(0) @binding(5) var<storage, read> vbias: array<f32>;\nfn v_bias(i: u32) -> f32 { return vbias[i]; }"
        }
        (_, Family::Rope) => "fn v_bias(i: u32) -> f32 { return 0.0; }",
        _ => "",
    };
    // The batch kernels (matmul_tiled, attention_tiled): f32 on the shader cores, or on
    // cooperative matrices (which need their `enable`s before anything else in the
    // module), each with the sizes the host dispatches them by. The matmul family also
    // has large batches' panels: dequant_rows.wgsl after the panel GEMM of either kind
    // (matmul_wide.wgsl, f32; matmul_wide_coop.wgsl, f16), which defines its element.
    const COOP_ENABLES: &str = "enable f16;\nenable wgpu_cooperative_matrix;";
    let shader_core_matmuls = format!("{MATMUL_TILED}\n{MATMUL_WIDE}\n{DEQUANT_ROWS}");
    let coop_matmuls = format!("{MATMUL_COOP}\n{MATMUL_WIDE_COOP}\n{DEQUANT_ROWS}");
    let (enables, batch_sizes, batch) = match (family, key.features.coop_matrix) {
        (Family::Matmul, false) => {
            let sizes = shader_consts(&["TM", "TN", "WM", "WN", "WK", "STEP_WRITTEN_OUT"]) + &multi_const(key);
            ("", sizes, shader_core_matmuls.as_str())
        }
        (Family::Matmul, true) => {
            let sizes = shader_consts(&["CM", "CN", "CK", "WM", "WN", "WCK"]) + &multi_const(key);
            (COOP_ENABLES, sizes, coop_matmuls.as_str())
        }
        (Family::Attention, false) => ("", shader_consts(&["TQ"]), ATTENTION_TILED),
        (Family::Attention, true) => (
            COOP_ENABLES,
            shader_consts(&["COOP_ATTN_ROWS", "COOP_ATTN_ROWS_WIDE", "COOP_ATTN_NARROW_HD", "COOP_ATTN_WG"]),
            ATTENTION_COOP,
        ),
        _ => ("", String::new(), ""),
    };
    let sizes = shader_consts(spec.sizes) + &batch_sizes;
    let (second, third, input, reduce) = if family == Family::Matmul {
        let input = match module {
            Module::NormIn { staged: true } => format!("{NORM_STAGE}\n{NORM_IN}"),
            Module::NormIn { staged: false } => format!("{NO_STAGE}\n{NORM_IN}"),
            _ => NORM_OFF.to_string(),
        };
        let reduce = reduce_snippet(key.features);
        let rows = [WEIGHT_ROWS.to_string(), weight_rows_over("2"), weight_rows_over("3")].concat();
        // The third weight in its own type where the key names one (matvec_multi's v).
        let third = key.ty3.map(quant_snippet).unwrap_or_else(|| snippet.to_string());
        // The output writes (matmul_out.wgsl) go with the reductions.
        (other_weight(snippet, "2"), other_weight(&third, "3"), input, format!("{reduce}\n{rows}\n{MATMUL_OUT}"))
    } else {
        (String::new(), String::new(), String::new(), String::new())
    };
    let parts = [
        enables,
        spec.params,
        &sizes,
        PRELUDE,
        snippet,
        &second,
        &third,
        &input,
        &reduce,
        &kv_read,
        kv_write,
        v_bias,
        head_prep,
        spec.body,
        batch,
    ];
    let mut s = String::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for part in parts {
        s.push_str(part);
        s.push('\n');
    }
    s
}

/// A weight type's snippet over another weight binding: `w[` read as `w<n>[`, each of
/// its functions, constants and type aliases renamed `<name>_<n>` (so `dq4_2`,
/// `BLOCK_ELEMS_2`).
pub fn other_weight(snippet: &str, n: &str) -> String {
    let names: Vec<&str> = snippet
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let (rest, end) = match (t.strip_prefix("fn "), t.strip_prefix("const "), t.strip_prefix("alias ")) {
                (Some(r), _, _) => (r, '('),
                (None, Some(r), _) => (r, ':'),
                (None, None, Some(r)) => (r, ' '),
                _ => return None,
            };
            rest.find(end).map(|i| rest[..i].trim())
        })
        .collect();
    let mut out = String::with_capacity(snippet.len() + 64);
    for line in snippet.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut l = rename_word(line, "w", &format!("w{n}"), Some('['));
        for name in &names {
            l = rename_word(&l, name, &format!("{name}_{n}"), None);
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// weight_rows.wgsl over weight `n`: its functions, the type's dq4/dq8 and BLOCK_*
/// constants read as `<name>_<n>`; the third weight's rows are p.row_words3 wide.
fn weight_rows_over(n: &str) -> String {
    let names = ["w4", "chunk_block", "chunk_index", "row_dot8", "dq4", "dq8", "BLOCK_ELEMS", "BLOCK_WORDS"];
    let mut out = String::with_capacity(WEIGHT_ROWS.len() + 64);
    for line in WEIGHT_ROWS.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut l = line.to_string();
        for name in names {
            l = rename_word(&l, name, &format!("{name}_{n}"), None);
        }
        if n == "3" {
            l = rename_word(&l, "row_words", "row_words3", None);
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// A kv_read_*.wgsl over the writable cache bindings of kv_write_*.wgsl: its own
/// (read-only) declarations dropped, `kc`/`vc` read as `kw`/`vw`.
fn kv_read_over_writable(read: &str) -> String {
    let mut out = String::with_capacity(read.len());
    for line in read.lines().filter(|l| !l.trim_start().starts_with("@group") && !l.trim_start().starts_with("//")) {
        out.push_str(&rename_word(&rename_word(line, "kc", "kw", None), "vc", "vw", None));
        out.push('\n');
    }
    out
}

/// `line` with every whole-word `from` (followed by `next` where given) replaced by `to`.
fn rename_word(line: &str, from: &str, to: &str, next: Option<char>) -> String {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(line.len() + 8);
    let mut rest = line;
    let mut prev: Option<char> = None;
    while let Some(i) = rest.find(from) {
        let before = if i == 0 { prev } else { rest[..i].chars().next_back() };
        let after = rest[i + from.len()..].chars().next();
        let whole = !before.is_some_and(ident) && !after.is_some_and(ident) && next.is_none_or(|n| after == Some(n));
        out.push_str(&rest[..i]);
        out.push_str(if whole { to } else { from });
        prev = from.chars().next_back();
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}
