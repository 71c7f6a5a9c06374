//! What the Vulkan driver makes of a kernel: registers, spills, shared memory and the
//! like, as the driver reports them through VK_KHR_pipeline_executable_properties
//! (NVIDIA's does). wgpu shows none of it, and a kernel bound by latency rather than
//! arithmetic (the cooperative-matrix attention, bench/results/coop-panels-h200.md) is
//! shaped by how many of its workgroups fit on a multiprocessor.
//!
//! `cargo run --release -p kindling-gpu --example pipeline_stats [NAME_FILTER]` prints the
//! statistics of the prefill kernels whose names contain the filter, as a device with
//! cooperative matrices runs them and as a browser does (`engine_kernels`);
//! `WGSL=FILE ENTRY=NAME` compiles that module's entry point instead (a candidate kernel,
//! e.g. `kindling shaders --key K` edited by hand). With `SPV=FILE` beside them, the
//! driver gets that SPIR-V binary instead of naga's (e.g. Tint's, from Dawn's
//! `dump_shaders` assembled by spirv-as), its bindings those of the WGSL numbered 0.. in
//! order, as Dawn numbers them.
//!
//! The SPIR-V comes from naga as wgpu's Vulkan backend writes it for trusted modules
//! (SPIR-V 1.6, no bounds checks), through a device wgpu-hal opens with the extension
//! added.
#![cfg(not(target_arch = "wasm32"))]

mod probe_util;

use ash::vk;
use kindling_gguf::GgmlType;
use kindling_gpu::{KernelKey, Op, ShaderFeatures, INT_BATCH_DIGITS};
use wgpu::hal::api::Vulkan;

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let sources: Vec<(String, String, String)> = match (std::env::var("WGSL"), std::env::var("ENTRY")) {
        (Ok(file), Ok(entry)) => {
            vec![(file.clone(), std::fs::read_to_string(&file).expect("read WGSL"), entry)]
        }
        _ => engine_kernels().into_iter().filter(|(name, _, _)| name.contains(&filter)).collect(),
    };
    let adapter = probe_util::vulkan_adapter();
    let features = adapter.features();
    // SAFETY: reading the physical device's extension list through the instance wgpu made.
    let listed = unsafe {
        let hal = adapter.as_hal::<Vulkan>().expect("Vulkan adapter");
        let raw = hal.shared_instance().raw_instance();
        raw.enumerate_device_extension_properties(hal.raw_physical_device())
            .unwrap_or_default()
            .iter()
            .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == ash::khr::pipeline_executable_properties::NAME))
    };
    if !listed {
        // Still worth something: every module goes through naga's SPIR-V writer.
        println!("the driver lists no VK_KHR_pipeline_executable_properties: SPIR-V only");
        for (name, wgsl, entry) in sources {
            match spirv(&wgsl, &entry) {
                Ok((words, _)) => println!("{name}: {} SPIR-V words", words.len()),
                Err(e) => println!("{name}: {e}"),
            }
        }
        return;
    }
    let mut exec_features =
        vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default().pipeline_executable_info(true);
    // SAFETY: the callback only adds an extension the driver lists (checked below by
    // device creation failing otherwise) and its feature struct, which outlives the call.
    let open = unsafe {
        let hal = adapter.as_hal::<Vulkan>().expect("Vulkan adapter");
        hal.open_with_callback(
            features,
            &adapter.limits(),
            &wgpu::MemoryHints::Performance,
            Some(Box::new(|args: wgpu::hal::vulkan::CreateDeviceCallbackArgs| {
                args.extensions.push(ash::khr::pipeline_executable_properties::NAME);
                *args.create_info = args.create_info.push_next(&mut exec_features);
            })),
        )
    }
    .expect("device with VK_KHR_pipeline_executable_properties");
    let device = open.device.raw_device().clone();
    let ash_instance = open.device.shared_instance().raw_instance().clone();
    let props = ash::khr::pipeline_executable_properties::Device::new(&ash_instance, &device);
    for (name, wgsl, entry) in sources {
        match compile(&device, &props, &wgsl, &entry) {
            Ok(stats) => println!("{name}: {stats}"),
            Err(e) => println!("{name}: {e}"),
        }
    }
}

/// The prefill kernels as the engine builds them by default (an f32 KV cache) on a device
/// with cooperative matrices and subgroups of 32, then as a browser gets them (no
/// subgroups, no f16: `--no-subgroups --no-f16` natively): (name, WGSL, entry point).
fn engine_kernels() -> Vec<(String, String, String)> {
    let native = ShaderFeatures { subgroup_size: 32, coop_matrix: true, ..Default::default() };
    let browser = ShaderFeatures { int_batch: INT_BATCH_DIGITS, ..Default::default() };
    let native_keys = [
        KernelKey::new(Op::AttentionTiled, None),
        KernelKey::new(Op::MatmulTiled, Some(GgmlType::Q4K)),
        KernelKey::new(Op::MatmulTiled, Some(GgmlType::Q6K)),
        KernelKey::new(Op::MatmulWide, Some(GgmlType::Q4K)),
        KernelKey::new(Op::DequantRows, Some(GgmlType::Q4K)),
        KernelKey::new(Op::MatmulSplitSum, Some(GgmlType::Q4K)),
        KernelKey::new(Op::AttnCombine, None),
        KernelKey::new(Op::RmsNorm, None),
    ];
    // Q4_K's batch matmul on integer dot products where its weights take no panels (q, k,
    // v, o on the 1.5B), Q6_K's in f32; the panels' GEMM in f32.
    let browser_keys = [
        KernelKey::new(Op::AttentionTiled, None),
        KernelKey::new(Op::MatmulTiled, Some(GgmlType::Q4K)).with_int_batch(1536),
        KernelKey::new(Op::MatmulTiled, Some(GgmlType::Q6K)),
        KernelKey::new(Op::MatmulWide, Some(GgmlType::Q4K)),
        KernelKey::new(Op::DequantRows, Some(GgmlType::Q4K)),
        KernelKey::new(Op::QuantizeRuns, Some(GgmlType::Q4K)),
    ];
    let native = native_keys.iter().map(|k| k.with_features(native));
    let browser = browser_keys.iter().map(|k| k.with_features(browser));
    native.chain(browser).map(|k| (k.name(), k.source(), k.op.spec().entry_point.to_string())).collect()
}

