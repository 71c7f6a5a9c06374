//! Probe: ways to write the decode gate/up matvec over Q4_K, timed side by side on
//! Qwen2.5-1.5B's shape (2 × 8,960 × 1,536, RMS norm fused, SiLU), 28 layers of distinct
//! weights (434 MB, so the reads come from memory, not the L2), dispatched in one pass
//! as a token would (each dispatch after a barrier). The backend's own kernel
//! (`matvec_gated` normed, at several lane counts) beside the kernels of
//! gated_probe.wgsl; each checked against a CPU reference first.
//! `cargo run --release -p kindling-gpu --example gated_probe`
use std::time::Instant;

mod probe_util;
use probe_util::{group, pipeline, q4k, trusted, vulkan_adapter};

use kindling_gguf::GgmlType;
use kindling_gpu::{KernelKey, Op, ShaderFeatures};
use kindling_testdata::Rng;

const K: usize = 1536;
const ROWS: usize = 8960;
const LAYERS: usize = 28;
const CHAIN: usize = 4 * LAYERS;
const BLOCK_BYTES: usize = 144;

struct Variant {
    name: String,
    pipeline: wgpu::ComputePipeline,
    groups: Vec<wgpu::BindGroup>,
    workgroups: u32,
}

fn main() {
    let adapter = vulkan_adapter();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: wgpu::Features::SUBGROUP,
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .expect("device");
    device.on_uncaptured_error(std::sync::Arc::new(|e: wgpu::Error| panic!("{e:?}")));
    let sg = adapter.get_info().subgroup_max_size;

    let mut rng = Rng(7);
    let storage = |label: &str, bytes: &[u8], extra| probe_util::storage(&device, &queue, label, bytes, extra);
    let xs: Vec<f32> = (0..K).map(|_| (rng.next_u64() % 2000) as f32 / 1000.0 - 1.0).collect();
    let nws: Vec<f32> = (0..K).map(|_| 0.5 + (rng.next_u64() % 1000) as f32 / 1000.0).collect();
    let x = storage("x", bytemuck::cast_slice(&xs), wgpu::BufferUsages::empty());
    let nw = storage("nw", bytemuck::cast_slice(&nws), wgpu::BufferUsages::empty());
    let out = storage("out", &vec![0u8; ROWS * 4], wgpu::BufferUsages::COPY_SRC);
    let h = storage("h", &vec![0u8; K * 4], wgpu::BufferUsages::empty());
    let mut first = None;
    let weights: Vec<(wgpu::Buffer, wgpu::Buffer)> = (0..LAYERS)
        .map(|l| {
            let g = q4k(&mut rng, ROWS, K);
            let u = q4k(&mut rng, ROWS, K);
            let bufs =
                (storage("gate", &g, wgpu::BufferUsages::empty()), storage("up", &u, wgpu::BufferUsages::empty()));
            if l == 0 {
                first = Some((g, u));
            }
            queue.submit([]);
            bufs
        })
        .collect();
    let (g0, u0) = first.expect("layer 0");
    let expect = reference(&g0, &u0, &xs, &nws);

    let uniform = |words: &[u32]| {
        let b = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: (words.len() * 4).next_multiple_of(16) as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&b, 0, bytemuck::cast_slice(words));
        b
    };
    let eps = 1e-6f32.to_bits();
    let mut variants = Vec::new();

    // The backend's kernel: MatmulParams in field order (n, k, rows, row_words, x_stride,
    // out_stride, out_offset, res_add, res_stride, act, rows2, rows3, row_words3, lanes,
    // eps, splits, k_span, m_tiles, gated).
    let key = KernelKey::new(Op::MatvecGatedNormed, Some(GgmlType::Q4K))
        .with_features(ShaderFeatures { subgroup_size: sg, ..Default::default() });
    let module = trusted(&device, &key.source(), "base");
    for lanes in [8u32, 16, 32] {
        let params = uniform(&[
            1,
            K as u32,
            ROWS as u32,
            (K / 256 * 36) as u32,
            K as u32,
            ROWS as u32,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            lanes,
            eps,
            1,
            0,
            0,
            0,
        ]);
        let pipeline = pipeline(&device, &module, key.op.entry_point());
        let layout = pipeline.get_bind_group_layout(0);
        let groups = weights
            .iter()
            .map(|(g, u)| {
                group(&device, &layout, &[(0, &params), (1, &x), (2, g), (3, &out), (5, u), (9, &nw), (10, &h)])
            })
            .collect();
        variants.push(Variant {
            name: format!("backend matvec_gated, {lanes} lanes"),
            pipeline,
            groups,
            workgroups: (ROWS / (256 / lanes as usize)) as u32,
        });
    }
    // The backend's integer-dot kernel (shaders/matvec_int.wgsl), without and with its
    // quantized output for the down projection (qx_runs).
    let int_key = key.with_int_runs(K);
    let int_module = trusted(&device, &int_key.source(), "int");
    let qx = storage("qx", &vec![0u8; ROWS / 16 * 64], wgpu::BufferUsages::empty());
    for qx_runs in [0u32, (ROWS / 16) as u32] {
        let lanes = 16;
        let params = uniform(&[
            1,
            K as u32,
            ROWS as u32,
            (K / 256 * 36) as u32,
            K as u32,
            ROWS as u32,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            lanes,
            eps,
            1,
            0,
            0,
            0,
            qx_runs,
        ]);
        let pipeline = pipeline(&device, &int_module, int_key.op.entry_point());
        let layout = pipeline.get_bind_group_layout(0);
        let groups = weights
            .iter()
            .map(|(g, u)| {
                group(
                    &device,
                    &layout,
                    &[(0, &params), (1, &x), (2, g), (3, &out), (5, u), (9, &nw), (10, &h), (11, &qx)],
                )
            })
            .collect();
        variants.push(Variant {
            name: format!("backend int gated, qx_runs {qx_runs}"),
            pipeline,
            groups,
            workgroups: (ROWS / 16) as u32,
        });
    }
    let probe = trusted(&device, &format!("const SG: u32 = {sg}u;\n{}", include_str!("gated_probe.wgsl")), "probe");
    let params = uniform(&[K as u32, ROWS as u32, (K / 256 * 9) as u32, (K / 32) as u32, eps, 0, 0, 0]);
    for entry in ["noop", "wide_f32", "wide_f32_late", "wide_i8", "wide_i16"] {
        let pipeline = pipeline(&device, &probe, entry);
        let layout = pipeline.get_bind_group_layout(0);
        let groups = weights
            .iter()
            .map(|(g, u)| group(&device, &layout, &[(0, &params), (1, &x), (2, &nw), (3, g), (4, u), (5, &out)]))
            .collect();
        variants.push(Variant { name: entry.to_string(), pipeline, groups, workgroups: (ROWS / 16) as u32 });
    }

    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read"),
        size: (ROWS * 4) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    for v in &variants {
        if v.name == "noop" {
            continue;
        }
        run(&device, &queue, v, 1);
        let mut enc = device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&out, 0, &read, 0, (ROWS * 4) as u64);
        queue.submit([enc.finish()]);
        read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
        let got: Vec<f32> = bytemuck::cast_slice(&read.slice(..).get_mapped_range().expect("mapped")).to_vec();
        read.unmap();
        let scale = expect.iter().fold(0f64, |m, v| m.max(v.abs()));
        let err = got.iter().zip(&expect).fold(0f64, |m, (a, b)| m.max((*a as f64 - b).abs()));
        println!("{:<36} max |Δ| {err:.3e} of max |y| {scale:.3e} ({:.1e} relative)", v.name, err / scale);
    }

    // Rounds of every variant in turn; µs per dispatch, best and median.
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    // QUICK=1 (a software adapter): the checks and one short round.
    let (rounds, chain) = if std::env::var_os("QUICK").is_some() { (1, 2) } else { (7, CHAIN) };
    for _ in 0..rounds {
        for (i, v) in variants.iter().enumerate() {
            times[i].push(run(&device, &queue, v, chain) / chain as f64);
        }
    }
    let noop = {
        let t = &mut times[variants.iter().position(|v| v.name == "noop").unwrap()].clone();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let bytes = 2.0 * (ROWS * K / 256 * BLOCK_BYTES) as f64;
    for (v, t) in variants.iter().zip(&mut times) {
        t.sort_by(f64::total_cmp);
        let med = t[t.len() / 2];
        println!(
            "{:<36} {:>5} workgroups  best {:6.2} µs  median {:6.2} µs  over noop {:6.2} µs  {:6.0} GB/s (whole dispatch)",
            v.name,
            v.workgroups,
            t[0],
            med,
            med - noop,
            bytes / med / 1e3
        );
    }
}

