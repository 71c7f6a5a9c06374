//! A decode step whose attention splits over its context, then the o projection and its
//! residual add, over any backend: the script behind `decode_attention_splits_merge_*`
//! in tests/gpu_kernels.rs (natively, on lavapipe or a GPU) and in the browser tests
//! (crates/web/tests/browser/kernels.rs, Chromium's WebGPU), each against the CPU
//! backend. With `GpuOptions::merge_splits_in_matvec` the GPU merges the splits in the
//! o projection's matvec (matvec_merged); without, in attn_combine.

use kindling_gguf::GgmlType;
use kindling_model::{AttentionParams, Backend, KvSpec, WeightSpec};
use kindling_testdata::random::{f32_bytes, random_weight, Rng};

/// Positions before the decode step: past SPLIT_MIN_SPAN (256), so its attention splits.
pub const HISTORY: usize = 300;

/// Rows of the o projection (any: its input is the attention's row).
pub const O_ROWS: usize = 40;

/// One case: the o projection's weight type and the attention's heads, KV heads and
/// head_dim, and whether the merge can ride in the matvec (head_dim a multiple of 16 and
/// a type with integer-dot units).
pub type Case = (GgmlType, usize, usize, usize, bool);

pub const CASES: [Case; 5] = [
    (GgmlType::Q8_0, 4, 2, 64, true),
    (GgmlType::Q4K, 2, 1, 128, true),
    (GgmlType::Q6K, 16, 2, 16, true),
    (GgmlType::Q8_0, 4, 2, 40, false),
    (GgmlType::F16, 4, 2, 64, false),
];

/// A case's inputs: q, k, v of the history and of the decode row, the o weight and the
/// residual row.
pub struct Inputs {
    pub p: AttentionParams,
    pub qkv: [[Vec<f32>; 3]; 2],
    pub w: Vec<u8>,
    pub r: Vec<f32>,
}

pub fn inputs(case: &Case, seed: u64) -> Inputs {
    let &(ty, heads, kv, hd, _) = case;
    let mut rng = Rng(seed);
    let p = AttentionParams {
        head_count: heads,
        head_count_kv: kv,
        head_dim: hd,
        scale: 1.0 / (hd as f32).sqrt(),
        sliding_window: None,
        softcap: None,
        causal: true,
    };
    let (q_cols, width) = (heads * hd, kv * hd);
    let mut rows =
        |n: usize| [rng.vec(n * q_cols, -2.0, 2.0), rng.vec(n * width, -2.0, 2.0), rng.vec(n * width, -3.0, 3.0)];
    let qkv = [rows(HISTORY), rows(1)];
    let w = random_weight(&mut rng, ty, O_ROWS, q_cols);
    let r = rng.vec(O_ROWS, -2.0, 2.0);
    Inputs { p, qkv, w, r }
}

fn upload<B: Backend>(b: &mut B, ty: GgmlType, rows: usize, cols: usize, bytes: &[u8]) -> B::Weight {
    let spec = WeightSpec { name: "input".into(), ty, cols, rows, n_bytes: bytes.len() as u64 };
    let mut w = b.alloc_weight(&spec).expect("alloc weight");
    b.write_weight(&mut w, 0, bytes).expect("write weight");
    b.finish_weight(&mut w).expect("finish weight");
    w
}

/// The prompt of HISTORY rows, then the decode step: its attention, `o = W · attention`
/// and `res += o`. Returns the decode row's [attention, o, res].
pub async fn run<B: Backend>(b: &mut B, ty: GgmlType, x: &Inputs) -> [Vec<f32>; 3] {
    let p = &x.p;
    let (q_cols, width) = (p.head_count * p.head_dim, p.head_count_kv * p.head_dim);
    let mut cache = b.alloc_kv_cache(KvSpec { capacity: HISTORY + 1, width }).expect("cache");
    let cols = [q_cols, width, width];
    let [q, k, v] = cols.map(|c| b.alloc_activation(HISTORY, c).expect("alloc"));
    let out = b.alloc_activation(HISTORY, q_cols).expect("alloc");
    let [o, res] = [0; 2].map(|_| b.alloc_activation(1, O_ROWS).expect("alloc"));
    let wt = upload(b, ty, O_ROWS, q_cols, &x.w);
    let rt = upload(b, GgmlType::F32, 1, O_ROWS, &f32_bytes(&x.r));
    for ((start, n), data) in [(0, HISTORY), (HISTORY, 1)].into_iter().zip(&x.qkv) {
        let tables: Vec<B::Weight> =
            data.iter().zip(cols).map(|(d, c)| upload(b, GgmlType::F32, n, c, &f32_bytes(d))).collect();
        b.begin_batch(&(0..n as u32).collect::<Vec<_>>(), start).expect("batch");
        for (t, a) in tables.iter().zip([q, k, v]) {
            b.embed(t, 1.0, a);
        }
        // The residual first: any op between the attention and the matmul records the
        // merge on its own.
        if n == 1 {
            b.embed(&rt, 1.0, res);
        }
        b.attention(q, k, v, &mut cache, p, out);
        if n == 1 {
            b.matmul(out, &wt, o);
            b.add(res, o);
        }
    }
    let mut rows = Vec::new();
    for a in [out, o, res] {
        rows.push(b.read_rows(a, 1).await.expect("read rows"));
    }
    rows.try_into().expect("three rows")
}

/// Checks the GPU's [attention, o, res] against the CPU's: the attention within
/// `attention_tol`; o and res within `rel_tol` of each row's Σ|w·x| plus the attention's
/// tolerance over the row's Σ|w| (`wf`: the weight dequantized). Returns the attention's
/// largest difference.
pub fn check(
    what: &str,
    got: &[Vec<f32>; 3],
    want: &[Vec<f32>; 3],
    wf: &[f32],
    attention_tol: f32,
    rel_tol: f32,
) -> f32 {
    let cols = want[0].len();
    let da = got[0].iter().zip(&want[0]).map(|(g, c)| (g - c).abs()).fold(0.0f32, f32::max);
    assert!(da <= attention_tol, "{what}: attention max |Δ| {da} (tolerance {attention_tol})");
    for j in 0..O_ROWS {
        let row = &wf[j * cols..(j + 1) * cols];
        let scale: f32 = row.iter().zip(&want[0]).map(|(w, x)| (w * x).abs()).sum();
        let tol = rel_tol * scale + attention_tol * row.iter().map(|w| w.abs()).sum::<f32>() + 1e-5;
        for (name, g, c) in [("o", &got[1], &want[1]), ("res", &got[2], &want[2])] {
            assert!((g[j] - c[j]).abs() <= tol, "{what}: {name}[{j}] gpu {} cpu {} (tolerance {tol})", g[j], c[j]);
        }
    }
    da
}
