//! Adapter and device: which adapter, which limits (requested explicitly from the
//! adapter's), which optional features (used when present, never required), and the
//! sink that records uncaptured GPU errors instead of panicking.

use std::sync::{Arc, Mutex};

use kindling_model::{BackendFailure, ModelError, Result};

use crate::key::{coop_matrix_usable, ShaderFeatures};
use crate::tuning::{ATTN_COOP_WG, COOP_WORKGROUP_STORAGE};

/// How to pick and set up the GPU.
#[derive(Clone, Debug)]
pub struct GpuOptions {
    pub power_preference: wgpu::PowerPreference,
    /// Use the first adapter whose name contains this (case-insensitive; native only).
    pub adapter_name: Option<String>,
    /// Request SHADER_F16 / SUBGROUP when the adapter has them.
    pub allow_f16: bool,
    pub allow_subgroups: bool,
    /// Run the batch matmul and attention (prefill) on cooperative matrices (tensor
    /// cores) when the adapter has them (wgpu's experimental feature, native only): f16
    /// inputs, f32 sums. Off: the f32 kernels everywhere.
    pub allow_coop_matrix: bool,
    /// Run the decode matvecs over weight types with integer units (`has_int_units`:
    /// Q4_K, Q6_K, Q8_0, Q5_0, Q4_0, Q4_1) on integer dot products against their input
    /// quantized to 24 bits a value (shaders/matvec_int.wgsl): about twice the f32
    /// kernels' speed on an H100 at f32's accuracy (bench/results/h100-int-dot.md); and,
    /// where `allow_int_batch` too, the prefill matmul (shaders/matmul_int.wgsl).
    /// Off: the f32 kernels everywhere.
    pub allow_int_dot: bool,
    /// With `allow_int_dot`, run the batch matmul (prefill) on integer dot products too
    /// (shaders/matmul_int.wgsl) where the device has no cooperative matrices in use (the
    /// browser, lavapipe). Its own switch so the two batch kernels can be timed side by
    /// side (crates/gpu/examples/op_timing.rs: NO_INT_BATCH=1).
    pub allow_int_batch: bool,
    /// The integer-dot batch kernel's digits per activation value (1..=3; None:
    /// `tuning::INT_BATCH_DIGITS`, the f32 accuracy class). Fewer are faster and less
    /// accurate (one: llama.cpp's 8-bit activations): for measuring, not for use.
    pub int_batch_digits: Option<u32>,
    /// Run the integer-dot batch kernel on every weight type with integer units, not
    /// only where it measured faster than the f32 kernel (`tuning::int_batch_pays`): for
    /// the kernel tests and for timing each type.
    pub int_batch_every_type: bool,
    /// Split a batch matmul's dot products into spans where it has few output tiles
    /// (`tuning::split_k`; a second dispatch adds the spans' sums). Off: one workgroup
    /// per tile walks the whole row (the dispatch-count tests pin it so their figures
    /// do not depend on the shapes).
    pub allow_split_k: bool,
    /// Run large batches' matmuls as a panel of the weight dequantized once, then a GEMM
    /// with larger tiles over it (`tuning::WIDE_*`, wide.rs: f32 on the shader cores,
    /// f16 for gate and up on cooperative matrices) instead of matmul_tiled. Off:
    /// matmul_tiled for every batch (the dispatch-count tests pin it; op_timing's
    /// NO_WIDE=1 times the two).
    pub allow_wide_batch: bool,
    /// With `allow_wide_batch`, take every weight part as panels, not only those large
    /// enough to repay the dequantizing (`tuning::wide_weight_pays`): for the kernel tests,
    /// whose weights are small.
    pub wide_every_weight: bool,
    /// Submit a prompt chunk's work in parts while recording it
    /// (`tuning::PREFILL_FIRST_SUBMIT`), so the device starts before the host has
    /// recorded the whole chunk. Off: one submission per batch. On by default natively
    /// only: through Dawn the parts measured no faster (bench/results/qkv-submit-h200.md).
    pub submit_parts: bool,
    /// Let the decode matvec that reads a split attention's output (the o projection)
    /// merge the splits itself as it stages its input (`matvec_merged`), instead of an
    /// attn_combine dispatch before it: one dispatch a layer fewer past SPLIT_MIN_SPAN
    /// positions, but each of the matvec's workgroups merges the whole row. On by default
    /// in a browser only, where a dispatch costs the host most (Qwen2.5 decode through
    /// Dawn, the two builds in one process: 1.12-1.16x after 512 tokens, 1.00-1.12x after
    /// 4,096); natively it measured 1.01x and 0.93x (bench/results/merge-splits-h200.md).
    pub merge_splits_in_matvec: bool,
    /// Split weights into buffers of at most this many bytes even when the device
    /// allows more (tests exercise splitting on small models with it).
    pub max_part_bytes: Option<u64>,
    /// Keep the KV cache as f16 (half the memory and attention bandwidth; logits move
    /// by ~1e-2, see tests/gpu_e2e.rs) instead of f32 (the CPU engine's precision).
    pub kv_f16: bool,
    /// Time every dispatch on the device with timestamp queries where the adapter
    /// has them inside passes (native only; `GpuBackend::take_profile`). Each
    /// submission is then waited for, so the run itself is slower.
    pub profile: bool,
    /// Keep wgpu's run-time checks in the compiled shaders (native only; a browser
    /// applies its own whatever this says). Off by default: wgpu then neither counts
    /// every loop's iterations against a bound (`force_loop_bounding`) nor clamps
    /// indices into workgroup arrays and vectors, which made Qwen2.5-1.5B decode 9–13%
    /// faster and prefill 23% on an H100 (bench/results/h100-shader-checks.md).
    /// Safe because of what the host guarantees, not what the shader does: every loop
    /// and index in `shaders/` is bounded by parameters the backend derives from
    /// validated tensor shapes (a file cannot reach a dispatch with sizes that
    /// disagree); storage-buffer reads stay bounded by the driver's robust buffer
    /// access where the device has it (Vulkan, which wgpu turns on). Integer division
    /// keeps its zero-divisor guard (switching it off measured nothing). Turn the
    /// checks on to rule the shaders out when chasing a GPU fault.
    pub checked_shaders: bool,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            adapter_name: None,
            allow_f16: true,
            allow_subgroups: true,
            allow_coop_matrix: true,
            allow_int_dot: true,
            allow_int_batch: true,
            int_batch_digits: None,
            int_batch_every_type: false,
            allow_split_k: true,
            allow_wide_batch: true,
            wide_every_weight: false,
            submit_parts: !cfg!(target_arch = "wasm32"),
            merge_splits_in_matvec: cfg!(target_arch = "wasm32"),
            max_part_bytes: None,
            kv_f16: false,
            profile: false,
            checked_shaders: false,
        }
    }
}

