//! Times single ops on the default adapter: each op is recorded REPS times into one
//! batch, then one readback; the figure is (total − one empty readback) / REPS, so the
//! per-dispatch overhead inside a pass is included but the submit is not; with DEVICE=1,
//! the device time of the ops' dispatches (timestamp queries), host recording left out.
//! `cargo run --release -p kindling-gpu --example op_timing [prefill rows, default 512]`
//! The prefill matmuls beside each other: `NO_COOP=1` (the kernels browsers run) with and
//! without `NO_INT_BATCH=1` (integer dot products, or f32); `INT_DIGITS=1|2|3` sets the
//! integer-dot kernel's digits per activation value (3 by default: the f32 class). Every
//! type with integer units runs the integer-dot kernel here, not only those where it pays
//! (`tuning::int_batch_pays`), so each type's two kernels can be compared. CHECKED=1
//! compiles the shaders with bounds checks, as a browser does (natively they have none). PER_KERNEL=1
//! (with DEVICE=1) prints each kernel's device time under its op. From
//! WIDE_MIN_ROWS rows, they run as dequantized panels (shaders/matmul_wide.wgsl) unless
//! `NO_WIDE=1` (on cooperative matrices only a feed-forward's gate and up take panels,
//! and op_timing times single matmuls: there they stay on matmul_tiled); `WIDE_EVERY=1`
//! takes every weight as panels, not only those `tuning::wide_weight_pays` picks.
//! With QWEN_ONLY=1: `QWEN_TYPE=F16` (or Q8_0, Q4K, Q6K) times every Qwen shape in that
//! weight type; `ATTN_STARTS="0 3584"` times prefill attention at each of those first
//! positions (a long prompt's later chunks attend to everything before them), over random
//! queries and keys with the cache filled before each start (`ATTN_ZEROS=1`: zeros).
use std::time::Instant;

use kindling_gguf::GgmlType;
use kindling_gpu::{GpuBackend, GpuOptions};
use kindling_model::{Activation, AttentionParams, Backend, KvSpec, WeightSpec};

const REPS: usize = 50;

fn weight(b: &mut GpuBackend, ty: GgmlType, rows: usize, cols: usize) -> kindling_gpu::GpuWeight {
    let (be, bb) = match ty {
        GgmlType::Q4_1 => (32, 20),
        GgmlType::Q8_0 => (32, 34),
        GgmlType::Q5_0 => (32, 22),
        GgmlType::Q4K => (256, 144),
        GgmlType::Q6K => (256, 210),
        GgmlType::F16 => (1, 2),
        _ => (1, 4),
    };
    let n = rows * cols / be * bb;
    // Bytes < 0x3C keep every f16 scale finite.
    let bytes: Vec<u8> = (0..n).map(|i| (i * 7 % 0x3C) as u8).collect();
    upload(b, ty, rows, cols, &bytes)
}

/// A weight of type `ty` holding `bytes`.
fn upload(b: &mut GpuBackend, ty: GgmlType, rows: usize, cols: usize, bytes: &[u8]) -> kindling_gpu::GpuWeight {
    let spec = WeightSpec { name: "w".into(), ty, cols, rows, n_bytes: bytes.len() as u64 };
    let mut w = b.alloc_weight(&spec).expect("alloc");
    b.write_weight(&mut w, 0, bytes).expect("write");
    b.finish_weight(&mut w).expect("finish");
    w
}

/// An F32 table of `rows` × `cols` random values in [-1, 1] (rows looked up by embed).
fn random_table(b: &mut GpuBackend, rows: usize, cols: usize, seed: u64) -> kindling_gpu::GpuWeight {
    let values = kindling_testdata::Rng(seed).vec(rows * cols, -1.0, 1.0);
    upload(b, GgmlType::F32, rows, cols, &kindling_testdata::random::f32_bytes(&values))
}

fn time(
    b: &mut GpuBackend,
    label: &str,
    n: usize,
    start: usize,
    sink: kindling_gpu::GpuActivation,
    mut op: impl FnMut(&mut GpuBackend),
) {
    let us = measure(b, sink, n, start, &mut op);
    println!("{label:<48} n={n:<4} start={start:<4} {us:8.1} µs");
}

