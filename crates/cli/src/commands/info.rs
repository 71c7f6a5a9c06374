//! `kindling info`: the GPU adapters wgpu can see, with features and limits.

use crate::load::Error;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<(), Error> {
    let adapters = pollster::block_on(kindling_gpu::adapters_info());
    if adapters.is_empty() {
        println!(
            "no GPU adapters found (install a Vulkan driver, e.g. mesa-vulkan-drivers); `--backend cpu` still works"
        );
    }
    for (i, a) in adapters.iter().enumerate() {
        println!("[{i}] {a}");
    }
    println!("cpu: {} threads", std::thread::available_parallelism().map_or(1, |n| n.get()));
    Ok(())
}