/// What an adapter offers, for `kindling info` and logs.
#[derive(Clone, Debug)]
pub struct AdapterSummary {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub shader_f16: bool,
    pub subgroups: bool,
    pub subgroup_size: (u32, u32),
    /// Cooperative matrices in the configuration the batch kernels use
    /// (`key::coop_matrix_usable`), with what wgpu needs to offer them and the
    /// workgroup memory the kernels take.
    pub coop_matrix: bool,
    /// Every cooperative matrix configuration the adapter reports (wgpu lists them
    /// whether or not it offers the feature).
    pub coop_configs: Vec<wgpu::CooperativeMatrixProperties>,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroup_storage_size: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_storage_buffers_per_shader_stage: u32,
}

impl AdapterSummary {
    fn of(adapter: &wgpu::Adapter) -> Self {
        let info = adapter.get_info();
        let f = adapter.features();
        let l = adapter.limits();
        let coop_configs = adapter.cooperative_matrix_properties();
        AdapterSummary {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: format!("{} {}", info.driver, info.driver_info).trim().to_string(),
            shader_f16: f.contains(wgpu::Features::SHADER_F16),
            subgroups: f.contains(wgpu::Features::SUBGROUP),
            subgroup_size: (info.subgroup_min_size, info.subgroup_max_size),
            coop_matrix: f.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16)
                && coop_matrix_usable(&coop_configs)
                && l.max_compute_workgroup_storage_size >= COOP_WORKGROUP_STORAGE
                && l.max_compute_invocations_per_workgroup >= ATTN_COOP_WG as u32
                && l.max_compute_workgroup_size_x >= ATTN_COOP_WG as u32,
            coop_configs,
            max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
            max_buffer_size: l.max_buffer_size,
            max_compute_workgroup_storage_size: l.max_compute_workgroup_storage_size,
            max_compute_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
            max_storage_buffers_per_shader_stage: l.max_storage_buffers_per_shader_stage,
        }
    }
}

