//! Kernel checks and micro-benchmarks for the test page (`examples/gpu-test`): each check
//! runs one WGSL kernel family on this browser's WebGPU and the same op on the CPU
//! backend (the reference) through the `Backend` trait, on generated inputs of awkward
//! sizes, and reports the largest difference against the tolerance the native kernel
//! tests use (tests/gpu_kernels.rs). Diagnostics only: no model logic, nothing the
//! package's own API needs.
//!
//! - `kernelChecks()` → the check names (`matvec/Q4_K`, `rms_norm/per-head`, ...);
//! - `runKernelCheck(name)` → `{ name, pass, maxError, worst, tolerance, values, cpuMs, gpuFirstMs, gpuMs, adapter }`;
//! - `benchMatvec(backend, type, rows, cols, reps)` → `{ msPerOp, weightBytes, gbPerSecond }`;
//! - `benchDispatch(backend, count)` → `{ usPerDispatch }`.

use kindling_cpu::CpuBackend;
use kindling_gguf::GgmlType;
use kindling_gpu::{GpuBackend, GpuOptions};
use kindling_model::{Activation, AttentionParams, Backend, KvSpec, QkRope, RopeConfig, RopeStyle, WeightSpec};
use kindling_testdata::random::{awkward_cols, f32_bytes, random_weight, Rng};
use wasm_bindgen::prelude::*;

use crate::error::{ErrorName, JsResult, WebError};

// ---- inputs ---------------------------------------------------------------------------

// The inputs: `kindling_testdata::random` (splitmix64 and the random GGUF weights the
// native kernel tests use), the same on both backends and on every run.

fn parse_type(name: &str) -> JsResult<GgmlType> {
    GgmlType::ALL
        .into_iter()
        .find(|t| t.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| WebError::usage(format!("unknown weight type '{name}'")))
}

// ---- scripts, generic over the backend ----------------------------------------------------

fn weight<B: Backend>(b: &mut B, ty: GgmlType, rows: usize, cols: usize, bytes: &[u8]) -> JsResult<B::Weight> {
    let spec = WeightSpec { name: "w".into(), ty, cols, rows, n_bytes: bytes.len() as u64 };
    let mut w = b.alloc_weight(&spec)?;
    b.write_weight(&mut w, 0, bytes)?;
    b.finish_weight(&mut w)?;
    Ok(w)
}

/// An F32 table of `data` (rows of `cols`), embedded to fill activations.
fn table<B: Backend>(b: &mut B, data: &[f32], cols: usize) -> JsResult<B::Weight> {
    weight(b, GgmlType::F32, data.len() / cols, cols, &f32_bytes(data))
}

/// An activation of `n` rows filled with `data`, in a batch of `n` positions from `start`.
fn filled<B: Backend>(b: &mut B, data: &[f32], n: usize, cols: usize, start: usize) -> JsResult<B::Activation> {
    let t = table(b, data, cols)?;
    let a = b.alloc_activation(n, cols)?;
    b.begin_batch(&(0..n as u32).collect::<Vec<_>>(), start)?;
    b.embed(&t, 1.0, a);
    Ok(a)
}

/// What `rope_qk` does before an attention check: the rotation, and the q/k/v biases
/// (Qwen2) or the per-head q/k norm weights (Qwen3, Gemma 3).
struct QkPrep {
    rope: RopeConfig,
    bias: Option<[Vec<f32>; 3]>,
    norm: Option<(Vec<f32>, Vec<f32>)>,
}

/// One check's inputs, run on either backend; returns the values to compare.
enum Case {
    Matmul {
        ty: GgmlType,
        rows: usize,
        cols: usize,
        n: usize,
        w: Vec<u8>,
        x: Vec<f32>,
    },
    Embed {
        ty: GgmlType,
        rows: usize,
        cols: usize,
        w: Vec<u8>,
        tokens: Vec<u32>,
    },
    Norm {
        n: usize,
        cols: usize,
        group: usize,
        x: Vec<f32>,
        w: Vec<f32>,
    },
    Rope {
        n: usize,
        start: usize,
        heads: usize,
        head_dim: usize,
        rope: RopeConfig,
        x: Vec<f32>,
    },
    /// With `prep`, each batch's q/k/v go through `rope_qk` first (in decode the GPU then
    /// does that inside the attention: `attention_rope`).
    Attention {
        p: AttentionParams,
        batches: Vec<(usize, usize)>,
        data: Vec<(Vec<f32>, Vec<f32>, Vec<f32>)>,
        prep: Option<QkPrep>,
    },
    Gated {
        act: Activation,
        n: usize,
        cols: usize,
        g: Vec<f32>,
        u: Vec<f32>,
    },
    Add {
        n: usize,
        cols: usize,
        x: Vec<f32>,
        y: Vec<f32>,
    },
    Softcap {
        n: usize,
        cols: usize,
        x: Vec<f32>,
    },
    Argmax {
        n: usize,
        cols: usize,
        x: Vec<f32>,
    },
    TopK {
        n: usize,
        cols: usize,
        k: usize,
        x: Vec<f32>,
    },
}

