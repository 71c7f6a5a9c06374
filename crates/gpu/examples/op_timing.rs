//! Times single ops on the default adapter (rough: includes a submit and a readback).
//! `cargo run --release -p kindling-gpu --example op_timing`
use std::time::Instant;

use kindling_gguf::GgmlType;
use kindling_gpu::{GpuBackend, GpuOptions};
use kindling_model::{AttentionParams, Backend, KvSpec, WeightSpec};

fn main() {
    let mut b = pollster::block_on(GpuBackend::new(GpuOptions::default())).expect("gpu");
    println!("{}", b.adapter());
    let (rows, cols) = (49152usize, 576usize);
    let ty = GgmlType::Q8_0;
    let bytes = vec![0x11u8; rows * cols / 32 * 34];
    let mut w = b
        .alloc_weight(&WeightSpec { name: "w".into(), ty, cols, rows, n_bytes: bytes.len() as u64 })
        .expect("alloc");
    b.write_weight(&mut w, 0, &bytes).expect("write");
    b.finish_weight(&mut w).expect("finish");
    let x = b.alloc_activation(64, cols).expect("x");
    let out = b.alloc_activation(64, rows).expect("out");
    for n in [1usize, 8, 9, 55, 64] {
        let ids: Vec<u32> = (0..n as u32).collect();
        for rep in 0..2 {
            b.begin_batch(&ids, 0).expect("batch");
            let t = Instant::now();
            b.matmul(x, &w, out);
            pollster::block_on(b.argmax_rows(out, 1)).expect("read");
            if rep == 1 {
                println!("matmul {rows}x{cols} {ty:?} n={n}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let (heads, kv, hd) = (9usize, 3usize, 64usize);
    let q = b.alloc_activation(64, heads * hd).expect("q");
    let k = b.alloc_activation(64, kv * hd).expect("k");
    let o = b.alloc_activation(64, heads * hd).expect("o");
    let mut cache = b.alloc_kv_cache(KvSpec { capacity: 256, width: kv * hd }).expect("cache");
    let p = AttentionParams { head_count: heads, head_count_kv: kv, head_dim: hd, scale: 0.125, sliding_window: None };
    for (start, n) in [(0usize, 55usize), (55, 1), (56, 1)] {
        let ids: Vec<u32> = (0..n as u32).collect();
        b.begin_batch(&ids, start).expect("batch");
        let t = Instant::now();
        b.attention(q, k, k, &mut cache, &p, o);
        pollster::block_on(b.argmax_rows(o, 1)).expect("read");
        println!("attention start {start} n={n}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    }
}
