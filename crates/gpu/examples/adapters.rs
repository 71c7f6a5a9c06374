//! Lists the adapters wgpu sees and the one the backend picks (until `kindling info`),
//! with the cooperative matrix configurations the picked adapter reports.
fn main() {
    for a in pollster::block_on(kindling_gpu::adapters_info()) {
        println!("{a}");
    }
    match pollster::block_on(kindling_gpu::GpuBackend::new(kindling_gpu::GpuOptions::default())) {
        Ok(b) => {
            println!("picked: {} (features {:?})", b.adapter().name, b.features());
            println!("kernel variants: {:?}", b.shader_features());
            for c in &b.adapter().coop_configs {
                println!("cooperative matrix: {c:?}");
            }
        }
        Err(e) => println!("error: {e}"),
    }
}