/// µs per call of `op` in a batch of `n` rows at position `start`: REPS calls recorded
/// into one batch, then one readback; the wall time minus an empty batch's (host
/// recording included, the submit not), or with DEVICE=1 (the backend then profiles)
/// the device time of their dispatches from timestamp queries. Best of 3.
fn measure(
    b: &mut GpuBackend,
    sink: kindling_gpu::GpuActivation,
    n: usize,
    start: usize,
    op: &mut dyn FnMut(&mut GpuBackend),
) -> f64 {
    let ids: Vec<u32> = vec![1; n];
    let (mut empty, mut full, mut device) = (f64::MAX, f64::MAX, f64::MAX);
    for round in 0..3 {
        b.begin_batch(&ids, start).expect("batch");
        let t = Instant::now();
        pollster::block_on(b.argmax_rows(sink, 1)).expect("read");
        empty = empty.min(t.elapsed().as_secs_f64());
        b.take_profile();
        b.begin_batch(&ids, start).expect("batch");
        let t = Instant::now();
        for _ in 0..REPS {
            op(b);
        }
        pollster::block_on(b.argmax_rows(sink, 1)).expect("read");
        full = full.min(t.elapsed().as_secs_f64());
        if let Some(kernels) = b.take_profile() {
            let ns: f64 = kernels
                .iter()
                .filter(|k| !k.kernel.starts_with("Argmax") && !k.kernel.starts_with("TopK"))
                .map(|k| k.ns)
                .sum();
            device = device.min(ns / REPS as f64 / 1e3);
            // PER_KERNEL=1: each kernel's share (last round), e.g. a matmul's dequantizing,
            // its GEMM and its split sums apart.
            if round == 2 && std::env::var_os("PER_KERNEL").is_some() {
                let mut by_kernel = std::collections::BTreeMap::<&str, f64>::new();
                for k in &kernels {
                    *by_kernel.entry(k.kernel.as_str()).or_default() += k.ns;
                }
                for (name, ns) in by_kernel {
                    println!("    {name:<44} {:8.1} µs", ns / REPS as f64 / 1e3);
                }
            }
        }
    }
    if device < f64::MAX {
        device
    } else {
        (full - empty) / REPS as f64 * 1e6
    }
}

