//! The GPU backend: `Backend` on wgpu, natively (Vulkan/Metal/DX12) and in the
//! browser (WebGPU). Kernels are the WGSL files of `shaders/`, specialised per weight
//! type by a typed key (`KernelKey`) and compiled once.
//!
//! Execution: ops record dispatches into one command encoder and one compute pass held
//! across op calls. Each op's parameters go into a host-side blob that is written with
//! one `queue.write_buffer` per submission and bound as a uniform with a dynamic offset,
//! so bind groups depend only on buffers and are created once. `begin_batch` uploads
//! the token ids (submitting the previous batch's work first if any); reads end the
//! pass, copy into a staging buffer and submit once. A greedy decode step is therefore
//! one submission and a 4-byte readback (`GpuStats` counts both).
//!
//! Peephole fusion (`Pending`): an op is held back until the next one arrives, so
//! sequences the forward pass always emits take one dispatch: a matmul and the residual
//! add of its output; decode matvecs over one input with weights of one type and width
//! (q/k/v: `matvec_multi`, v's weight may be of another type; gate/up followed by the
//! gated activation: `matvec_gated`, gate and up themselves not written); the q/k norms
//! and rope with the KV-cache store of the attention after them (`qk_rope`), and in
//! decode all of that inside the attention itself (`attention_rope`).
//!
//! Weights stay quantized: rows are repacked at upload so each block starts on a word
//! (`weights.rs`), tensors larger than the storage binding limit are split by rows, and
//! one-row tensors (norm weights, RoPE factors) are widened to f32.

mod catalog;
mod chain;
mod device;
mod fusion;
mod key;
mod loop_bounds;
mod op_table;
mod ops;
mod params;
mod pipelines;
mod profile;
mod readback;
mod rope_table;
mod shaders;
mod tuning;
mod weights;
mod wide;

use std::collections::HashMap;
use std::sync::Arc;

use bytemuck::Pod;
use kindling_gguf::GgmlType;
use kindling_model::{
    Activation, AttentionParams, Backend, BackendFailure, Counters, KernelTime, KvSpec, ModelError, QkRope, Result,
    RopeConfig, RopeStyle, WeightSpec,
};

pub use catalog::{every_variant, find as find_variant, Variant};
pub use device::{adapters_info, AdapterSummary, GpuOptions};
pub use key::{KernelKey, ShaderFeatures};
pub use op_table::{Family, Module, Op, OpSpec, Slot, OPS};
pub use tuning::{
    int_batch_pays, matvec_lanes, wide_gated_pays, wide_panel_bytes, wide_weight_pays, PanelForm, Tuning,
    INT_BATCH_DIGITS, MATVEC_MAX_ROWS, WIDE_MIN_ROWS,
};
pub use weights::{stored_row_bytes, GpuWeight, Part};

/// Bytes of one layer's k (or v) cache buffer of `capacity` positions × `width` values, as
/// `alloc_kv_cache` makes it (the browser's fits-check counts it with this): f32 values or
/// f16 pairs, rounded up to whole 16 bytes, since the kernels read four values a load (a
/// vec4 of f32, or a pair of words of f16 pairs).
pub fn kv_cache_buffer_bytes(capacity: usize, width: usize, f16: bool) -> u64 {
    (capacity as u64 * width as u64 * if f16 { 2 } else { 4 }).next_multiple_of(16)
}

use device::Gpu;
use fusion::{
    same_parts, AttentionRopeBuffers, KvStoreTarget, NormIn, Pending, PendingMatmul, PendingMerge, PendingNorm,
    PendingQkRope, ATTENTION_ROPE_STORAGE_BUFFERS,
};
use op_table::{PARAMS_SLOT, TABLE_BYTES};
use params::{
    ArgmaxParams, AttnParams, EmbedParams, EwParams, MatmulParams, NormParams, QuantParams, RopeParams, TopKParams,
};
use pipelines::{BufId, Cache};
use rope_table::{rope_table, BatchRopeTable};
use tuning::*;

