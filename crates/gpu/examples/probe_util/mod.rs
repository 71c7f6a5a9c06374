//! What the raw-wgpu probes (gated_probe, coop_gemm_probe) share: a shader module without
//! wgpu's run-time checks, a pipeline with its layout taken from the shader, a bind group
//! of whole buffers, random Q4_K rows.

use kindling_testdata::Rng;

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