fn main() {
    let m: usize = std::env::args().nth(1).map_or(512, |s| s.parse().expect("rows"));
    // NO_COOP=1: the batch kernel on the shader cores even where the device has
    // cooperative matrices: on integer dot products (shaders/matmul_int.wgsl), or with
    // NO_INT_BATCH=1 in f32 (shaders/matmul_tiled.wgsl).
    // DEVICE=1: device times from timestamp queries instead of wall times.
    // CHECKED=1: shaders with wgpu's run-time bounds checks, as a browser compiles them.
    let options = GpuOptions {
        allow_coop_matrix: std::env::var_os("NO_COOP").is_none(),
        allow_int_batch: std::env::var_os("NO_INT_BATCH").is_none(),
        allow_wide_batch: std::env::var_os("NO_WIDE").is_none(),
        wide_every_weight: std::env::var_os("WIDE_EVERY").is_some(),
        int_batch_digits: std::env::var("INT_DIGITS").ok().map(|s| s.parse().expect("INT_DIGITS: 1, 2 or 3")),
        int_batch_every_type: true,
        profile: std::env::var_os("DEVICE").is_some(),
        checked_shaders: std::env::var_os("CHECKED").is_some(),
        ..Default::default()
    };
    let mut b = pollster::block_on(GpuBackend::new(options)).expect("gpu");
    println!("{}", b.adapter());
    println!("kernel variants: {:?}", b.shader_features());
    let big = m.max(1);
    let sink = b.alloc_activation(big, 64).expect("sink");
    if std::env::var_os("QWEN_ONLY").is_some() {
        if std::env::var_os("PREFILL_ONLY").is_none() {
            qwen15_decode(&mut b, sink);
        }
        qwen15_prefill(&mut b, sink, m);
        return;
    }
    for (ty, rows, cols) in [
        (GgmlType::Q4_1, 576, 576),
        (GgmlType::Q4_1, 192, 576),
        (GgmlType::Q4_1, 1536, 576),
        (GgmlType::Q4_1, 576, 1536),
        (GgmlType::Q8_0, 49152, 576),
        (GgmlType::Q5_0, 1024, 640),
        (GgmlType::Q4K, 640, 2048),
        (GgmlType::Q6K, 640, 2048),
        // Gemma 3's decode shapes: v, o, gate/up, the tied 262k-row output.
        (GgmlType::Q8_0, 256, 640),
        (GgmlType::Q4K, 640, 1024),
        (GgmlType::Q5_0, 2048, 640),
        (GgmlType::Q8_0, 262144, 640),
    ] {
        let w = weight(&mut b, ty, rows, cols);
        let x = b.alloc_activation(big, cols).expect("x");
        let out = b.alloc_activation(big, rows).expect("out");
        for n in [1usize, m] {
            time(&mut b, &format!("matmul {rows}x{cols} {ty:?}"), n, 0, sink, |b| b.matmul(x, &w, out));
        }
    }
    for (heads, kv, hd) in [(9usize, 3usize, 64usize), (4, 1, 256)] {
        let q = b.alloc_activation(big, heads * hd).expect("q");
        let k = b.alloc_activation(big, kv * hd).expect("k");
        let o = b.alloc_activation(big, heads * hd).expect("o");
        let mut cache = b.alloc_kv_cache(KvSpec { capacity: 2 * m + 8, width: kv * hd }).expect("cache");
        let p = AttentionParams {
            head_count: heads,
            head_count_kv: kv,
            head_dim: hd,
            scale: 0.125,
            sliding_window: None,
            softcap: None,
            causal: true,
        };
        for (start, n) in [(0usize, m), (0, 1), (136, 1), (m, 1), (2 * m, 1)] {
            time(&mut b, &format!("attention {heads}/{kv}x{hd}"), n, start, sink, |b| {
                b.attention(q, k, k, &mut cache, &p, o)
            });
        }
        let rope = kindling_model::RopeConfig {
            n_rot: hd,
            base: 10000.0,
            freq_scale: 1.0,
            style: kindling_model::RopeStyle::Neox,
            attn_factor: 1.0,
        };
        time(&mut b, &format!("rope {heads}x{hd}"), m, 0, sink, |b| b.rope(q, heads, hd, &rope, None));
        time(&mut b, &format!("rope {heads}x{hd}"), 1, 0, sink, |b| b.rope(q, heads, hd, &rope, None));
    }
    // The decode argmax over a 262k vocabulary (Gemma 3), one workgroup per row: a
    // read of it against a read of a 64-value row.
    let logits = b.alloc_activation(1, 262144).expect("logits");
    let mut best = [f64::MAX; 2];
    for _ in 0..20 {
        for (i, a) in [sink, logits].into_iter().enumerate() {
            b.begin_batch(&[1], 0).expect("batch");
            let t = Instant::now();
            pollster::block_on(b.argmax_rows(a, 1)).expect("read");
            best[i] = best[i].min(t.elapsed().as_secs_f64());
        }
    }
    println!("{:<48} {:8.1} µs", "argmax 262144 (minus argmax 64)", (best[1] - best[0]) * 1e6);
    // The floor: a dispatch that does (almost) nothing.
    let tiny = b.alloc_activation(1, 16).expect("tiny");
    time(&mut b, "add 16 (dispatch floor)", 1, 0, sink, |b| b.add(tiny, sink));
    let g = b.alloc_activation(big, 1536).expect("g");
    let u = b.alloc_activation(big, 1536).expect("u");
    let a = b.alloc_activation(big, 1536).expect("a");
    for n in [1usize, m] {
        time(&mut b, "gated 1536", n, 0, sink, |b| b.gated_activation(g, u, Activation::Silu, a));
        time(&mut b, "add 1536", n, 0, sink, |b| b.add(g, u));
    }
    qwen15_decode(&mut b, sink);
    let nw = weight(&mut b, GgmlType::F32, 1, 576);
    let x = b.alloc_activation(big, 576).expect("x");
    let h = b.alloc_activation(big, 576).expect("h");
    for n in [1usize, m] {
        time(&mut b, "rms_norm 576", n, 0, sink, |b| b.rms_norm(x, &nw, 576, 1e-5, h));
    }
}

