//! Kernel timing (ignored tests, run by hand): where a decode step's time goes, per
//! weight type and lane width, with the weights in cache and streamed from memory.
//!
//! `cargo test --release -p kindling-cpu --lib kernel_speed -- --ignored --nocapture`

use std::time::Instant;

use kindling_gguf::GgmlType;

use super::{dot_rows_on, needs, prefetch_ahead, x_planes, x_sums, Lanes, XRow};

/// Best of `reps` timings of `f`, in seconds.
fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

/// One activation row's preparation, and every weight row of `w` times it, for the
/// decode-shaped matvec (`cols` = 1536, SmolLM2-135M's feed-forward width).
#[test]
#[ignore]
fn kernel_speed() {
    let cols = 1536;
    let x: Vec<f32> = (0..cols).map(|i| ((i * 7919 % 1013) as f32 - 506.0) * 2.3e-3).collect();
    let (mut sums, mut planes, mut scales) =
        (vec![0.0f32; cols / 16], vec![0i16; super::planes_len(cols)], vec![0.0f32; cols / 32]);
    let sums_time = best(2000, || x_sums(&x, 32, &mut sums[..cols / 32]));
    let planes_time = best(2000, || x_planes(&x, &mut planes, &mut scales));
    println!("prep of {cols} activations: sums {:.0} ns, planes {:.0} ns", sums_time * 1e9, planes_time * 1e9);
    for ty in [GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::Q4K, GgmlType::Q6K] {
        let need = needs(ty);
        if let Some(g) = need.sum_group {
            x_sums(&x, g, &mut sums[..cols / g]);
        }
        let row = XRow {
            x: &x,
            sums: need.sum_group.map_or(&[][..], |g| &sums[..cols / g]),
            planes: if need.planes { &planes } else { &[] },
            scales: if need.planes { &scales } else { &[] },
        };
        let row_bytes = ty.bytes_for(cols as u64).unwrap() as usize;
        for (what, rows) in [("in L2", (1 << 20) / row_bytes), ("from memory", (256 << 20) / row_bytes)] {
            let w: Vec<u8> = (0..rows * row_bytes).map(|i| (i * 37 % 251) as u8 & 0x3f).collect();
            let lanes = Lanes::best();
            // Alternating, as the matmul walks rows with and without asking ahead.
            for prefetch in [false, true, false, true] {
                let mut sink = 0.0f32;
                let t = best(if rows > 10_000 { 3 } else { 200 }, || {
                    for (j, wr) in w.chunks_exact(row_bytes).enumerate() {
                        if prefetch {
                            prefetch_ahead(&w, row_bytes, j);
                        }
                        sink += dot_rows_on::<1>(lanes, ty, wr, [row])[0];
                    }
                });
                let gbs = w.len() as f64 / t / 1e9;
                let ns = t * 1e9 / (rows * cols / 32) as f64;
                let pf = if prefetch { "prefetch" } else { "" };
                println!("{ty:5} {what:11} {lanes:?} {pf:8}: {ns:.2} ns per 32 weights, {gbs:.1} GB/s ({sink:.0})");
            }
            // The decode matvec's own loop (`dot_band`: rows walked inside the lanes'
            // code, each row's successors asked for ahead).
            let mut out = vec![0.0f32; rows];
            let t = best(if rows > 10_000 { 3 } else { 200 }, || super::dot_band(ty, &w, row_bytes, row, &mut out));
            let ns = t * 1e9 / (rows * cols / 32) as f64;
            println!("{ty:5} {what:11} {lanes:?} band    : {ns:.2} ns per 32 weights ({:.0})", out.iter().sum::<f32>());
        }
    }
}

/// A fixed amount of kernel work for counting instructions, which the shared machine's
/// load does not change as it changes time:
/// `KINDLING_SPEED_TYPE=Q8_0 KINDLING_SPEED_ROWS=1 [KINDLING_SPEED_PASSES=10] valgrind --tool=cachegrind --cache-sim=no TEST_BINARY kernel_work --ignored`
/// (valgrind runs the AVX2 lanes: it does not emulate AVX-VNNI).
#[test]
#[ignore]
fn kernel_work() {
    let name = std::env::var("KINDLING_SPEED_TYPE").unwrap_or_else(|_| "Q8_0".into());
    let Some(ty) = GgmlType::ALL.into_iter().find(|t| t.to_string() == name) else {
        panic!("KINDLING_SPEED_TYPE={name}: no such type");
    };
    let per_call = std::env::var("KINDLING_SPEED_ROWS").ok().and_then(|r| r.parse().ok()).unwrap_or(1usize);
    let (cols, rows) = (1536, 256);
    let need = needs(ty);
    let xs: Vec<Vec<f32>> =
        (0..4).map(|k| (0..cols).map(|i| ((i * 7919 + k * 31) % 1013) as f32 * 2.3e-3 - 1.1).collect()).collect();
    let prep: Vec<(Vec<f32>, Vec<i16>, Vec<f32>)> = xs
        .iter()
        .map(|x| {
            let mut sums = vec![0.0; need.sum_group.map_or(0, |g| cols / g)];
            if let Some(g) = need.sum_group {
                x_sums(x, g, &mut sums);
            }
            let (mut planes, mut scales) = (vec![0i16; super::planes_len(cols)], vec![0.0f32; cols / 32]);
            x_planes(x, &mut planes, &mut scales);
            if !need.planes {
                (planes, scales) = (Vec::new(), Vec::new());
            }
            (sums, planes, scales)
        })
        .collect();
    let row = |k: usize| XRow { x: &xs[k], sums: &prep[k].0, planes: &prep[k].1, scales: &prep[k].2 };
    let row_bytes = ty.bytes_for(cols as u64).unwrap() as usize;
    let w: Vec<u8> = (0..rows * row_bytes).map(|i| (i * 37 % 251) as u8 & 0x3f).collect();
    let passes = std::env::var("KINDLING_SPEED_PASSES").ok().and_then(|p| p.parse().ok()).unwrap_or(10);
    let mut sink = 0.0f32;
    for _ in 0..passes {
        for wr in w.chunks_exact(row_bytes) {
            sink += match per_call {
                4 => dot_rows_on::<4>(Lanes::best(), ty, wr, core::array::from_fn(row)).iter().sum::<f32>(),
                _ => dot_rows_on::<1>(Lanes::best(), ty, wr, [row(0)])[0],
            };
        }
    }
    println!("{ty} rows={per_call} sink {sink}");
}
