//! Times single ops on the default adapter: each op is recorded REPS times into one
//! batch, then one readback; the figure is (total − one empty readback) / REPS, so the
//! per-dispatch overhead inside a pass is included but the submit is not.
//! `cargo run --release -p kindling-gpu --example op_timing [prefill rows, default 512]`
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
        _ => (1, 4),
    };
    let n = rows * cols / be * bb;
    // Bytes < 0x3C keep every f16 scale finite.
    let bytes: Vec<u8> = (0..n).map(|i| (i * 7 % 0x3C) as u8).collect();
    let mut w = b.alloc_weight(&WeightSpec { name: "w".into(), ty, cols, rows, n_bytes: n as u64 }).expect("alloc");
    b.write_weight(&mut w, 0, &bytes).expect("write");
    b.finish_weight(&mut w).expect("finish");
    w
}

fn time(b: &mut GpuBackend, label: &str, n: usize, start: usize, sink: kindling_gpu::GpuActivation, mut op: impl FnMut(&mut GpuBackend)) {
    let ids: Vec<u32> = vec![1; n];
    let mut empty = f64::MAX;
    let mut full = f64::MAX;
    for _ in 0..3 {
        b.begin_batch(&ids, start).expect("batch");
        let t = Instant::now();
        pollster::block_on(b.argmax_rows(sink, 1)).expect("read");
        empty = empty.min(t.elapsed().as_secs_f64());
        b.begin_batch(&ids, start).expect("batch");
        let t = Instant::now();
        for _ in 0..REPS {
            op(b);
        }
        pollster::block_on(b.argmax_rows(sink, 1)).expect("read");
        full = full.min(t.elapsed().as_secs_f64());
    }
    println!("{label:<48} n={n:<4} start={start:<4} {:8.1} µs", (full - empty) / REPS as f64 * 1e6);
}

fn main() {
    let m: usize = std::env::args().nth(1).map_or(512, |s| s.parse().expect("rows"));
    let mut b = pollster::block_on(GpuBackend::new(GpuOptions::default())).expect("gpu");
    println!("{}", b.adapter());
    let big = m.max(1);
    let sink = b.alloc_activation(big, 64).expect("sink");
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
        let p = AttentionParams { head_count: heads, head_count_kv: kv, head_dim: hd, scale: 0.125, sliding_window: None, softcap: None };
        for (start, n) in [(0usize, m), (0, 1), (136, 1), (m, 1), (2 * m, 1)] {
            time(&mut b, &format!("attention {heads}/{kv}x{hd}"), n, start, sink, |b| b.attention(q, k, k, &mut cache, &p, o));
        }
        let rope = kindling_model::RopeConfig { n_rot: hd, base: 10000.0, freq_scale: 1.0, style: kindling_model::RopeStyle::Neox, attn_factor: 1.0 };
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
    let nw = weight(&mut b, GgmlType::F32, 1, 576);
    let x = b.alloc_activation(big, 576).expect("x");
    let h = b.alloc_activation(big, 576).expect("h");
    for n in [1usize, m] {
        time(&mut b, "rms_norm 576", n, 0, sink, |b| b.rms_norm(x, &nw, 576, 1e-5, h));
    }
}