/// Qwen2.5-1.5B's decode matvecs (Q4_K_M: q/k/gate/up Q4_K; v and down Q6_K in half the
/// layers, Q4_K in the rest; a 151,936-row Q6_K output) as the decoder records them, so
/// the backend fuses them as in a real token: the norm into the q/k/v and gate/up
/// matvecs, the residual add into o and down. µs per group; weight bytes read and the
/// rate beside it.
fn qwen15_decode(b: &mut GpuBackend, sink: kindling_gpu::GpuActivation) {
    let (d, ff, kv, vocab) = (1536usize, 8960usize, 256usize, 151936usize);
    let nw = weight(b, GgmlType::F32, 1, d);
    let [x, h, q, k, v, att, g, u, a] =
        [d, d, d, kv, kv, d, ff, ff, ff].map(|c| b.alloc_activation(1, c).expect("act"));
    let wq = weight(b, GgmlType::Q4K, d, d);
    let wk = weight(b, GgmlType::Q4K, kv, d);
    let wo = weight(b, GgmlType::Q4K, d, d);
    let wgate = weight(b, GgmlType::Q4K, ff, d);
    let wup = weight(b, GgmlType::Q4K, ff, d);
    let logits = b.alloc_activation(1, vocab).expect("logits");
    let bytes = |ty: GgmlType, rows: usize, cols: usize| match ty {
        GgmlType::Q4K => rows * cols / 256 * 144,
        GgmlType::Q6K => rows * cols / 256 * 210,
        _ => rows * cols * 4,
    };
    let rate = |b: &mut GpuBackend, label: &str, n_bytes: usize, op: &mut dyn FnMut(&mut GpuBackend)| {
        let t = time_us(b, sink, op);
        println!("{label:<48} n=1    start=0    {t:8.1} µs  {:6.0} GB/s", n_bytes as f64 / t / 1e3);
    };
    for vty in [GgmlType::Q4K, GgmlType::Q6K] {
        let wv = weight(b, vty, kv, d);
        let wdown = weight(b, vty, d, ff);
        let qkv = bytes(GgmlType::Q4K, d + kv, d) + bytes(vty, kv, d);
        rate(b, &format!("qwen15 norm+qkv (v {vty:?})"), qkv, &mut |b| {
            b.rms_norm(x, &nw, d, 1e-6, h);
            b.matmul(h, &wq, q);
            b.matmul(h, &wk, k);
            b.matmul(h, &wv, v);
        });
        rate(b, &format!("qwen15 down+res {d}x{ff} {vty:?}"), bytes(vty, d, ff), &mut |b| {
            b.matmul(a, &wdown, att);
            b.add(x, att);
        });
    }
    rate(b, "qwen15 o+res 1536x1536 Q4K", bytes(GgmlType::Q4K, d, d), &mut |b| {
        b.matmul(att, &wo, q);
        b.add(x, q);
    });
    rate(b, "qwen15 norm+gate/up+silu 2x8960x1536 Q4K", 2 * bytes(GgmlType::Q4K, ff, d), &mut |b| {
        b.rms_norm(x, &nw, d, 1e-6, h);
        b.matmul(h, &wgate, g);
        b.matmul(h, &wup, u);
        b.gated_activation(g, u, Activation::Silu, a);
    });
    rate(b, "qwen15 gate/up+silu (norm apart)", 2 * bytes(GgmlType::Q4K, ff, d), &mut |b| {
        b.matmul(h, &wgate, g);
        b.matmul(h, &wup, u);
        b.gated_activation(g, u, Activation::Silu, a);
    });
    rate(b, "qwen15 gate alone 8960x1536 Q4K", bytes(GgmlType::Q4K, ff, d), &mut |b| b.matmul(h, &wgate, g));
    // Attention of one token over 8 and 512 cached positions (12 heads, 2 KV heads of
    // 128), the KV store included.
    let mut cache = b.alloc_kv_cache(KvSpec { capacity: 1024, width: kv }).expect("cache");
    let p = AttentionParams {
        head_count: 12,
        head_count_kv: 2,
        head_dim: 128,
        scale: 0.088,
        sliding_window: None,
        softcap: None,
        causal: true,
    };
    for start in [8usize, 512] {
        let us = time_at(b, sink, start, &mut |b| b.attention(q, k, v, &mut cache, &p, att));
        println!("{:<48} n=1    start={start:<4} {us:8.1} µs", "qwen15 attention 12/2x128");
    }
    let wout = weight(b, GgmlType::Q6K, vocab, d);
    rate(b, "qwen15 output 151936x1536 Q6K", bytes(GgmlType::Q6K, vocab, d), &mut |b| b.matmul(x, &wout, logits));
}

/// µs per call of `op` (as `time`, without printing).
fn time_us(b: &mut GpuBackend, sink: kindling_gpu::GpuActivation, op: &mut dyn FnMut(&mut GpuBackend)) -> f64 {
    measure(b, sink, 1, 0, op)
}

/// `time_us` for a one-token batch at position `start`.
fn time_at(
    b: &mut GpuBackend,
    sink: kindling_gpu::GpuActivation,
    start: usize,
    op: &mut dyn FnMut(&mut GpuBackend),
) -> f64 {
    measure(b, sink, 1, start, op)
}