impl Case {
    async fn run<B: Backend>(&self, b: &mut B) -> JsResult<Vec<f32>> {
        Ok(match self {
            Case::Matmul { ty, rows, cols, n, w, x } => {
                let wt = weight(b, *ty, *rows, *cols, w)?;
                let xa = filled(b, x, *n, *cols, 0)?;
                let out = b.alloc_activation(*n, *rows)?;
                b.matmul(xa, &wt, out);
                b.read_rows(out, *n).await?
            }
            Case::Embed { ty, rows, cols, w, tokens } => {
                let wt = weight(b, *ty, *rows, *cols, w)?;
                let out = b.alloc_activation(tokens.len(), *cols)?;
                b.begin_batch(tokens, 0)?;
                b.embed(&wt, 0.75, out);
                b.read_rows(out, tokens.len()).await?
            }
            Case::Norm { n, cols, group, x, w } => {
                let wt = table(b, w, *group)?;
                let xa = filled(b, x, *n, *cols, 0)?;
                let out = b.alloc_activation(*n, *cols)?;
                b.rms_norm(xa, &wt, *group, 1e-6, out);
                b.read_rows(out, *n).await?
            }
            Case::Rope { n, start, heads, head_dim, rope, x } => {
                let xa = filled(b, x, *n, heads * head_dim, *start)?;
                b.rope(xa, *heads, *head_dim, rope, None);
                b.read_rows(xa, *n).await?
            }
            Case::Attention { p, batches, data, prep } => {
                let (q_cols, width) = (p.head_count * p.head_dim, p.head_count_kv * p.head_dim);
                // One-row tables: the biases' and norm weights' rows.
                let bias = match prep.as_ref().and_then(|q| q.bias.as_ref()) {
                    Some([bq, bk, bv]) => {
                        Some([table(b, bq, bq.len())?, table(b, bk, bk.len())?, table(b, bv, bv.len())?])
                    }
                    None => None,
                };
                let norm = match prep.as_ref().and_then(|q| q.norm.as_ref()) {
                    Some((nq, nk)) => Some((table(b, nq, nq.len())?, table(b, nk, nk.len())?)),
                    None => None,
                };
                let cap = batches.iter().map(|b| b.1).max().unwrap_or(1);
                let positions = batches.iter().map(|b| b.0 + b.1).max().unwrap_or(1);
                let mut cache = b.alloc_kv_cache(KvSpec { capacity: positions, width })?;
                let (q, k, v, out) = (
                    b.alloc_activation(cap, q_cols)?,
                    b.alloc_activation(cap, width)?,
                    b.alloc_activation(cap, width)?,
                    b.alloc_activation(cap, q_cols)?,
                );
                let mut all = Vec::new();
                for (&(start, n), (qd, kd, vd)) in batches.iter().zip(data) {
                    let (qt, kt, vt) = (table(b, qd, q_cols)?, table(b, kd, width)?, table(b, vd, width)?);
                    b.begin_batch(&(0..n as u32).collect::<Vec<_>>(), start)?;
                    b.embed(&qt, 1.0, q);
                    b.embed(&kt, 1.0, k);
                    b.embed(&vt, 1.0, v);
                    if let Some(prep) = prep {
                        let qk = QkRope {
                            bias: bias.as_ref(),
                            heads: p.head_count,
                            kv_heads: p.head_count_kv,
                            head_dim: p.head_dim,
                            rope: &prep.rope,
                            freq_factors: None,
                            norm: norm.as_ref().map(|(nq, nk)| (nq, nk, 1e-6)),
                        };
                        b.rope_qk(q, k, v, &qk);
                    }
                    b.attention(q, k, v, &mut cache, p, out);
                    all.extend(b.read_rows(out, n).await?);
                }
                all
            }
            Case::Gated { act, n, cols, g, u } => {
                let (gt, ut) = (table(b, g, *cols)?, table(b, u, *cols)?);
                let (ga, ua, out) =
                    (b.alloc_activation(*n, *cols)?, b.alloc_activation(*n, *cols)?, b.alloc_activation(*n, *cols)?);
                b.begin_batch(&(0..*n as u32).collect::<Vec<_>>(), 0)?;
                b.embed(&gt, 1.0, ga);
                b.embed(&ut, 1.0, ua);
                b.gated_activation(ga, ua, *act, out);
                b.read_rows(out, *n).await?
            }
            Case::Add { n, cols, x, y } => {
                let (xt, yt) = (table(b, x, *cols)?, table(b, y, *cols)?);
                let (xa, ya) = (b.alloc_activation(*n, *cols)?, b.alloc_activation(*n, *cols)?);
                b.begin_batch(&(0..*n as u32).collect::<Vec<_>>(), 0)?;
                b.embed(&xt, 1.0, xa);
                b.embed(&yt, 1.0, ya);
                b.add(xa, ya);
                b.read_rows(xa, *n).await?
            }
            Case::Softcap { n, cols, x } => {
                let xa = filled(b, x, *n, *cols, 0)?;
                b.softcap(xa, 30.0);
                b.read_rows(xa, *n).await?
            }
            Case::Argmax { n, cols, x } => {
                let xa = filled(b, x, *n, *cols, 0)?;
                b.argmax_rows(xa, *n).await?.into_iter().map(|i| i as f32).collect()
            }
            Case::TopK { n, cols, k, x } => {
                let xa = filled(b, x, *n, *cols, 0)?;
                b.top_k_rows(xa, *n, *k).await?.into_iter().flatten().flat_map(|(i, v)| [i as f32, v]).collect()
            }
        })
    }

