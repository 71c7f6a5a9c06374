//! The cache of compiled shader modules, pipelines, bind group layouts and bind
//! groups, each created on first use from an op's table entry and kept.

use std::collections::HashMap;

use crate::key::{KernelKey, ModuleKey};
use crate::op_table::{Op, Slot, PARAMS_SLOT, ROW_TABLE_BYTES, TABLE_BYTES};

use Slot::{Params, Read, RowTable, Table, Write};

/// Most non-parameter buffers a kernel binds.
const MAX_BUFFERS: usize = 10;

/// Identifies a buffer of the backend's arena (bind groups are cached by these).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufId(pub u32);

/// Pipelines, layouts and bind groups, created on first use and kept.
#[derive(Default)]
pub struct Cache {
    modules: HashMap<ModuleKey, wgpu::ShaderModule>,
    layouts: HashMap<Op, (wgpu::BindGroupLayout, wgpu::PipelineLayout)>,
    pipelines: HashMap<KernelKey, wgpu::ComputePipeline>,
    bind_groups: HashMap<(Op, [BufId; MAX_BUFFERS]), wgpu::BindGroup>,
    /// Objects created so far (a test checks none is created in the token loop).
    pub created: u64,
    /// Shaders are compiled without wgpu's loop counters and index clamps: natively,
    /// unless `GpuOptions::checked_shaders` (a browser keeps its own checks anyway).
    trusted: bool,
}

impl Cache {
    /// An empty cache whose shaders keep wgpu's run-time checks or not
    /// (`GpuOptions::checked_shaders`).
    pub fn new(checked_shaders: bool) -> Self {
        Cache { trusted: !checked_shaders && !cfg!(target_arch = "wasm32"), ..Cache::default() }
    }

    fn layout(&mut self, device: &wgpu::Device, op: Op) -> &(wgpu::BindGroupLayout, wgpu::PipelineLayout) {
        let op = op.layout();
        if !self.layouts.contains_key(&op) {
            let entries: Vec<wgpu::BindGroupLayoutEntry> = op
                .bindings()
                .iter()
                .map(|&(binding, slot)| {
                    let (ty, has_dynamic_offset) = match slot {
                        Params => (wgpu::BufferBindingType::Uniform, true),
                        Read => (wgpu::BufferBindingType::Storage { read_only: true }, false),
                        Write => (wgpu::BufferBindingType::Storage { read_only: false }, false),
                        Table => (wgpu::BufferBindingType::Storage { read_only: true }, true),
                        RowTable => (wgpu::BufferBindingType::Uniform, true),
                    };
                    wgpu::BindGroupLayoutEntry {
                        binding,
                        visibility: wgpu::ShaderStages::COMPUTE,
                        ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset, min_binding_size: None },
                        count: None,
                    }
                })
                .collect();
            let label = format!("{op:?}");
            let bgl = device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(&label), entries: &entries });
            let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&label),
                bind_group_layouts: &[Some(&bgl)],
                immediate_size: 0,
            });
            self.created += 2;
            self.layouts.insert(op, (bgl, pl));
        }
        &self.layouts[&op]
    }

    /// The pipeline of a kernel, compiling it on first use.
    pub fn pipeline(&mut self, device: &wgpu::Device, key: KernelKey) -> wgpu::ComputePipeline {
        if let Some(p) = self.pipelines.get(&key) {
            return p.clone();
        }
        let mk = self.module(device, key);
        let layout = self.layout(device, key.op).1.clone();
        let label = format!("{key:?}");
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&label),
            layout: Some(&layout),
            module: &self.modules[&mk],
            entry_point: Some(key.op.entry_point()),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        });
        self.created += 1;
        self.pipelines.insert(key, pipeline.clone());
        pipeline
    }

    /// The shader module of a kernel (shared by the keys that differ only in their
    /// pipeline), compiling it on first use; returns its cache key.
    pub fn module(&mut self, device: &wgpu::Device, key: KernelKey) -> ModuleKey {
        let mk = key.module_key();
        if !self.modules.contains_key(&mk) {
            let label = format!("{:?} {:?} {:?}", mk.0, mk.1, mk.2);
            let desc = wgpu::ShaderModuleDescriptor {
                label: Some(&label),
                source: wgpu::ShaderSource::Wgsl(key.source().into()),
            };
            let module = if self.trusted {
                let mut checks = wgpu::ShaderRuntimeChecks::checked();
                checks.bounds_checks = false;
                checks.force_loop_bounding = false;
                // SAFETY: see GpuOptions::checked_shaders: the loops and indices of
                // every kernel are bounded by parameters derived from validated shapes.
                unsafe { device.create_shader_module_trusted(desc, checks) }
            } else {
                device.create_shader_module(desc)
            };
            self.created += 1;
            self.modules.insert(mk, module);
        }
        mk
    }

    /// The bind group of `op` over `bufs` (filling its non-parameter slots in order),
    /// created on first use. `params` is the parameter blob buffer.
    pub fn bind_group(
        &mut self,
        device: &wgpu::Device,
        op: Op,
        bufs: &[BufId],
        arena: &[wgpu::Buffer],
        params: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let mut ids = [BufId(u32::MAX); MAX_BUFFERS];
        ids[..bufs.len()].copy_from_slice(bufs);
        let key = (op.layout(), ids);
        if let Some(bg) = self.bind_groups.get(&key) {
            return bg.clone();
        }
        let layout = self.layout(device, op).0.clone();
        let mut next = bufs.iter();
        let entries: Vec<wgpu::BindGroupEntry> = op
            .bindings()
            .iter()
            .map(|&(binding, slot)| {
                let resource = match slot {
                    Params => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: params,
                        offset: 0,
                        size: wgpu::BufferSize::new(PARAMS_SLOT),
                    }),
                    Table => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: params,
                        offset: 0,
                        size: wgpu::BufferSize::new(TABLE_BYTES),
                    }),
                    RowTable => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: params,
                        offset: 0,
                        size: wgpu::BufferSize::new(ROW_TABLE_BYTES),
                    }),
                    Read | Write => {
                        let id = next.next().copied().unwrap_or(BufId(0));
                        arena[id.0 as usize].as_entire_binding()
                    }
                };
                wgpu::BindGroupEntry { binding, resource }
            })
            .collect();
        let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(op.entry_point()),
            layout: &layout,
            entries: &entries,
        });
        self.created += 1;
        self.bind_groups.insert(key, bg.clone());
        bg
    }
}