impl std::fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = |b: u64| b / (1 << 20);
        write!(
            f,
            "{} ({}, {}{}) shader-f16: {}, subgroups: {} (size {}..{}), cooperative matrices: {}, max storage binding {} MiB, \
             max buffer {} MiB, workgroup storage {} KiB, {} invocations, {} storage buffers/stage",
            self.name,
            self.backend,
            self.device_type,
            if self.driver.is_empty() { String::new() } else { format!(", {}", self.driver) },
            yes(self.shader_f16),
            yes(self.subgroups),
            self.subgroup_size.0,
            self.subgroup_size.1,
            yes(self.coop_matrix),
            mib(self.max_storage_buffer_binding_size),
            mib(self.max_buffer_size),
            self.max_compute_workgroup_storage_size / 1024,
            self.max_compute_invocations_per_workgroup,
            self.max_storage_buffers_per_shader_stage,
        )
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = instance_backends();
    wgpu::Instance::new(desc)
}

/// Every adapter wgpu can see here (natively: Vulkan/Metal/DX12; in a browser: WebGPU's).
pub async fn adapters_info() -> Vec<AdapterSummary> {
    let instance = instance();
    let mut out: Vec<AdapterSummary> =
        instance.enumerate_adapters(instance_backends()).await.iter().map(AdapterSummary::of).collect();
    if out.is_empty() {
        if let Ok(a) = instance.request_adapter(&wgpu::RequestAdapterOptions::default()).await {
            out.push(AdapterSummary::of(&a));
        }
    }
    out
}

/// Natively the compute-capable APIs (Vulkan, Metal, DX12); OpenGL is left out: its
/// compute support is patchy and probing it only prints noise on headless machines.
fn instance_backends() -> wgpu::Backends {
    if cfg!(target_arch = "wasm32") {
        wgpu::Backends::BROWSER_WEBGPU
    } else {
        wgpu::Backends::PRIMARY
    }
}

/// Ranks adapters for compute: real GPUs first, then backends with full compute
/// support (Vulkan/Metal/DX12 before GL).
fn rank(a: &wgpu::Adapter, pref: wgpu::PowerPreference) -> (u8, u8) {
    let info = a.get_info();
    let ty = match (info.device_type, pref) {
        (wgpu::DeviceType::DiscreteGpu, wgpu::PowerPreference::LowPower) => 1,
        (wgpu::DeviceType::IntegratedGpu, wgpu::PowerPreference::LowPower) => 0,
        (wgpu::DeviceType::DiscreteGpu, _) => 0,
        (wgpu::DeviceType::IntegratedGpu, _) => 1,
        (wgpu::DeviceType::VirtualGpu, _) => 2,
        (wgpu::DeviceType::Other, _) => 3,
        (wgpu::DeviceType::Cpu, _) => 4,
    };
    let backend = match info.backend {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 | wgpu::Backend::BrowserWebGpu => 0,
        _ => 1,
    };
    (backend, ty)
}