/// What the backend has done, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuStats {
    /// Command submissions of recorded ops and reads (weight uploads not included).
    pub submits: u64,
    /// Compute dispatches recorded.
    pub dispatches: u64,
    /// Bytes copied back to the host by reads.
    pub bytes_read_back: u64,
    /// Microseconds reads spent waiting for the device (natively).
    pub wait_us: u64,
    /// Submissions made only to flush weight uploads.
    pub upload_submits: u64,
    /// Parts of a batch submitted while it was still being recorded
    /// (`tuning::PREFILL_FIRST_SUBMIT`; not counted in `submits`).
    pub part_submits: u64,
    /// GPU objects created (buffers, pipelines, layouts, bind groups): constant in the
    /// token loop once the first token has run.
    pub objects_created: u64,
    /// Decode matvecs that read their input as the gate/up kernel before them left it,
    /// quantized (`MatmulParams::qx_runs`), instead of staging it themselves.
    pub input_staged_matvecs: u64,
    /// Decode matvecs (the o projection) that merged the attention's splits themselves
    /// as they staged their input, in place of an attn_combine dispatch before them.
    pub merged_matvecs: u64,
    /// Batch matmuls (prefill) recorded on integer dot products (shaders/matmul_int.wgsl).
    pub int_batch_matmuls: u64,
    /// Batch matmuls over two or three weights at once (a layer's q, k and v:
    /// `MatmulParams::multi`).
    pub multi_batch_matmuls: u64,
    /// Batch matmuls whose dot products were split into spans (`tuning::split_k`).
    pub split_batch_matmuls: u64,
    /// Of those, the ones whose sums took the RMS norm after them in
    /// (`matmul_split_sum_norm`).
    pub split_sums_normed: u64,
    /// Inputs of integer-dot batch matmuls quantized (quantize_runs dispatches).
    pub batch_inputs_quantized: u64,
    /// Batch matmuls (weight parts) run as dequantized panels (wide.rs).
    pub wide_batch_matmuls: u64,
    /// Panels of weight rows dequantized for them (dequant_rows dispatches).
    pub panels_dequantized: u64,
}

/// Handle of an activation matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuActivation(u32);

/// One layer's key and value cache on the GPU, `[capacity, width]` f32 each.
pub struct GpuKvCache {
    k: BufId,
    v: BufId,
    spec: KvSpec,
}

struct ActInfo {
    buf: BufId,
    capacity: usize,
    cols: usize,
}

/// Repacked weight rows waiting for one `write_buffer` into a part.
#[derive(Default)]
struct UploadStage {
    part: usize,
    first_row: usize,
    bytes: Vec<u8>,
}

pub struct GpuBackend {
    gpu: Gpu,
    buffers: Vec<wgpu::Buffer>,
    acts: Vec<ActInfo>,
    cache: Cache,
    /// The parameter blob's buffer (uniform + storage), and its host copy.
    params: BufId,
    blob: Vec<u8>,
    /// The batch's RoPE tables, each with its offset in this submission's blob.
    rope_tables: Vec<BatchRopeTable>,
    encoder: Option<wgpu::CommandEncoder>,
    pass: Option<wgpu::ComputePass<'static>>,
    /// Token ids of the batch (`[max rows]` u32), argmax results (`[max rows]` u32).
    tokens: BufId,
    argmax: BufId,
    /// Each row's sequence's rows, first and end (`[max rows, 2]` u32), written by
    /// `begin_packed_batch` and read by attention and add_positions in a packed batch.
    spans: BufId,
    /// Rows the tokens / argmax / spans buffers hold.
    max_rows: usize,
    staging: Option<wgpu::Buffer>,
    n_tokens: usize,
    start_pos: usize,
    /// The spans of a packed batch's rows as written to `spans`; empty for a batch of
    /// one sequence from `start_pos`.
    packed: Vec<[u32; 2]>,
    upload: UploadStage,
    uploaded_since_flush: u64,
    max_part_bytes: u64,
    weight_bytes: u64,
    /// The op not recorded yet (see `Pending`).
    pending: Option<Pending>,
    /// 16-byte buffers bound where a kernel's optional output (`dummy`) or input
    /// (`dummy_read`) is unused: one buffer cannot be both read-only and writable in a
    /// dispatch. (matmul_tiled's unused split sums take `dummy_read`: its residual may
    /// already be `dummy`.)
    dummy: BufId,
    dummy_read: BufId,
    /// The quantized runs (`MatmulParams::qx_runs`) each gate/up activation buffer has
    /// had written, by activation buffer and row width.
    qx_bufs: HashMap<(BufId, u32), BufId>,
    /// (activation buffer, its runs) where the last dispatch recorded was a gate/up
    /// kernel that also wrote its output quantized: the matvec recorded next may read
    /// them (`record_matmul`); any other dispatch clears it.
    qx_ready: Option<(BufId, BufId)>,
    /// Chained greedy steps being read back (see chain.rs).
    chain: chain::Chain,
    /// The kernel variants this device runs (subgroup reductions where it can).
    shader_features: ShaderFeatures,
    /// `GpuOptions::int_batch_every_type`.
    int_batch_every_type: bool,
    /// `GpuOptions::allow_split_k`.
    allow_split_k: bool,
    /// `GpuOptions::allow_wide_batch`.
    allow_wide_batch: bool,
    /// `GpuOptions::wide_every_weight`.
    wide_every_weight: bool,
    /// matmul_wide's dequantized weight panel (f32, or f16 on cooperative matrices) and
    /// its bytes (grown on first need).
    wide_panel: Option<(BufId, u64)>,
    /// The top-k chunk candidates and top_k_rows' results, and their bytes (grown on
    /// first use).
    top_k_part: Option<(BufId, u64)>,
    top_k_out: Option<(BufId, u64)>,
    /// Constrained decoding's allowed-token bitmask (`chain_submit_masked`) and its bytes.
    token_mask: Option<(BufId, u64)>,
    /// Attention's split scratch (`[rows, heads, splits, SPLIT_HEAD + head_dim]` f32) and its bytes.
    attn_scratch: Option<(BufId, u64)>,
    /// The batch matmul's partial sums of split dot products (`[splits, rows, weight
    /// rows]` f32) and its bytes (grown on first need).
    split_sums: Option<(BufId, u64)>,
    /// The integer-dot batch matmul's input as quantize_runs leaves it
    /// (`[rows, k / 16, digits + 1]` vec4s) and its bytes.
    batch_qx: Option<(BufId, u64)>,
    /// What `batch_qx` holds while nothing else has been recorded since the batch matmul
    /// that quantized it: (x, rows, values per row, row stride, digits). Another matmul
    /// over the same input (q, k and v; a weight's parts) reads it again.
    batch_qx_of: Option<(BufId, u32, u32, u32, u32)>,
    /// Timestamps around every dispatch (`GpuOptions::profile`).
    profiler: Option<profile::Profiler>,
    /// Dispatches recorded since the last submission, and after how many a batch's
    /// work is submitted before the batch ends (PREFILL_FIRST_SUBMIT; 0: only at its
    /// end, as for a decode step).
    recorded_since_submit: u32,
    submit_after: u32,
    /// `GpuOptions::submit_parts`.
    submit_parts: bool,
    /// `GpuOptions::merge_splits_in_matvec`.
    merge_splits_in_matvec: bool,
    /// An op that could not be recorded; returned by the next read.
    deferred: Option<ModelError>,
    stats: GpuStats,
}