/// Qwen2.5-1.5B's prefill matmuls over `m` rows: µs and TFLOP/s; then its attention
/// over the `m` rows (12 heads, 2 KV heads of 128).
fn qwen15_prefill(b: &mut GpuBackend, sink: kindling_gpu::GpuActivation, m: usize) {
    let shapes = [
        (GgmlType::Q4K, 8960, 1536),
        (GgmlType::Q6K, 1536, 8960),
        (GgmlType::Q4K, 1536, 1536),
        (GgmlType::Q4K, 256, 1536),
        // q and k (and v) as one weight: what one dispatch for them would cost.
        (GgmlType::Q4K, 1792, 1536),
        (GgmlType::Q4K, 2048, 1536),
    ];
    // QWEN_TYPE=F16 (or another type name): every shape in that type instead, e.g. to
    // time the batch kernel on weights dequantized to f16 beforehand.
    let ty_override = std::env::var("QWEN_TYPE").ok().map(|t| {
        *[GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4K, GgmlType::Q6K]
            .iter()
            .find(|ty| format!("{ty:?}") == t)
            .expect("QWEN_TYPE: F16, Q8_0, Q4K or Q6K")
    });
    for (ty, rows, cols) in shapes {
        let ty = ty_override.unwrap_or(ty);
        let w = weight(b, ty, rows, cols);
        let x = b.alloc_activation(m, cols).expect("x");
        let out = b.alloc_activation(m, rows).expect("out");
        let us = measure(b, sink, m, 0, &mut |b| b.matmul(x, &w, out));
        let tflops = 2.0 * (rows * cols * m) as f64 / us / 1e6;
        println!(
            "{:<48} n={m:<4} start=0    {us:8.1} µs  {tflops:6.1} TFLOP/s",
            format!("qwen15 prefill {rows}x{cols} {ty:?}")
        );
    }
    // Qwen2.5 1.5B and 0.5B, SmolLM2, Gemma 3.
    for (heads, kv, hd) in [(12usize, 2usize, 128usize), (14, 2, 64), (9, 3, 64), (4, 1, 256)] {
        let (q, k, o) = (
            b.alloc_activation(m, heads * hd).expect("q"),
            b.alloc_activation(m, kv * hd).expect("k"),
            b.alloc_activation(m, heads * hd).expect("o"),
        );
        // ATTN_STARTS="0 3584": the rows' first position for each timing, so a long
        // prompt's later chunks (each attends to every position before it) can be timed.
        let starts: Vec<usize> = std::env::var("ATTN_STARTS")
            .map(|s| s.split_whitespace().map(|v| v.parse().expect("ATTN_STARTS: positions")).collect())
            .unwrap_or_else(|_| vec![0]);
        let last = starts.iter().copied().max().unwrap_or(0);
        let mut cache = b.alloc_kv_cache(KvSpec { capacity: last + m + 8, width: kv * hd }).expect("cache");
        let p = AttentionParams {
            head_count: heads,
            head_count_kv: kv,
            head_dim: hd,
            scale: 0.088,
            sliding_window: None,
            softcap: None,
            causal: true,
        };
        // Queries and keys (the keys also as values) of random values in [-1, 1], each row
        // its own, and the cache filled with them chunk by chunk up to the last start, so
        // scores vary as in a model; ATTN_ZEROS=1: zeros and an empty cache behind the
        // timed rows, as op_timing had them until 2026-11-28 (every score 0).
        if std::env::var_os("ATTN_ZEROS").is_none() {
            let ids: Vec<u32> = (0..m as u32).collect();
            let tq = random_table(b, m, heads * hd, 1 + hd as u64);
            let tk = random_table(b, m, kv * hd, 2 + hd as u64);
            b.begin_batch(&ids, 0).expect("batch");
            b.embed(&tq, 1.0, q);
            b.embed(&tk, 1.0, k);
            pollster::block_on(b.argmax_rows(sink, 1)).expect("read");
            for s in (0..last).step_by(m) {
                b.begin_batch(&ids, s).expect("batch");
                b.attention(q, k, k, &mut cache, &p, o);
                pollster::block_on(b.argmax_rows(sink, 1)).expect("read");
            }
        }
        for &start in &starts {
            time(b, &format!("prefill attention {heads}/{kv}x{hd}"), m, start, sink, |b| {
                b.attention(q, k, k, &mut cache, &p, o)
            });
        }
    }
}