const NO_ADAPTER: &str = "no GPU adapter found (natively wgpu needs a Vulkan, Metal or DX12 driver; \
     on Debian/Ubuntu without a GPU install Mesa's CPU Vulkan driver: apt-get install mesa-vulkan-drivers libvulkan1)";

async fn pick_adapter(instance: &wgpu::Instance, options: &GpuOptions) -> Result<wgpu::Adapter> {
    let mut all = instance.enumerate_adapters(instance_backends()).await;
    all.retain(|a| a.get_downlevel_capabilities().flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS));
    if let Some(want) = &options.adapter_name {
        let want = want.to_lowercase();
        let names: Vec<String> = all.iter().map(|a| a.get_info().name).collect();
        return all
            .into_iter()
            .find(|a| a.get_info().name.to_lowercase().contains(&want))
            .ok_or_else(|| ModelError::backend(format!("no GPU adapter named like '{want}' (found: {names:?})")));
    }
    all.sort_by_key(|a| rank(a, options.power_preference));
    if let Some(a) = all.into_iter().next() {
        return Ok(a);
    }
    // The browser (and wgpu builds without enumeration) only answers request_adapter.
    instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: options.power_preference,
            ..Default::default()
        })
        .await
        .map_err(|e| ModelError::backend(format!("{NO_ADAPTER}: {e}")))
}

/// Errors the device reported outside any error scope, kept until the backend next
/// checks, each with its kind: wgpu's `Error::OutOfMemory` is an allocation failure;
/// a validation or internal error leaves the device's work undefined, as a lost
/// device does. A lost device stays lost: every later check reports it.
#[derive(Clone, Default)]
pub struct ErrorSink(Arc<Mutex<SinkState>>);

#[derive(Default)]
struct SinkState {
    errors: Vec<(BackendFailure, String)>,
    lost: Option<String>,
}

impl ErrorSink {
    pub fn take(&self) -> Option<ModelError> {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(lost) = &s.lost {
            let lost = lost.clone();
            s.errors.clear();
            return Some(ModelError::device_lost(lost));
        }
        if s.errors.is_empty() {
            return None;
        }
        let n = s.errors.len();
        let (kind, first) = s.errors.remove(0);
        s.errors.clear();
        let message = if n > 1 { format!("{first} (and {} more GPU errors)", n - 1) } else { first };
        Some(ModelError::Backend { kind, message })
    }

    fn push(&self, e: &wgpu::Error) {
        let kind = match e {
            wgpu::Error::OutOfMemory { .. } => BackendFailure::OutOfMemory,
            _ => BackendFailure::DeviceLost,
        };
        self.0.lock().unwrap_or_else(|e| e.into_inner()).errors.push((kind, format!("GPU error: {e}")));
    }

    fn lost(&self, reason: wgpu::DeviceLostReason, message: &str) {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        s.lost.get_or_insert_with(|| format!("the GPU device was lost ({reason:?}): {message}"));
    }
}

/// A device ready for the backend.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    pub limits: wgpu::Limits,
    pub features: wgpu::Features,
    pub errors: ErrorSink,
}