/// The module as naga's SPIR-V writer emits it for wgpu's Vulkan backend, and the parsed
/// module (for its bindings).
fn spirv(wgsl: &str, entry: &str) -> Result<(Vec<u32>, naga::Module), String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| format!("{e:?}"))?;
    let options = naga::back::spv::Options {
        lang_version: (1, 6),
        bounds_check_policies: naga::proc::BoundsCheckPolicies::default(),
        ..Default::default()
    };
    let pipeline_options =
        naga::back::spv::PipelineOptions { shader_stage: naga::ShaderStage::Compute, entry_point: entry.to_string() };
    let words =
        naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline_options)).map_err(|e| format!("{e}"))?;
    Ok((words, module))
}

/// Compiles one entry point with statistics captured; returns them on one line.
fn compile(
    device: &ash::Device,
    props: &ash::khr::pipeline_executable_properties::Device,
    wgsl: &str,
    entry: &str,
) -> Result<String, String> {
    let (mut words, module) = spirv(wgsl, entry)?;
    let given = std::env::var("SPV").ok();
    if let Some(file) = &given {
        let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        words = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    }
    // The entry point's name in the module: Dawn's modules call theirs dawn_entry_point.
    let entry = if given.is_some() {
        std::env::var("SPV_ENTRY").unwrap_or_else(|_| entry.to_string())
    } else {
        entry.to_string()
    };
    // One set layout per group the module binds: storage buffers, or the uniform.
    let mut groups: std::collections::BTreeMap<u32, Vec<vk::DescriptorSetLayoutBinding>> = Default::default();
    let mut bound: Vec<_> =
        module.global_variables.iter().filter_map(|(_, v)| v.binding.map(|b| (b, v.space))).collect();
    bound.sort_by_key(|(b, _)| (b.group, b.binding));
    for (i, (rb, space)) in bound.into_iter().enumerate() {
        let ty = match space {
            naga::AddressSpace::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
            _ => vk::DescriptorType::STORAGE_BUFFER,
        };
        let binding = if given.is_some() { i as u32 } else { rb.binding };
        groups.entry(rb.group).or_default().push(
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding)
                .descriptor_type(ty)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
        );
    }
    let max_group = groups.keys().max().copied().map_or(0, |g| g + 1);
    // SAFETY: plain Vulkan object creation on a live device; everything made here is
    // destroyed before returning.
    unsafe {
        let mut layouts = Vec::new();
        for g in 0..max_group {
            let bindings = groups.get(&g).cloned().unwrap_or_default();
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
            layouts.push(device.create_descriptor_set_layout(&info, None).map_err(|e| format!("{e}"))?);
        }
        let layout = device
            .create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts), None)
            .map_err(|e| format!("{e}"))?;
        let shader = device
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
            .map_err(|e| format!("{e}"))?;
        let name = std::ffi::CString::new(entry.as_str()).expect("entry name");
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(shader)
            .name(&name);
        let create = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout)
            .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR);
        let made = device.create_compute_pipelines(vk::PipelineCache::null(), &[create], None);
        let result = match made {
            Ok(pipelines) => {
                let out = describe(props, pipelines[0]);
                device.destroy_pipeline(pipelines[0], None);
                out
            }
            Err((_, e)) => Err(format!("pipeline creation failed: {e}")),
        };
        device.destroy_shader_module(shader, None);
        device.destroy_pipeline_layout(layout, None);
        for l in layouts {
            device.destroy_descriptor_set_layout(l, None);
        }
        result
    }
}

/// Every statistic of every executable of a pipeline, `name=value` on one line.
///
/// # Safety
/// `pipeline` was created with CAPTURE_STATISTICS on the device `props` was made for.
unsafe fn describe(
    props: &ash::khr::pipeline_executable_properties::Device,
    pipeline: vk::Pipeline,
) -> Result<String, String> {
    let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
    // SAFETY: as the caller promises.
    let executables = unsafe { props.get_pipeline_executable_properties(&info) }.map_err(|e| format!("{e}"))?;
    let mut parts = Vec::new();
    for index in 0..executables.len() as u32 {
        let exec = vk::PipelineExecutableInfoKHR::default().pipeline(pipeline).executable_index(index);
        // SAFETY: as above; the index is one the driver listed.
        let stats = unsafe { props.get_pipeline_executable_statistics(&exec) }.map_err(|e| format!("{e}"))?;
        for s in stats {
            let name = s.name_as_c_str().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            // SAFETY: the union member read is the one `format` names.
            let value = unsafe {
                match s.format {
                    vk::PipelineExecutableStatisticFormatKHR::BOOL32 => format!("{}", s.value.b32),
                    vk::PipelineExecutableStatisticFormatKHR::INT64 => format!("{}", s.value.i64),
                    vk::PipelineExecutableStatisticFormatKHR::UINT64 => format!("{}", s.value.u64),
                    vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => format!("{:.2}", s.value.f64),
                    _ => "?".to_string(),
                }
            };
            parts.push(format!("{name}={value}"));
        }
    }
    Ok(parts.join(", "))
}