    /// The tolerance of each value given the CPU's `want` (as tests/gpu_kernels.rs), and its description.
    fn tolerances(&self, want: &[f32]) -> (Vec<f32>, &'static str) {
        let rel = |a: f32, b: f32| want.iter().map(|c| a * c.abs() + b).collect::<Vec<_>>();
        match self {
            Case::Matmul { ty, rows, cols, n, w, x } => {
                // 1e-5 × Σ|w·x| per output: f32 sums in another order.
                let mut wf = vec![0.0f32; rows * cols];
                if kindling_gguf::dequantize(*ty, w, &mut wf).is_err() {
                    return (vec![0.0; want.len()], "dequantization failed");
                }
                let tol = (0..*n)
                    .flat_map(|r| (0..*rows).map(move |j| (r, j)))
                    .map(|(r, j)| {
                        1e-5 * (0..*cols).map(|c| (wf[j * cols + c] * x[r * cols + c]).abs()).sum::<f32>() + 1e-6
                    })
                    .collect();
                (tol, "1e-5·Σ|w·x| + 1e-6")
            }
            Case::Embed { .. } => (rel(1e-6, 0.0), "1e-6·|x|"),
            Case::Norm { .. } | Case::Gated { .. } | Case::Add { .. } | Case::Softcap { .. } => {
                (rel(2e-6, 1e-6), "2e-6·|x| + 1e-6")
            }
            Case::Rope { .. } => (vec![2e-6; want.len()], "2e-6"),
            Case::Attention { .. } => (vec![2e-5; want.len()], "2e-5"),
            Case::Argmax { .. } | Case::TopK { .. } => (vec![0.0; want.len()], "exact"),
        }
    }
}

/// Every check, by name: each quant type's matvec (decode: one row) and matmul (a
/// prompt batch, the tiled kernel), then the other families.
fn check_names() -> Vec<String> {
    let mut names = Vec::new();
    for op in ["matvec", "matmul"] {
        names.extend(GgmlType::ALL.iter().map(|t| format!("{op}/{}", t.name())));
    }
    names.extend(GgmlType::ALL.iter().map(|t| format!("embed/{}", t.name())));
    for n in [
        "rms_norm/row",
        "rms_norm/per-head",
        "rope/normal",
        "rope/neox",
        "attention/gqa",
        "attention/window-softcap",
        "attention/rope-bias",
        "attention/rope-norm-long",
        "silu",
        "gelu",
        "add",
        "softcap",
        "argmax",
        "top_k",
    ] {
        names.push(n.into());
    }
    names
}

