//! Lists the adapters wgpu sees and the one the backend picks (until `kindling info`).
fn main() {
    for a in pollster::block_on(kindling_gpu::adapters_info()) {
        println!("{a}");
    }
    match pollster::block_on(kindling_gpu::GpuBackend::new(kindling_gpu::GpuOptions::default())) {
        Ok(b) => println!("picked: {} (features {:?})", b.adapter().name, b.features()),
        Err(e) => println!("error: {e}"),
    }
}
