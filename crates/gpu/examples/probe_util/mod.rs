//! What the raw-wgpu probes (gated_probe, coop_gemm_probe) share: the Vulkan adapter, a
//! filled storage buffer, a shader module without wgpu's run-time checks, a pipeline with
//! its layout taken from the shader, a bind group of whole buffers, random Q4_K rows.

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