fn make_case(name: &str) -> JsResult<Case> {
    let mut rng = Rng(name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, c| (h ^ c as u64).wrapping_mul(0x100_0000_01b3)));
    let (family, variant) = name.split_once('/').unwrap_or((name, ""));
    Ok(match family {
        "matvec" | "matmul" => {
            let ty = parse_type(variant)?;
            let (rows, cols, n) = (67, awkward_cols(ty), if family == "matvec" { 1 } else { 19 });
            Case::Matmul {
                ty,
                rows,
                cols,
                n,
                w: random_weight(&mut rng, ty, rows, cols),
                x: rng.vec(n * cols, -2.0, 2.0),
            }
        }
        "embed" => {
            let ty = parse_type(variant)?;
            let (rows, cols) = (41, awkward_cols(ty));
            let tokens = (0..11).map(|_| rng.below(rows) as u32).chain([0, 40]).collect();
            Case::Embed { ty, rows, cols, w: random_weight(&mut rng, ty, rows, cols), tokens }
        }
        "rms_norm" => {
            let (n, cols, group) = if variant == "per-head" { (5, 300, 75) } else { (3, 1000, 1000) };
            Case::Norm { n, cols, group, x: rng.vec(n * cols, -3.0, 3.0), w: rng.vec(group, 0.5, 1.5) }
        }
        "rope" => {
            let style = if variant == "neox" { RopeStyle::Neox } else { RopeStyle::Normal };
            let rope = RopeConfig { style, n_rot: 64, base: 10000.0, freq_scale: 1.0, attn_factor: 1.0 };
            let (n, heads, head_dim) = (9, 3, 64);
            Case::Rope { n, start: 13, heads, head_dim, rope, x: rng.vec(n * heads * head_dim, -2.0, 2.0) }
        }
        "attention" => {
            let (window, softcap) = if variant == "window-softcap" { (Some(7), Some(1.5)) } else { (None, None) };
            let (heads, kv, hd) = (6, 2, 64);
            let p = AttentionParams {
                head_count: heads,
                head_count_kv: kv,
                head_dim: hd,
                scale: 1.0 / (hd as f32).sqrt(),
                sliding_window: window,
                softcap,
                causal: true,
            };
            // A prompt chunk crossing the kernel's 64-position chunk, then decode steps;
            // "rope-norm-long" decodes after 300 positions, where decode attention is
            // split among workgroups.
            let batches = match variant {
                "rope-norm-long" => vec![(0, 300), (300, 1), (301, 1)],
                "rope-bias" => vec![(0, 70), (70, 1), (71, 1), (72, 2)],
                _ => vec![(0, 70), (70, 1), (71, 2)],
            };
            let data = batches
                .iter()
                .map(|&(_, n)| {
                    (
                        rng.vec(n * heads * hd, -2.0, 2.0),
                        rng.vec(n * kv * hd, -2.0, 2.0),
                        rng.vec(n * kv * hd, -3.0, 3.0),
                    )
                })
                .collect();
            let style = if variant == "rope-bias" { RopeStyle::Neox } else { RopeStyle::Normal };
            let rope = RopeConfig { style, n_rot: hd, base: 10000.0, freq_scale: 1.0, attn_factor: 1.0 };
            let prep = match variant {
                "rope-bias" => {
                    let bias =
                        [rng.vec(heads * hd, -1.0, 1.0), rng.vec(kv * hd, -1.0, 1.0), rng.vec(kv * hd, -1.0, 1.0)];
                    Some(QkPrep { rope, bias: Some(bias), norm: None })
                }
                "rope-norm-long" => {
                    Some(QkPrep { rope, bias: None, norm: Some((rng.vec(hd, 0.5, 1.5), rng.vec(hd, 0.5, 1.5))) })
                }
                _ => None,
            };
            Case::Attention { p, batches, data, prep }
        }
        "silu" | "gelu" => {
            let act = if family == "silu" { Activation::Silu } else { Activation::GeluTanh };
            let (n, cols) = (7, 333);
            let mut g = rng.vec(n * cols, -8.0, 8.0);
            g[5] = 95.0; // deep in exp's and tanh's saturation
            g[6] = -95.0;
            Case::Gated { act, n, cols, g, u: rng.vec(n * cols, -2.0, 2.0) }
        }
        "add" => Case::Add { n: 7, cols: 333, x: rng.vec(7 * 333, -4.0, 4.0), y: rng.vec(7 * 333, -4.0, 4.0) },
        "softcap" => Case::Softcap { n: 7, cols: 333, x: rng.vec(7 * 333, -90.0, 90.0) },
        "argmax" => {
            // Past one 4096-value chunk (chunks, then a merge), with a tie the lowest index wins.
            let (n, cols) = (3, 9000);
            let mut x = rng.vec(n * cols, -5.0, 5.0);
            for c in [8000, 17, 500] {
                x[cols + c] = 9.0;
            }
            Case::Argmax { n, cols, x }
        }
        "top_k" => Case::TopK { n: 2, cols: 5000, k: 40, x: rng.vec(2 * 5000, -5.0, 5.0) },
        _ => return Err(WebError::usage(format!("unknown kernel check '{name}'"))),
    })
}