/// Frees the GPU memory at once: in a browser, dropping a wgpu buffer or device only
/// lets JavaScript's garbage collector free it some time later, so a disposed or
/// aborted model would hold its weights until then.
impl Drop for GpuBackend {
    fn drop(&mut self) {
        self.pass = None;
        self.encoder = None;
        for b in &self.buffers {
            b.destroy();
        }
        if let Some(s) = &self.staging {
            s.destroy();
        }
        self.chain.destroy();
        self.gpu.device.destroy();
    }
}

fn err(msg: impl Into<String>) -> ModelError {
    ModelError::backend(msg)
}

impl GpuBackend {
    /// Opens the GPU (natively: block on it with `pollster::block_on`).
    pub async fn new(options: GpuOptions) -> Result<Self> {
        let gpu = Gpu::new(&options).await?;
        let limits = &gpu.limits;
        let mut max_part_bytes = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        if let Some(m) = options.max_part_bytes {
            max_part_bytes = max_part_bytes.min(m.max(4));
        }
        max_part_bytes &= !3;
        let mut b = GpuBackend {
            gpu,
            buffers: Vec::new(),
            acts: Vec::new(),
            cache: Cache::new(options.checked_shaders),
            params: BufId(0),
            blob: Vec::with_capacity(BLOB_BYTES as usize),
            rope_tables: Vec::new(),
            encoder: None,
            pass: None,
            tokens: BufId(0),
            argmax: BufId(0),
            spans: BufId(0),
            max_rows: 0,
            staging: None,
            n_tokens: 0,
            start_pos: 0,
            packed: Vec::new(),
            upload: UploadStage::default(),
            uploaded_since_flush: 0,
            max_part_bytes,
            weight_bytes: 0,
            attn_scratch: None,
            split_sums: None,
            batch_qx: None,
            batch_qx_of: None,
            top_k_part: None,
            top_k_out: None,
            token_mask: None,
            shader_features: ShaderFeatures::default(),
            int_batch_every_type: false,
            allow_split_k: true,
            allow_wide_batch: true,
            wide_every_weight: false,
            wide_panel: None,
            chain: chain::Chain::default(),
            pending: None,
            dummy: BufId(0),
            qx_bufs: HashMap::new(),
            qx_ready: None,
            dummy_read: BufId(0),
            profiler: None,
            recorded_since_submit: 0,
            submit_after: 0,
            submit_parts: true,
            merge_splits_in_matvec: false,
            deferred: None,
            stats: GpuStats::default(),
        };
        if b.gpu.features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES) && !cfg!(target_arch = "wasm32") {
            b.profiler = Some(profile::Profiler::new(&b.gpu.device, &b.gpu.queue));
        }
        let a = &b.gpu.adapter;
        let subgroups = b.gpu.features.contains(wgpu::Features::SUBGROUP);
        let coop = b.gpu.features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
        let int_runs =
            if options.allow_int_dot { int_runs_capacity(b.gpu.limits.max_compute_workgroup_storage_size) } else { 0 };
        let device = ShaderFeatures::for_device(subgroups, a.subgroup_size.0, a.subgroup_size.1, coop);
        // The integer-dot batch matmul where the batch kernel is not on cooperative
        // matrices and its staging fits the workgroup memory.
        let digits = options.int_batch_digits.unwrap_or(INT_BATCH_DIGITS).clamp(1, 3);
        let fits = b.gpu.limits.max_compute_workgroup_storage_size >= int_batch_storage(digits);
        let int_batch =
            if options.allow_int_dot && options.allow_int_batch && !device.coop_matrix && fits { digits } else { 0 };
        b.shader_features = ShaderFeatures { kv_f16: options.kv_f16, int_runs, int_batch, ..device };
        b.int_batch_every_type = options.int_batch_every_type;
        b.allow_split_k = options.allow_split_k;
        b.allow_wide_batch = options.allow_wide_batch;
        b.wide_every_weight = options.wide_every_weight;
        b.submit_parts = options.submit_parts;
        b.merge_splits_in_matvec = options.merge_splits_in_matvec;
        let uniform = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        b.params = b.create_buffer("params", BLOB_BYTES + TABLE_BYTES, uniform)?;
        b.dummy = b.storage_buffer("dummy", 16)?;
        b.dummy_read = b.storage_buffer("dummy (read)", 16)?;
        b.grow_row_buffers(64)?;
        Ok(b)
    }

    /// The adapter in use.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.gpu.adapter
    }

    /// The kernel variants in use.
    pub fn shader_features(&self) -> ShaderFeatures {
        self.shader_features
    }

    /// Optional features the device was opened with.
    pub fn features(&self) -> wgpu::Features {
        self.gpu.features
    }

    pub fn stats(&self) -> GpuStats {
        GpuStats { objects_created: self.stats.objects_created + self.cache.created, ..self.stats }
    }

    /// Bytes of weight buffers allocated.
    pub fn weight_bytes(&self) -> u64 {
        self.weight_bytes
    }

    /// Compiles every kernel for the given weight types (a pipeline is otherwise
    /// compiled at its first use) and returns the first GPU error, if any.
    pub fn compile_all(&mut self, types: &[GgmlType]) -> Result<()> {
        for key in KernelKey::all(types) {
            self.cache.pipeline(&self.gpu.device, key.with_features(self.shader_features));
        }
        self.check_errors()
    }

    /// Compiles the shader modules of these kernels, in this device's variants (as
    /// `compile_all` does), each inside its own validation and internal error scopes, and
    /// waits for the device's verdict on every one: the WGSL compiler's (in a browser,
    /// tint's full validation). Pipelines are not created: on a software adapter
    /// (SwiftShader) that is a machine-code compile of ~1.3 s each, and the kernels a
    /// model uses are built and run by the other tests. In a browser these errors arrive
    /// asynchronously, after `compile_all` has returned; here each is caught by its
    /// module's scope (so it never reaches the error sink) and reported with the kernel's
    /// name. Returns how many distinct modules were compiled, or every error.
    pub async fn check_shader_modules(&mut self, keys: &[KernelKey]) -> Result<usize> {
        let mut seen = std::collections::HashSet::new();
        let mut verdicts = Vec::new();
        for key in keys {
            let key = key.with_features(self.shader_features);
            if !seen.insert(key.module_key()) {
                continue;
            }
            let internal = self.gpu.device.push_error_scope(wgpu::ErrorFilter::Internal);
            let validation = self.gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
            self.cache.module(&self.gpu.device, key);
            verdicts.push((key, validation.pop(), internal.pop()));
        }
        let mut errors = Vec::new();
        for (key, validation, internal) in verdicts {
            for e in [validation.await, internal.await].into_iter().flatten() {
                errors.push(format!("{}: {e}", key.name()));
            }
        }
        if !errors.is_empty() {
            return Err(err(format!("{} kernel compile errors:\n{}", errors.len(), errors.join("\n"))));
        }
        self.check_errors()?;
        Ok(seen.len())
    }

    fn check_errors(&self) -> Result<()> {
        match self.gpu.errors.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    // ---- buffers ------------------------------------------------------------------

    fn create_buffer(&mut self, label: &str, size: u64, usage: wgpu::BufferUsages) -> Result<BufId> {
        let limit = self.gpu.limits.max_buffer_size;
        if size > limit {
            return Err(ModelError::out_of_memory(format!(
                "{label}: {size} bytes do not fit the device: its largest buffer is {limit} bytes"
            )));
        }
        let buffer = self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            // Whole vec4s: the matmul family reads activations and norm weights as
            // array<vec4<f32>>, whose last element must be inside the binding.
            size: size.max(16).next_multiple_of(16),
            usage,
            mapped_at_creation: false,
        });
        // Natively an allocation failure is reported at once (in a browser it arrives
        // later, through the same sink, and is reported by the next check).
        if let Some(e) = self.gpu.errors.take() {
            let kind = e.backend_failure().unwrap_or(BackendFailure::Other);
            return Err(ModelError::Backend {
                kind,
                message: format!("{label}: cannot allocate {size} bytes on the GPU: {e}"),
            });
        }
        self.buffers.push(buffer);
        self.stats.objects_created += 1;
        Ok(BufId(self.buffers.len() as u32 - 1))
    }

    fn storage_buffer(&mut self, label: &str, size: u64) -> Result<BufId> {
        let limit = self.gpu.limits.max_storage_buffer_binding_size;
        if size > limit {
            return Err(ModelError::out_of_memory(format!(
                "{label}: {size} bytes do not fit the device: its largest storage binding is {limit} bytes; \
                 use a smaller batch or context"
            )));
        }
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        self.create_buffer(label, size, usage)
    }

    /// Makes the token-id and argmax buffers hold `rows` rows.
    fn grow_row_buffers(&mut self, rows: usize) -> Result<()> {
        if rows > self.max_rows {
            self.tokens = self.storage_buffer("token ids", rows as u64 * 4)?;
            // (id, value) per row when the argmax runs as a top-1 (`record_argmax`).
            self.argmax = self.storage_buffer("argmax", rows as u64 * 8)?;
            self.spans = self.storage_buffer("row spans", rows as u64 * 8)?;
            self.max_rows = rows;
        }
        Ok(())
    }

    /// A scratch buffer of at least `bytes`: `have` where it is large enough, else a new
    /// storage buffer of `bytes` (the old one stays in the arena until the backend is
    /// dropped). The caller keeps the result in its field.
    fn scratch_buffer(&mut self, have: Option<(BufId, u64)>, label: &str, bytes: u64) -> Result<(BufId, u64)> {
        match have {
            Some((buf, size)) if size >= bytes => Ok((buf, size)),
            _ => Ok((self.storage_buffer(label, bytes)?, bytes)),
        }
    }

    /// A new submission's blob holds none of the batch's RoPE tables yet.
    fn forget_rope_offsets(&mut self) {
        for t in &mut self.rope_tables {
            t.offset = None;
        }
    }

    /// `scratch_buffer`, its error deferred to the next read (None then).
    fn scratch_or_defer(&mut self, have: Option<(BufId, u64)>, label: &str, bytes: u64) -> Option<(BufId, u64)> {
        self.scratch_buffer(have, label, bytes).map_err(|e| self.defer(e)).ok()
    }

    /// Makes the staging buffer hold `bytes`.
    fn grow_staging(&mut self, bytes: u64) {
        let have = self.staging.as_ref().map_or(0, |b| b.size());
        if bytes > have {
            let grown = self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size: bytes.next_multiple_of(4),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            // No read is in flight here (reads await their mapping), and in a browser a
            // dropped buffer would hold its memory until the garbage collector runs.
            if let Some(old) = self.staging.replace(grown) {
                old.destroy();
            }
            self.stats.objects_created += 1;
        }
    }

    fn act(&self, a: GpuActivation) -> &ActInfo {
        &self.acts[a.0 as usize]
    }

    /// Row r's position: its own in a packed batch's sequence, else from `start_pos`.
    fn position(&self, r: usize) -> usize {
        match self.packed.get(r) {
            Some(&[first, _]) => r - first as usize,
            None => self.start_pos + r,
        }
    }

    /// The longest sequence of the batch from position 0 (a packed batch's, else the
    /// batch's own rows after `start_pos`): positions `0..` this are used.
    fn position_end(&self, n: usize) -> usize {
        match self.packed.is_empty() {
            true => self.start_pos + n,
            false => self.packed.iter().map(|&[a, b]| (b - a) as usize).max().unwrap_or(0),
        }
    }

    /// Rows the current batch has in `a`.
    fn rows(&self, a: GpuActivation) -> usize {
        self.n_tokens.min(self.act(a).capacity)
    }

    // ---- recording ----------------------------------------------------------------

    fn defer(&mut self, e: ModelError) {
        if self.deferred.is_none() {
            self.deferred = Some(e);
        }
    }

    /// Makes room for `bytes` more in the blob (slots are `PARAMS_SLOT`-aligned),
    /// submitting what was recorded when the blob is full.
    fn ensure_room(&mut self, bytes: u64) -> bool {
        let at = (self.blob.len() as u64).next_multiple_of(PARAMS_SLOT);
        if at + bytes <= BLOB_BYTES {
            return true;
        }
        if !self.blob.is_empty() {
            self.submit(None);
        }
        bytes <= BLOB_BYTES
    }

    /// Appends `data` to the blob at the next slot and returns its offset.
    fn push_blob(&mut self, data: &[u8]) -> u32 {
        let at = self.blob.len().next_multiple_of(PARAMS_SLOT as usize);
        self.blob.resize(at, 0);
        self.blob.extend_from_slice(data);
        at as u32
    }

    /// Records one dispatch of `op` over `groups` workgroups (folded into a 2-D grid).
    fn record<P: Pod>(
        &mut self,
        op: Op,
        ty: Option<GgmlType>,
        bufs: &[BufId],
        params: &P,
        table: Option<u32>,
        groups: u32,
    ) {
        self.record_keyed(KernelKey::new(op, ty), bufs, params, table, groups);
    }

    /// `record` of a kernel variant the key names in full (matvec_multi's mixed types).
    fn record_keyed<P: Pod>(&mut self, key: KernelKey, bufs: &[BufId], params: &P, table: Option<u32>, groups: u32) {
        let (x, y) = self.grid(groups);
        self.record_grid(key, bufs, params, table, x, y);
    }

    fn grid(&self, groups: u32) -> (u32, u32) {
        let max = self.gpu.limits.max_compute_workgroups_per_dimension.max(1);
        if groups <= max {
            (groups, 1)
        } else {
            (max, groups.div_ceil(max))
        }
    }

    fn record_grid<P: Pod>(&mut self, key: KernelKey, bufs: &[BufId], params: &P, table: Option<u32>, x: u32, y: u32) {
        self.flush_pending();
        self.qx_ready = None;
        self.batch_qx_of = None;
        if x == 0 || y == 0 {
            return;
        }
        if !self.ensure_room(PARAMS_SLOT) {
            return self.defer(err("op parameters do not fit the parameter buffer"));
        }
        let offset = self.push_blob(bytemuck::bytes_of(params));
        let device = &self.gpu.device;
        let op = key.op;
        let pipeline = self.cache.pipeline(device, key.with_features(self.shader_features));
        let bind_group = self.cache.bind_group(device, op, bufs, &self.buffers, &self.buffers[self.params.0 as usize]);
        let encoder = self.encoder.get_or_insert_with(|| {
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("batch") })
        });
        let pass = self.pass.get_or_insert_with(|| {
            encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("batch"), timestamp_writes: None })
                .forget_lifetime()
        });
        if let Some(p) = &mut self.profiler {
            p.before_dispatch(pass, || match (key.ty, key.ty3) {
                (Some(t), Some(t3)) => format!("{op:?} {t:?}+{t3:?} ×{}", x * y),
                (Some(t), None) => format!("{op:?} {t:?} ×{}", x * y),
                _ => format!("{op:?} ×{}", x * y),
            });
        }
        pass.set_pipeline(&pipeline);
        match table {
            Some(t) => pass.set_bind_group(0, &bind_group, &[offset, t]),
            None => pass.set_bind_group(0, &bind_group, &[offset]),
        }
        pass.dispatch_workgroups(x, y, 1);
        self.stats.dispatches += 1;
        self.recorded_since_submit += 1;
        if self.submit_after > 0 && self.recorded_since_submit >= self.submit_after {
            self.submit_part();
        }
    }

    /// Submits the part of a batch recorded so far, so that the device starts on it
    /// while the host records the rest (`tuning::PREFILL_FIRST_SUBMIT`). Nothing is
    /// read back: what the batch's later ops read stays in its buffers, in queue order.
    fn submit_part(&mut self) {
        let submits = self.stats.submits;
        self.submit(None);
        self.stats.submits = submits;
        self.stats.part_submits += 1;
        self.submit_after = (self.submit_after * 2).min(PREFILL_SUBMIT_MAX);
    }

    /// Ends the pass and submits everything recorded (and a copy of `copy.1` bytes of
    /// `copy.0` into the staging buffer), after writing the parameter blob.
    fn submit(&mut self, copy: Option<(BufId, u64)>) {
        let copy = copy.and_then(|(src, bytes)| self.staging.clone().map(|st| (src, bytes, st)));
        self.submit_into(copy);
    }

    /// `submit`, copying `bytes` of a buffer into the given mappable one; returns the
    /// submission (to wait for it alone).
    fn submit_into(&mut self, copy: Option<(BufId, u64, wgpu::Buffer)>) -> wgpu::SubmissionIndex {
        let mut encoder = self.end_recording();
        if let Some((src, bytes, dst)) = copy {
            encoder.copy_buffer_to_buffer(&self.buffers[src.0 as usize], 0, &dst, 0, bytes);
        }
        if !self.blob.is_empty() {
            let len = self.blob.len().next_multiple_of(4);
            self.blob.resize(len, 0);
            self.gpu.queue.write_buffer(&self.buffers[self.params.0 as usize], 0, &self.blob);
            self.blob.clear();
        }
        self.forget_rope_offsets();
        if let Some(p) = &self.profiler {
            p.resolve(&mut encoder);
        }
        let index = self.gpu.queue.submit([encoder.finish()]);
        self.stats.submits += 1;
        self.recorded_since_submit = 0;
        if let Some(p) = &mut self.profiler {
            p.collect(&self.gpu.device);
        }
        index
    }

    /// Ends the pass and hands over the encoder of what was recorded (a new one if
    /// nothing was).
    fn end_recording(&mut self) -> wgpu::CommandEncoder {
        self.flush_pending();
        if let (Some(p), Some(pass)) = (&mut self.profiler, &mut self.pass) {
            p.end_pass(pass);
        }
        self.pass = None;
        let device = &self.gpu.device;
        self.encoder
            .take()
            .unwrap_or_else(|| device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("read") }))
    }

    /// What was recorded, as a command buffer to submit later (masked chaining): its
    /// parameters stay in the blob, for the next submission to write before it.
    fn finish_recorded(&mut self) -> wgpu::CommandBuffer {
        self.end_recording().finish()
    }

    /// Drops what was recorded after a deferred error and returns the error.
    fn take_deferred(&mut self) -> Option<ModelError> {
        let e = self.deferred.take()?;
        // The recorded work depends on an op that was never recorded.
        self.drop_recorded();
        Some(e)
    }

    /// Forgets everything recorded since the last submission, with its parameters.
    fn drop_recorded(&mut self) {
        self.pending = None;
        self.pass = None;
        self.encoder = None;
        self.blob.clear();
        self.forget_rope_offsets();
    }

    /// Runs everything recorded, copies `bytes` of `src` back and returns them.
    async fn read_back(&mut self, src: BufId, bytes: u64) -> Result<Vec<u8>> {
        if let Some(e) = self.take_deferred() {
            return Err(e);
        }
        if bytes == 0 {
            return Ok(Vec::new());
        }
        self.grow_staging(bytes);
        self.submit(Some((src, bytes)));
        let Some(staging) = self.staging.clone() else {
            return Err(err("no staging buffer"));
        };
        let mapped = readback::map_read(&staging, bytes);
        self.wait_for(None)?;
        self.take_mapped(&staging, bytes, mapped.await)
    }

    /// Natively, blocks until `submission` (None: everything submitted) has run, so
    /// mapping callbacks fire; in a browser the event loop runs them.
    fn wait_for(&mut self, submission: Option<wgpu::SubmissionIndex>) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            let t = std::time::Instant::now();
            self.gpu
                .device
                .poll(wgpu::PollType::Wait { submission_index: submission, timeout: None })
                .map_err(|e| ModelError::device_lost(format!("waiting for the GPU failed: {e}")))?;
            self.stats.wait_us += t.elapsed().as_micros() as u64;
        }
        #[cfg(target_arch = "wasm32")]
        let _ = submission;
        Ok(())
    }

    /// The first `bytes` of a buffer whose mapping finished with `result`, unmapped
    /// again; a GPU error raised meanwhile wins.
    fn take_mapped(
        &mut self,
        buffer: &wgpu::Buffer,
        bytes: u64,
        result: std::result::Result<(), wgpu::BufferAsyncError>,
    ) -> Result<Vec<u8>> {
        if let Some(e) = self.gpu.errors.take() {
            if result.is_ok() {
                buffer.unmap();
            }
            return Err(e);
        }
        // A mapping fails when the device is lost or destroyed (its lost callback may
        // not have run yet).
        result.map_err(|e| ModelError::device_lost(format!("reading back from the GPU failed: {e}")))?;
        let data = {
            let view = buffer
                .slice(0..bytes)
                .get_mapped_range()
                .map_err(|e| ModelError::device_lost(format!("reading back from the GPU failed: {e}")))?;
            view.to_vec()
        };
        buffer.unmap();
        self.stats.bytes_read_back += bytes;
        Ok(data)
    }

    // ---- weight upload --------------------------------------------------------------

    /// Repacks one GGUF row of `w` into the upload stage (flushing it first when the
    /// row belongs to another part).
    fn stage_row(&mut self, w: &mut GpuWeight, src: &[u8]) -> Result<()> {
        let row = w.upload.next_row;
        let Some((pi, part)) = w.part_of(row).map(|(i, p)| (i, *p)) else {
            return Err(err(format!("tensor '{}': more rows written than its {} rows", w.name, w.rows)));
        };
        if !self.upload.bytes.is_empty() && self.upload.part != pi {
            self.flush_stage(w);
        }
        if self.upload.bytes.is_empty() {
            self.upload.part = pi;
            self.upload.first_row = row - part.row0;
        }
        weights::repack_row(w.upload.src_ty.unwrap_or(w.ty), src, &mut self.upload.bytes);
        w.upload.next_row += 1;
        Ok(())
    }

    /// Writes the staged rows into their part.
    fn flush_stage(&mut self, w: &GpuWeight) {
        if self.upload.bytes.is_empty() {
            return;
        }
        let part = w.parts[self.upload.part];
        let offset = (self.upload.first_row * w.row_words * 4) as u64;
        self.gpu.queue.write_buffer(&self.buffers[part.buf.0 as usize], offset, &self.upload.bytes);
        self.uploaded_since_flush += self.upload.bytes.len() as u64;
        self.upload.bytes.clear();
        if self.uploaded_since_flush >= UPLOAD_FLUSH_BYTES {
            // Let wgpu release its staging copies so host memory stays a few chunks.
            self.gpu.queue.submit(std::iter::empty());
            #[cfg(not(target_arch = "wasm32"))]
            let _ = self.gpu.device.poll(wgpu::PollType::Poll);
            self.stats.upload_submits += 1;
            self.uploaded_since_flush = 0;
        }
    }

    // ---- op helpers ------------------------------------------------------------------

    fn dense_f32(&mut self, w: &GpuWeight, what: &str, len: usize) -> Option<BufId> {
        if w.dense.as_ref().map(|d| d.len()) != Some(len) || w.parts.len() != 1 {
            self.defer(err(format!(
                "{what}: weight '{}' must be one row of {len} values (it has {} × {})",
                w.name, w.rows, w.cols
            )));
            return None;
        }
        Some(w.parts[0].buf)
    }

    /// Records the `k` largest values of `rows` rows of `cols` in `x` into `out` as
    /// (id, value bits) pairs: chunks in parallel, then a merge per row.
    fn record_top_k(&mut self, x: BufId, cols: usize, rows: usize, k: usize, out: BufId) -> Result<()> {
        let chunks = cols.div_ceil(TOP_K_CHUNK);
        let part_bytes = (rows * chunks * k * 8) as u64;
        let (part, size) = self.scratch_buffer(self.top_k_part, "top-k chunk candidates", part_bytes)?;
        self.top_k_part = Some((part, size));
        let p = TopKParams {
            n: rows as u32,
            cols: cols as u32,
            k: k as u32,
            chunk: TOP_K_CHUNK as u32,
            chunks: chunks as u32,
        };
        self.record(Op::TopKChunks, None, &[x, part], &p, None, (rows * chunks) as u32);
        self.record(Op::TopKMerge, None, &[part, out], &p, None, rows as u32);
        Ok(())
    }

    /// Records the argmax of `rows` rows of `cols` in `x` into `out`: one workgroup per
    /// row writing ids (false), or, for rows longer than a chunk (vocabularies), as a
    /// top-1 over many workgroups writing (id, value) pairs (true) — one workgroup
    /// scanning 262k values alone takes ~0.2 ms.
    fn record_argmax(&mut self, x: BufId, cols: usize, rows: usize, out: BufId) -> Result<bool> {
        if cols > TOP_K_CHUNK {
            self.record_top_k(x, cols, rows, 1, out)?;
            return Ok(true);
        }
        let p = ArgmaxParams { n: rows as u32, cols: cols as u32 };
        self.record(Op::Argmax, None, &[x, out], &p, None, rows as u32);
        Ok(false)
    }

    /// Whether heads of `head_dim` cannot go into this backend's f16 KV cache (its
    /// pairs would straddle heads).
    fn odd_f16_heads(&self, head_dim: usize) -> bool {
        self.shader_features.kv_f16 && !head_dim.is_multiple_of(2)
    }

    /// Whether a rope of `heads` heads of `head_dim` fits `x` (else defers an error).
    fn rope_fits(&mut self, x: GpuActivation, heads: usize, head_dim: usize, rope: &RopeConfig) -> bool {
        let cols = self.act(x).cols;
        if rope.n_rot < 2 || rope.n_rot > head_dim || heads * head_dim > cols {
            self.defer(err(format!("rope: {} rotary dims, {heads} heads of {head_dim}, rows of {cols}", rope.n_rot)));
            return false;
        }
        true
    }

    /// The frequency-factor buffer and values of a rope (`Some(None)` without factors;
    /// None after deferring an error).
    fn freq_factors(&mut self, w: Option<&GpuWeight>) -> Option<Option<(BufId, Arc<[f32]>)>> {
        match w {
            None => Some(None),
            Some(w) => {
                let buf = self.dense_f32(w, "rope", w.cols)?;
                Some(Some((buf, w.dense.clone().unwrap_or_else(|| Arc::from([])))))
            }
        }
    }

    fn elementwise(&mut self, op: Op, bufs: &[BufId], p: EwParams, count: usize) {
        self.record(op, None, bufs, &p, None, item_groups(count));
    }
}
