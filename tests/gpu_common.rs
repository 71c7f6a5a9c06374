//! Helpers shared by the GPU tests (included with `#[path]` by `gpu_kernels.rs` and
//! `gpu_e2e.rs`): opening the GPU with a clear failure when there is none, loading
//! models on it, comparing results. Random test data: `kindling_testdata::random`.

#![allow(dead_code)]

use std::path::Path;

use kindling_gpu::{GpuBackend, GpuOptions};
use kindling_model::{Model, ModelOptions};

/// Opens the GPU backend or fails the test saying how to get an adapter. The GPU tests
/// never skip: on a machine without a GPU they run on Mesa's lavapipe (CPU Vulkan).
/// Only OpenGL (wgpu's downlevel backend) does not count: the tests are meant for the
/// backends the product runs on (Vulkan/Metal/DX12 natively, WebGPU in browsers).
pub fn gpu_with(options: GpuOptions) -> GpuBackend {
    const INSTALL: &str = "The GPU tests need a Vulkan driver. Without a GPU, install Mesa's CPU Vulkan driver \
                           (lavapipe): apt-get install -y mesa-vulkan-drivers libvulkan1";
    match pollster::block_on(GpuBackend::new(options)) {
        Ok(b) if b.adapter().backend == "Gl" => {
            panic!("only an OpenGL adapter was found ({}), no Vulkan one.\n{INSTALL}", b.adapter())
        }
        Ok(b) => b,
        Err(e) => panic!("cannot open a GPU adapter: {e}\n{INSTALL}"),
    }
}

pub fn gpu() -> GpuBackend {
    gpu_with(GpuOptions::default())
}

/// Loads a model file on the GPU backend through the streaming loader.
pub fn load_gpu(path: &Path, options: GpuOptions) -> Model<GpuBackend> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Model::load_from_bytes(gpu_with(options), &bytes, ModelOptions::default()).expect("load model on the GPU")
}

/// Largest |a - b| and where, over two equally long slices.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> (f32, usize) {
    assert_eq!(a.len(), b.len(), "lengths differ");
    let mut worst = (0.0f32, 0usize);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let d = if x.is_nan() && y.is_nan() { 0.0 } else { (x - y).abs() };
        if d > worst.0 || d.is_nan() {
            worst = (if d.is_nan() { f32::INFINITY } else { d }, i);
        }
    }
    worst
}