impl Gpu {
    pub async fn new(options: &GpuOptions) -> Result<Gpu> {
        let instance = instance();
        let adapter = pick_adapter(&instance, options).await?;
        let summary = AdapterSummary::of(&adapter);
        let a = adapter.limits();

        // Limits: WebGPU's defaults, raised to what the adapter offers for everything
        // the kernels and weight buffers depend on.
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: a.max_storage_buffer_binding_size,
            max_buffer_size: a.max_buffer_size,
            max_compute_workgroup_storage_size: a.max_compute_workgroup_storage_size,
            max_storage_buffers_per_shader_stage: a.max_storage_buffers_per_shader_stage,
            max_compute_invocations_per_workgroup: a.max_compute_invocations_per_workgroup,
            max_compute_workgroup_size_x: a.max_compute_workgroup_size_x,
            max_compute_workgroup_size_y: a.max_compute_workgroup_size_y,
            max_compute_workgroups_per_dimension: a.max_compute_workgroups_per_dimension,
            max_uniform_buffer_binding_size: a.max_uniform_buffer_binding_size,
            max_dynamic_uniform_buffers_per_pipeline_layout: a.max_dynamic_uniform_buffers_per_pipeline_layout,
            max_dynamic_storage_buffers_per_pipeline_layout: a.max_dynamic_storage_buffers_per_pipeline_layout,
            ..wgpu::Limits::default()
        };
        let needs = [
            ("maxStorageBuffersPerShaderStage", limits.max_storage_buffers_per_shader_stage as u64, 8),
            ("maxComputeInvocationsPerWorkgroup", limits.max_compute_invocations_per_workgroup as u64, 256),
            ("maxComputeWorkgroupStorageSize", limits.max_compute_workgroup_storage_size as u64, 16384),
            ("maxStorageBufferBindingSize", limits.max_storage_buffer_binding_size, 1 << 20),
        ];
        for (name, have, need) in needs {
            if have < need {
                return Err(ModelError::backend(format!(
                    "GPU adapter '{}' offers {name} = {have}, the kernels need at least {need}",
                    summary.name
                )));
            }
        }

        let mut features = wgpu::Features::empty();
        if options.allow_f16 && summary.shader_f16 {
            features |= wgpu::Features::SHADER_F16;
        }
        if options.allow_subgroups && summary.subgroups {
            features |= wgpu::Features::SUBGROUP;
        }
        let stamps = wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES;
        if options.profile && adapter.features().contains(stamps) {
            features |= stamps;
        }
        // Cooperative matrices only where the kernels would use them (for_device's rule:
        // the batch kernel also needs subgroups of 32).
        let (min_sg, max_sg) = summary.subgroup_size;
        let offered = options.allow_coop_matrix && options.allow_f16 && summary.coop_matrix;
        let coop = ShaderFeatures::for_device(features.contains(wgpu::Features::SUBGROUP), min_sg, max_sg, offered)
            .coop_matrix;
        let experimental = if coop {
            features |= wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
            // SAFETY: wgpu asks its users to acknowledge that experimental features may
            // have bugs. The one enabled here is used by the two batch kernels only
            // (shaders/matmul_coop.wgsl, attention_coop.wgsl), tested against the CPU on
            // the devices that have it, and `allow_coop_matrix: false` turns it off.
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("kindling"),
                required_features: features,
                required_limits: limits.clone(),
                experimental_features: experimental,
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|e| ModelError::backend(format!("cannot open GPU device on '{}': {e}", summary.name)))?;

        let errors = ErrorSink::default();
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| sink.push(&e)));
        let sink = errors.clone();
        device.set_device_lost_callback(move |reason, msg| sink.lost(reason, &msg));
        Ok(Gpu { device, queue, adapter: summary, limits, features, errors })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> wgpu::ErrorSource {
        Box::new(std::io::Error::other("test"))
    }

    #[test]
    fn sink_keeps_each_errors_kind_and_a_lost_device_stays_lost() {
        let sink = ErrorSink::default();
        assert!(sink.take().is_none());
        sink.push(&wgpu::Error::OutOfMemory { source: source() });
        sink.push(&wgpu::Error::Validation { source: source(), description: "bad".into() });
        let e = sink.take().expect("an error");
        assert_eq!(e.backend_failure(), Some(BackendFailure::OutOfMemory));
        assert!(e.to_string().contains("and 1 more"), "{e}");
        assert!(sink.take().is_none(), "taken");
        sink.push(&wgpu::Error::Internal { source: source(), description: "x".into() });
        assert_eq!(sink.take().and_then(|e| e.backend_failure()), Some(BackendFailure::DeviceLost));
        sink.lost(wgpu::DeviceLostReason::Destroyed, "gone");
        for _ in 0..2 {
            let e = sink.take().expect("lost");
            assert_eq!(e.backend_failure(), Some(BackendFailure::DeviceLost));
            assert!(e.to_string().contains("gone"), "{e}");
        }
    }
}