/// µs of `n` dispatches of `v` (layers in turn), submit to completion.
fn run(device: &wgpu::Device, queue: &wgpu::Queue, v: &Variant, n: usize) -> f64 {
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&v.pipeline);
        for i in 0..n {
            pass.set_bind_group(0, &v.groups[i % v.groups.len()], &[]);
            pass.dispatch_workgroups(v.workgroups, 1, 1);
        }
    }
    let cmd = enc.finish();
    let t = Instant::now();
    queue.submit([cmd]);
    device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    t.elapsed().as_secs_f64() * 1e6
}

/// silu(gate · xn) · (up · xn) on the CPU, xn = x / rms(x) · nw.
fn reference(g: &[u8], u: &[u8], x: &[f32], nw: &[f32]) -> Vec<f64> {
    let ss: f64 = x.iter().map(|v| (*v as f64).powi(2)).sum();
    let scale = 1.0 / (ss / K as f64 + 1e-6).sqrt();
    let xn: Vec<f64> = x.iter().zip(nw).map(|(a, b)| *a as f64 * scale * *b as f64).collect();
    let row_bytes = K / 256 * BLOCK_BYTES;
    let mut row = vec![0f32; K];
    let mut dot = |w: &[u8], r: usize| {
        kindling_gguf::dequantize(GgmlType::Q4K, &w[r * row_bytes..(r + 1) * row_bytes], &mut row).expect("dequantize");
        row.iter().zip(&xn).map(|(a, b)| *a as f64 * b).sum::<f64>()
    };
    (0..ROWS)
        .map(|r| {
            let a = dot(g, r);
            let c = dot(u, r);
            a / (1.0 + (-a).exp()) * c
        })
        .collect()
}