// ---- timing and results ---------------------------------------------------------------

/// `performance.now()` of the page or worker (Date.now() where there is none).
fn now_ms() -> f64 {
    let global = js_sys::global();
    js_sys::Reflect::get(&global, &"performance".into())
        .ok()
        .and_then(|p| {
            let now = js_sys::Reflect::get(&p, &"now".into()).ok()?.dyn_into::<js_sys::Function>().ok()?;
            now.call0(&p).ok()?.as_f64()
        })
        .unwrap_or_else(js_sys::Date::now)
}

fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let o = js_sys::Object::new();
    for (k, v) in fields {
        // Setting a property of a fresh plain object cannot fail.
        let _ = js_sys::Reflect::set(&o, &(*k).into(), v);
    }
    o.into()
}

async fn open_gpu() -> JsResult<GpuBackend> {
    GpuBackend::new(GpuOptions::default())
        .await
        .map_err(|e| WebError::new(ErrorName::WebGpuUnavailable, format!("no WebGPU device: {e}")))
}

thread_local! {
    /// The device the kernel checks share, so each family's pipelines compile once and
    /// a check's time is its work (taken out while a check runs, put back when it passes
    /// its ops without error).
    static CHECK_GPU: std::cell::RefCell<Option<GpuBackend>> = const { std::cell::RefCell::new(None) };
}

async fn checks_gpu() -> JsResult<GpuBackend> {
    match CHECK_GPU.with(|g| g.borrow_mut().take()) {
        Some(gpu) => Ok(gpu),
        None => open_gpu().await,
    }
}

/// The names of every kernel check `runKernelCheck` takes.
#[wasm_bindgen(js_name = kernelChecks)]
pub fn kernel_checks() -> Vec<String> {
    check_names()
}

/// Runs one kernel check on the CPU backend and twice on WebGPU (one device shared by
/// the checks); the result says whether every value of both GPU runs is within
/// tolerance, the largest |Δ| and where, and the times (ops and read-back): `cpuMs`,
/// `gpuFirstMs` (with compiling the kernels' pipelines) and `gpuMs` (warm).
#[wasm_bindgen(js_name = runKernelCheck)]
pub async fn run_kernel_check(name: String) -> Result<JsValue, JsValue> {
    crate::init();
    let case = make_case(&name)?;
    let mut gpu = checks_gpu().await?;
    let t0 = now_ms();
    let want = case.run(&mut CpuBackend::new()).await?;
    let t1 = now_ms();
    let first = case.run(&mut gpu).await?;
    let t2 = now_ms();
    // Again on the warm device: its time is the work's, without compiling pipelines.
    let got = case.run(&mut gpu).await?;
    let t3 = now_ms();
    let adapter = gpu.adapter().to_string();
    CHECK_GPU.with(|g| *g.borrow_mut() = Some(gpu));
    let (tol, rule) = case.tolerances(&want);
    let (mut max_error, mut worst, mut pass) = (0.0f32, 0usize, got.len() == want.len() && first.len() == want.len());
    let both = first.iter().zip(&want).zip(&tol).enumerate().chain(got.iter().zip(&want).zip(&tol).enumerate());
    for (i, ((g, c), t)) in both {
        let d = if g.is_nan() && c.is_nan() { 0.0 } else { (g - c).abs() };
        if d.is_nan() || d > *t {
            pass = false;
        }
        if d > max_error || d.is_nan() {
            (max_error, worst) = (if d.is_nan() { f32::INFINITY } else { d }, i);
        }
    }
    Ok(object(&[
        ("name", name.into()),
        ("pass", pass.into()),
        ("maxError", (max_error as f64).into()),
        ("worst", (worst as f64).into()),
        ("tolerance", rule.into()),
        ("values", (want.len() as f64).into()),
        ("cpuMs", (t1 - t0).into()),
        ("gpuFirstMs", (t2 - t1).into()),
        ("gpuMs", (t3 - t2).into()),
        ("adapter", adapter.into()),
    ]))
}

