//! What the raw-wgpu probes (gated_probe, coop_gemm_probe, f32_gemm_probe) and pipeline_stats share: the
//! Vulkan adapter, a filled storage buffer, a shader module without wgpu's run-time checks,
//! a pipeline with its layout taken from the shader, a bind group of whole buffers, random
//! Q4_K rows and a kernel dequantizing them, clearing and reading back a buffer, timing
//! repeated dispatches. Each probe
//! compiles this module as its own and uses a part of it.
#![allow(dead_code)]

use std::time::Instant;

use kindling_testdata::Rng;

/// The high-performance Vulkan adapter (its name printed: which GPU the figures are of).
pub fn vulkan_adapter() -> wgpu::Adapter {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::VULKAN;
    let instance = wgpu::Instance::new(desc);
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .expect("adapter");
    println!("{:?}", adapter.get_info().name);
    adapter
}

/// A storage buffer holding `bytes` (with `extra` usages, e.g. COPY_SRC to read it back).
pub fn storage(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    label: &str,
    bytes: &[u8],
    extra: wgpu::BufferUsages,
) -> wgpu::Buffer {
    let b = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.len() as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | extra,
        mapped_at_creation: false,
    });
    queue.write_buffer(&b, 0, bytes);
    b
}

/// A module compiled as the backend compiles its own natively: no bounds checks, no
/// loop counters.
pub fn trusted(device: &wgpu::Device, src: &str, label: &str) -> wgpu::ShaderModule {
    let mut checks = wgpu::ShaderRuntimeChecks::checked();
    checks.bounds_checks = false;
    checks.force_loop_bounding = false;
    let desc = wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(src.into()) };
    // SAFETY: a probe over fixed shapes whose indices stay in bounds.
    unsafe { device.create_shader_module_trusted(desc, checks) }
}

pub fn pipeline(device: &wgpu::Device, module: &wgpu::ShaderModule, entry: &str) -> wgpu::ComputePipeline {
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: None,
        module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// Whole buffers at the given bindings.
pub fn group(device: &wgpu::Device, layout: &wgpu::BindGroupLayout, bufs: &[(u32, &wgpu::Buffer)]) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> =
        bufs.iter().map(|(i, b)| wgpu::BindGroupEntry { binding: *i, resource: b.as_entire_binding() }).collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout, entries: &entries })
}

/// Q4_K rows with random quants and scales (144-byte blocks of 256 values), d and dmin
/// near 2^-8.
pub fn q4k(rng: &mut Rng, rows: usize, k: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows * k / 256 * 144);
    for _ in 0..rows * k / 256 {
        for _ in 0..2 {
            let h = 0x1C00u16 | (rng.next_u64() & 0x3ff) as u16;
            out.extend_from_slice(&h.to_le_bytes());
        }
        for _ in 0..140 {
            out.push(rng.next_u64() as u8);
        }
    }
    out
}

/// Zeroes `b` (so a GEMM that wrote nothing cannot pass on the last variant's output).
pub fn clear(device: &wgpu::Device, queue: &wgpu::Queue, b: &wgpu::Buffer) {
    let mut enc = device.create_command_encoder(&Default::default());
    enc.clear_buffer(b, 0, None);
    queue.submit([enc.finish()]);
}

/// Wall time per dispatch of `reps` dispatches in one pass (best of 5 submissions).
pub fn time(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    pipe: &wgpu::ComputePipeline,
    bg: &wgpu::BindGroup,
    (gx, gy, gz): (u32, u32, u32),
    reps: usize,
) -> f64 {
    let mut best = f64::MAX;
    for round in 0..6 {
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipe);
            pass.set_bind_group(0, bg, &[]);
            for _ in 0..if round == 0 { 1 } else { reps } {
                pass.dispatch_workgroups(gx, gy, gz);
            }
        }
        let cmd = enc.finish();
        let t = Instant::now();
        queue.submit([cmd]);
        device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
        if round > 0 {
            best = best.min(t.elapsed().as_secs_f64() * 1e6 / reps as f64);
        }
    }
    best
}

pub fn read_back(device: &wgpu::Device, queue: &wgpu::Queue, b: &wgpu::Buffer, bytes: usize) -> Vec<u8> {
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read"),
        size: bytes as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(b, 0, &read, 0, bytes as u64);
    queue.submit([enc.finish()]);
    read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
    device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    let v = read.slice(..).get_mapped_range().expect("mapped").to_vec();
    read.unmap();
    v
}

/// A kernel `deq_q4k` dequantizing Q4_K rows (`p.n` rows of `p.k` values), one invocation
/// per 8 values: `lo` and `hi` (values 8i..8i+3 and 8i+4..8i+7, f32) written by `store`
/// into `wq`, an array of `elem`.
pub fn deq_q4k_source(elem: &str, store: &str) -> String {
    format!(
        "struct P {{ m: u32, n: u32, k: u32, pad: u32 }}
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> w: array<u32>;
@group(0) @binding(2) var<storage, read_write> wq: array<{elem}>;
fn byte(base: u32, off: u32) -> u32 {{
    return (w[base + off / 4u] >> (8u * (off % 4u))) & 0xffu;
}}
@compute @workgroup_size(256)
fn deq_q4k(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {{
    let i = gid.x + gid.y * nw.x * 256u;
    let blk = i / 32u;
    let j = (i % 32u) / 4u;
    let part = i % 4u;
    if (blk >= p.n * p.k / 256u) {{
        return;
    }}
    let base = blk * 36u;
    let dm = unpack2x16float(w[base]);
    var sc: u32;
    var mn: u32;
    if (j < 4u) {{
        sc = byte(base, 4u + j) & 63u;
        mn = byte(base, 8u + j) & 63u;
    }} else {{
        sc = (byte(base, 8u + j) & 15u) | ((byte(base, j) >> 6u) << 4u);
        mn = (byte(base, 8u + j) >> 4u) | ((byte(base, 4u + j) >> 6u) << 4u);
    }}
    let d = dm.x * f32(sc);
    let m = vec4<f32>(dm.y * f32(mn));
    let q0 = base + 4u + 8u * (j / 2u) + 2u * part;
    let shift = 4u * (j % 2u);
    let w0 = w[q0] >> shift;
    let w1 = w[q0 + 1u] >> shift;
    let lo = d * vec4<f32>(vec4<u32>(w0, w0 >> 8u, w0 >> 16u, w0 >> 24u) & vec4<u32>(15u)) - m;
    let hi = d * vec4<f32>(vec4<u32>(w1, w1 >> 8u, w1 >> 16u, w1 >> 24u) & vec4<u32>(15u)) - m;
    {store}
}}
"
    )
}