/// Records `reps` matvecs of one `rows × cols` weight of `type` per timed batch on
/// `backend` ('webgpu' | 'cpu') and reads the result back once, batch after batch for at
/// least MIN_TIMED_MS: ms per matvec (after a warm-up batch) and the weight bytes
/// streamed per second.
#[wasm_bindgen(js_name = benchMatvec)]
pub async fn bench_matvec(
    backend: String,
    ty: String,
    rows: usize,
    cols: usize,
    reps: usize,
) -> Result<JsValue, JsValue> {
    crate::init();
    let ty = parse_type(&ty)?;
    if !cols.is_multiple_of(ty.block_elems()) {
        return Err(
            WebError::usage(format!("{} rows take a multiple of {} values", ty.name(), ty.block_elems())).into()
        );
    }
    let mut rng = Rng(7);
    let w = random_weight(&mut rng, ty, rows, cols);
    let x = rng.vec(cols, -1.0, 1.0);
    let bytes = w.len() as f64;
    let ms = match backend.as_str() {
        "webgpu" => time_matvec(&mut open_gpu().await?, ty, rows, cols, reps, &w, &x).await?,
        "cpu" => time_matvec(&mut CpuBackend::new(), ty, rows, cols, reps, &w, &x).await?,
        other => return Err(WebError::usage(format!("unknown backend '{other}': use 'webgpu' or 'cpu'")).into()),
    };
    Ok(object(&[
        ("type", ty.name().into()),
        ("backend", backend.into()),
        ("msPerOp", ms.into()),
        ("weightBytes", bytes.into()),
        ("gbPerSecond", (bytes / (ms / 1e3) / 1e9).into()),
    ]))
}

async fn time_matvec<B: Backend>(
    b: &mut B,
    ty: GgmlType,
    rows: usize,
    cols: usize,
    reps: usize,
    w: &[u8],
    x: &[f32],
) -> JsResult<f64> {
    let wt = weight(b, ty, rows, cols, w)?;
    let xa = filled(b, x, 1, cols, 0)?;
    let out = b.alloc_activation(1, rows)?;
    b.matmul(xa, &wt, out);
    b.read_rows(out, 1).await?;
    // Batches of `reps` until MIN_TIMED_MS have passed: a browser may coarsen its clock
    // to 0.1 ms, less than a small matvec takes on the CPU, and a zero reading would be
    // an infinite rate.
    let (start, mut ops) = (now_ms(), 0);
    loop {
        for _ in 0..reps.max(1) {
            b.matmul(xa, &wt, out);
        }
        b.read_rows(out, 1).await?;
        ops += reps.max(1);
        if now_ms() - start >= MIN_TIMED_MS {
            return Ok((now_ms() - start) / ops as f64);
        }
    }
}

/// The least time a matvec benchmark measures over.
const MIN_TIMED_MS: f64 = 20.0;

/// The cost of one more small dispatch in a batch: `count` tiny adds then one read,
/// minus one add then one read, per add (µs).
#[wasm_bindgen(js_name = benchDispatch)]
pub async fn bench_dispatch(backend: String, count: usize) -> Result<JsValue, JsValue> {
    crate::init();
    let us = match backend.as_str() {
        "webgpu" => time_dispatch(&mut open_gpu().await?, count).await?,
        "cpu" => time_dispatch(&mut CpuBackend::new(), count).await?,
        other => return Err(WebError::usage(format!("unknown backend '{other}': use 'webgpu' or 'cpu'")).into()),
    };
    Ok(object(&[("backend", backend.into()), ("count", (count as f64).into()), ("usPerDispatch", us.into())]))
}

async fn time_dispatch<B: Backend>(b: &mut B, count: usize) -> JsResult<f64> {
    let count = count.max(2);
    let x = filled(b, &[0.5; 64], 1, 64, 0)?;
    let y = filled(b, &[0.25; 64], 1, 64, 0)?;
    time_adds(b, x, y, 1).await?; // warm-up: pipelines compiled
    let one = time_adds(b, x, y, 1).await?;
    let many = time_adds(b, x, y, count).await?;
    Ok(((many - one) / (count - 1) as f64 * 1e3).max(0.0))
}

/// ms for `n` adds and one read.
async fn time_adds<B: Backend>(b: &mut B, x: B::Activation, y: B::Activation, n: usize) -> JsResult<f64> {
    let start = now_ms();
    for _ in 0..n {
        b.add(x, y);
    }
    b.read_rows(x, 1).await?;
    Ok(now_ms() - start)
}
