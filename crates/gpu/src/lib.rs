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
//! (q/k/v: `matvec_multi`; gate/up followed by the gated activation: `matvec_gated`,
//! gate and up themselves not written); rope of q then of k (`rope2`).
//!
//! Weights stay quantized: rows are repacked at upload so each block starts on a word
//! (`weights.rs`), tensors larger than the storage binding limit are split by rows, and
//! one-row tensors (norm weights, RoPE factors) are widened to f32.

mod device;
mod kernels;
mod params;
mod readback;
mod shaders;
mod weights;

use bytemuck::Pod;
use kindling_gguf::GgmlType;
use kindling_model::{
    Activation, AttentionParams, Backend, Counters, KvSpec, ModelError, Result, RopeConfig, RopeStyle, WeightSpec,
};

pub use device::{adapters_info, AdapterSummary, GpuOptions};
pub use kernels::{KernelKey, Op, ShaderFeatures};
pub use weights::{GpuWeight, Part};

use device::Gpu;
use kernels::{BufId, Cache, PARAMS_SLOT, TABLE_BYTES};
use params::{ArgmaxParams, AttnParams, EmbedParams, EwParams, MatmulParams, NormParams, RopeParams};

/// Bytes of the parameter blob one submission can carry (beyond it the batch is split
/// into two submissions).
const BLOB_BYTES: u64 = 4 << 20;
/// Weight bytes uploaded between two flushes of wgpu's staging memory.
const UPLOAD_FLUSH_BYTES: u64 = 64 << 20;
/// Most activation rows the matrix-vector kernel takes; larger batches use the tiled one.
const MATVEC_MAX_ROWS: usize = 8;
/// Largest head the attention kernel handles (its q buffer in workgroup memory, MAX_HD).
const MAX_HEAD_DIM: usize = 256;

/// Most workgroups one (row, head) of attention is spread over (decode, long contexts).
const MAX_SPLITS: usize = 32;
/// Batches up to this many rows may split attention (decode and short chunks).
const MAX_SPLIT_ROWS: usize = 8;
/// Positions per split workgroup aimed at, and the workgroups aimed at in all.
const SPLIT_POSITIONS: usize = 32;
const SPLIT_TARGET_GROUPS: usize = 256;

/// A RoPE table: (config, frequency-factor buffer, first position, rows).
type RopeTableKey = (RopeConfig, Option<BufId>, usize, usize);

/// What the backend has done, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuStats {
    /// Command submissions of recorded ops and reads (weight uploads not included).
    pub submits: u64,
    /// Compute dispatches recorded.
    pub dispatches: u64,
    /// Bytes copied back to the host by reads.
    pub bytes_read_back: u64,
    /// Submissions made only to flush weight uploads.
    pub upload_submits: u64,
    /// GPU objects created (buffers, pipelines, layouts, bind groups): constant in the
    /// token loop once the first token has run.
    pub objects_created: u64,
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

/// A matmul held back by one op, so a residual add that follows it joins its dispatch
/// (`res += W·x` beside `out = W·x`): two dispatches per layer fewer in decode. (Also
/// a member of a `Pending::Group`.)
struct PendingMatmul {
    x: GpuActivation,
    out: GpuActivation,
    n: usize,
    ty: GgmlType,
    cols: usize,
    row_words: usize,
    parts: Vec<Part>,
}

/// An op held back so that the op after it can join its dispatch.
enum Pending {
    /// A matmul: a residual add of its output may follow (`add`), or a second matmul
    /// over the same input and a same-shaped weight (`matmul`).
    Matmul(PendingMatmul),
    /// Two or three decode matvecs over the same input with weights of the same type
    /// and width: recorded as one `matvec_multi` dispatch (q, k, v projections) where
    /// every weight is one part; two of the same part layout followed by a gated
    /// activation of their outputs (a feed-forward's gate and up) are one
    /// `matvec_gated` dispatch per part.
    Group(Vec<PendingMatmul>),
    /// A rope: a rope of another activation with the same table may follow (k after q).
    Rope(PendingRope),
}

/// A rope held back (see `Pending::Rope`).
struct PendingRope {
    x: GpuActivation,
    heads: usize,
    head_dim: usize,
    rope: RopeConfig,
    /// The frequency-factor buffer and its values.
    ff: Option<(BufId, Vec<f32>)>,
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
    /// RoPE tables already in this submission's blob, and their offsets.
    rope_tables: Vec<(RopeTableKey, u32)>,
    encoder: Option<wgpu::CommandEncoder>,
    pass: Option<wgpu::ComputePass<'static>>,
    /// Token ids of the batch (`[max rows]` u32), argmax results (`[max rows]` u32).
    tokens: BufId,
    argmax: BufId,
    /// Rows the tokens / argmax buffers hold.
    max_rows: usize,
    staging: Option<wgpu::Buffer>,
    n_tokens: usize,
    start_pos: usize,
    upload: UploadStage,
    uploaded_since_flush: u64,
    max_part_bytes: u64,
    weight_bytes: u64,
    /// The op not recorded yet (see `Pending`).
    pending: Option<Pending>,
    /// A 16-byte buffer bound where a kernel's optional output is unused.
    dummy: BufId,
    /// Attention's split scratch (`[rows, heads, splits, head_dim + 2]` f32) and its bytes.
    attn_scratch: Option<(BufId, u64)>,
    /// An op that could not be recorded; returned by the next read.
    deferred: Option<ModelError>,
    stats: GpuStats,
}

fn err(msg: impl Into<String>) -> ModelError {
    ModelError::Backend(msg.into())
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
            cache: Cache::default(),
            params: BufId(0),
            blob: Vec::with_capacity(BLOB_BYTES as usize),
            rope_tables: Vec::new(),
            encoder: None,
            pass: None,
            tokens: BufId(0),
            argmax: BufId(0),
            max_rows: 0,
            staging: None,
            n_tokens: 0,
            start_pos: 0,
            upload: UploadStage::default(),
            uploaded_since_flush: 0,
            max_part_bytes,
            weight_bytes: 0,
            attn_scratch: None,
            pending: None,
            dummy: BufId(0),
            deferred: None,
            stats: GpuStats::default(),
        };
        let uniform = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        b.params = b.create_buffer("params", BLOB_BYTES + TABLE_BYTES, uniform)?;
        b.dummy = b.storage_buffer("dummy", 16)?;
        b.grow_row_buffers(64)?;
        Ok(b)
    }

    /// The adapter in use.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.gpu.adapter
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
            self.cache.pipeline(&self.gpu.device, key);
        }
        self.check_errors()
    }

    fn check_errors(&self) -> Result<()> {
        match self.gpu.errors.take() {
            Some(e) => Err(err(e)),
            None => Ok(()),
        }
    }

    // ---- buffers ------------------------------------------------------------------

    fn create_buffer(&mut self, label: &str, size: u64, usage: wgpu::BufferUsages) -> Result<BufId> {
        let limit = self.gpu.limits.max_buffer_size;
        if size > limit {
            return Err(err(format!("{label}: {size} bytes exceed the GPU's largest buffer ({limit} bytes)")));
        }
        let buffer = self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4).next_multiple_of(4),
            usage,
            mapped_at_creation: false,
        });
        self.check_errors().map_err(|e| err(format!("{label}: cannot allocate {size} bytes on the GPU: {e}")))?;
        self.buffers.push(buffer);
        self.stats.objects_created += 1;
        Ok(BufId(self.buffers.len() as u32 - 1))
    }

    fn storage_buffer(&mut self, label: &str, size: u64) -> Result<BufId> {
        let limit = self.gpu.limits.max_storage_buffer_binding_size;
        if size > limit {
            return Err(err(format!(
                "{label}: {size} bytes exceed the GPU's largest storage binding ({limit} bytes); use a smaller batch or context"
            )));
        }
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        self.create_buffer(label, size, usage)
    }

    /// Makes the token-id and argmax buffers hold `rows` rows.
    fn grow_row_buffers(&mut self, rows: usize) -> Result<()> {
        if rows > self.max_rows {
            self.tokens = self.storage_buffer("token ids", rows as u64 * 4)?;
            self.argmax = self.storage_buffer("argmax", rows as u64 * 4)?;
            self.max_rows = rows;
        }
        Ok(())
    }

    /// Makes the staging buffer hold `bytes`.
    fn grow_staging(&mut self, bytes: u64) {
        let have = self.staging.as_ref().map_or(0, |b| b.size());
        if bytes > have {
            self.staging = Some(self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size: bytes.next_multiple_of(4),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
            self.stats.objects_created += 1;
        }
    }

    fn act(&self, a: GpuActivation) -> &ActInfo {
        &self.acts[a.0 as usize]
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
    fn record<P: Pod>(&mut self, op: Op, ty: Option<GgmlType>, bufs: &[BufId], params: &P, table: Option<u32>, groups: u32) {
        let (x, y) = self.grid(groups);
        self.record_grid(op, ty, bufs, params, table, x, y);
    }

    fn grid(&self, groups: u32) -> (u32, u32) {
        let max = self.gpu.limits.max_compute_workgroups_per_dimension.max(1);
        if groups <= max {
            (groups, 1)
        } else {
            (max, groups.div_ceil(max))
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn record_grid<P: Pod>(&mut self, op: Op, ty: Option<GgmlType>, bufs: &[BufId], params: &P, table: Option<u32>, x: u32, y: u32) {
        self.flush_pending();
        if x == 0 || y == 0 {
            return;
        }
        if !self.ensure_room(PARAMS_SLOT) {
            return self.defer(err("op parameters do not fit the parameter buffer"));
        }
        let offset = self.push_blob(bytemuck::bytes_of(params));
        let device = &self.gpu.device;
        let pipeline = self.cache.pipeline(device, KernelKey::new(op, ty));
        let bind_group = self.cache.bind_group(device, op, bufs, &self.buffers, &self.buffers[self.params.0 as usize]);
        let encoder = self
            .encoder
            .get_or_insert_with(|| device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("batch") }));
        let pass = self.pass.get_or_insert_with(|| {
            encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("batch"), timestamp_writes: None })
                .forget_lifetime()
        });
        pass.set_pipeline(&pipeline);
        match table {
            Some(t) => pass.set_bind_group(0, &bind_group, &[offset, t]),
            None => pass.set_bind_group(0, &bind_group, &[offset]),
        }
        pass.dispatch_workgroups(x, y, 1);
        self.stats.dispatches += 1;
    }

    /// Ends the pass and submits everything recorded (and a copy of `copy.1` bytes of
    /// `copy.0` into the staging buffer), after writing the parameter blob.
    fn submit(&mut self, copy: Option<(BufId, u64)>) {
        self.flush_pending();
        self.pass = None;
        let device = &self.gpu.device;
        let mut encoder = self
            .encoder
            .take()
            .unwrap_or_else(|| device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("read") }));
        if let (Some((src, bytes)), Some(staging)) = (copy, &self.staging) {
            encoder.copy_buffer_to_buffer(&self.buffers[src.0 as usize], 0, staging, 0, bytes);
        }
        if !self.blob.is_empty() {
            let len = self.blob.len().next_multiple_of(4);
            self.blob.resize(len, 0);
            self.gpu.queue.write_buffer(&self.buffers[self.params.0 as usize], 0, &self.blob);
            self.blob.clear();
        }
        self.rope_tables.clear();
        self.gpu.queue.submit([encoder.finish()]);
        self.stats.submits += 1;
    }

    /// Records the pending op(s), if any, on their own.
    fn flush_pending(&mut self) {
        match self.pending.take() {
            None => {}
            Some(Pending::Matmul(pm)) => self.record_matmul(pm, None),
            Some(Pending::Group(g)) => self.record_group(g),
            Some(Pending::Rope(r)) => self.record_rope(r, None),
        }
    }

    /// Records matvecs held as a group: one `matvec_multi` dispatch when every weight
    /// is one part, else each on its own.
    fn record_group(&mut self, g: Vec<PendingMatmul>) {
        if g.len() < 2 || g.len() > 3 || g.iter().any(|m| m.parts.len() != 1) {
            for m in g {
                self.record_matmul(m, None);
            }
            return;
        }
        let first = &g[0];
        let (xb, x_stride) = (self.act(first.x).buf, self.act(first.x).cols as u32);
        let mut bufs = vec![xb];
        let mut rows = [0u32; 3];
        let mut groups = 0;
        for (i, m) in g.iter().enumerate() {
            bufs.push(m.parts[0].buf);
            bufs.push(self.act(m.out).buf);
            rows[i] = m.parts[0].rows as u32;
            groups += m.parts[0].rows.div_ceil(4);
        }
        if g.len() == 2 {
            // No third weight: bind the second again (read only) and the dummy output.
            bufs.push(g[1].parts[0].buf);
            bufs.push(self.dummy);
        }
        let p = MatmulParams {
            n: 1,
            k: first.cols as u32,
            rows: rows[0],
            row_words: first.row_words as u32,
            x_stride,
            rows2: rows[1],
            rows3: rows[2],
            ..Default::default()
        };
        self.record(Op::MatvecMulti, Some(first.ty), &bufs, &p, None, groups as u32);
    }

    /// Records gate and up (one row, same weight type and part layout) and
    /// `out = act(gate) * up` as one dispatch per weight part.
    fn record_matvec_gated(&mut self, g: PendingMatmul, u: PendingMatmul, act: u32, out: GpuActivation) {
        let xb = self.act(g.x).buf;
        let (x_stride, ob, out_stride) = (self.act(g.x).cols as u32, self.act(out).buf, self.act(out).cols as u32);
        for (gp, up) in g.parts.iter().zip(&u.parts) {
            let p = MatmulParams {
                n: 1,
                k: g.cols as u32,
                rows: gp.rows as u32,
                row_words: g.row_words as u32,
                x_stride,
                out_stride,
                out_offset: gp.row0 as u32,
                act,
                ..Default::default()
            };
            let bufs = [xb, gp.buf, ob, up.buf];
            self.record(Op::MatvecGated, Some(g.ty), &bufs, &p, None, gp.rows.div_ceil(4) as u32);
        }
    }

    /// Records a matmul's dispatches (one per weight part); with `res`, each also adds
    /// its result into that activation.
    fn record_matmul(&mut self, pm: PendingMatmul, res: Option<GpuActivation>) {
        let (xa, oa) = (self.act(pm.x), self.act(pm.out));
        let (xb, ob, x_stride, out_stride) = (xa.buf, oa.buf, xa.cols as u32, oa.cols as u32);
        let (rb, res_stride) = match res {
            Some(r) => (self.act(r).buf, self.act(r).cols as u32),
            None => (self.dummy, 0),
        };
        let n = pm.n;
        for part in &pm.parts {
            let p = MatmulParams {
                n: n as u32,
                k: pm.cols as u32,
                rows: part.rows as u32,
                row_words: pm.row_words as u32,
                x_stride,
                out_stride,
                out_offset: part.row0 as u32,
                res_add: res.is_some() as u32,
                res_stride,
                act: 0,
                rows2: 0,
                rows3: 0,
            };
            let bufs = [xb, part.buf, ob, rb];
            if n <= MATVEC_MAX_ROWS {
                self.record(Op::Matvec, Some(pm.ty), &bufs, &p, None, part.rows.div_ceil(4) as u32);
            } else {
                let (gx, gy) = (part.rows.div_ceil(64) as u32, n.div_ceil(64) as u32);
                self.record_grid(Op::MatmulTiled, Some(pm.ty), &bufs, &p, None, gx, gy);
            }
        }
    }

    /// Records a rope (and, with `second`, the same rotation of another activation's
    /// heads in the same dispatches).
    fn record_rope(&mut self, r: PendingRope, second: Option<(GpuActivation, usize)>) {
        let PendingRope { x, heads, head_dim, rope, ff } = r;
        let rope = &rope;
        let n = self.rows(x);
        let cols = self.act(x).cols;
        let half = rope.n_rot / 2;
        let xb = self.act(x).buf;
        let (heads2, cols2, x2b) = match second {
            Some((x2, h2)) => (h2, self.act(x2).cols, Some(self.act(x2).buf)),
            None => (0, 0, None),
        };
        let pair_bytes = half as u64 * 8;
        let rows_per_dispatch = ((TABLE_BYTES / pair_bytes) as usize).max(1);
        let mut table = Vec::new();
        let mut row0 = 0;
        while row0 < n {
            let rows = rows_per_dispatch.min(n - row0);
            let key = (*rope, ff.as_ref().map(|f| f.0), self.start_pos + row0, rows);
            let table_bytes = rows as u64 * pair_bytes;
            let cached = self.rope_tables.iter().find(|(k, _)| *k == key).map(|e| e.1);
            if !self.ensure_room(table_bytes.next_multiple_of(PARAMS_SLOT) + PARAMS_SLOT) {
                return self.defer(err("rope: table does not fit the parameter buffer"));
            }
            // ensure_room may have submitted: the cached offset is only valid if the key is still there.
            let offset = match cached.filter(|_| self.rope_tables.iter().any(|(k, _)| *k == key)) {
                Some(o) => o,
                None => {
                    rope_table(rope, ff.as_ref().map(|f| f.1.as_slice()), self.start_pos + row0, rows, &mut table);
                    let o = self.push_blob(bytemuck::cast_slice(&table));
                    self.rope_tables.push((key, o));
                    o
                }
            };
            let p = RopeParams {
                n: rows as u32,
                row0: row0 as u32,
                cols: cols as u32,
                heads: heads as u32,
                head_dim: head_dim as u32,
                half: half as u32,
                neox: (rope.style == RopeStyle::Neox) as u32,
                heads2: heads2 as u32,
                cols2: cols2 as u32,
            };
            let threads = rows * (heads + heads2) * half;
            match x2b {
                Some(x2b) => self.record(Op::Rope2, None, &[xb, x2b], &p, Some(offset), threads.div_ceil(256) as u32),
                None => self.record(Op::Rope, None, &[xb], &p, Some(offset), threads.div_ceil(256) as u32),
            }
            row0 += rows;
        }
    }

    /// Runs everything recorded, copies `bytes` of `src` back and returns them.
    async fn read_back(&mut self, src: BufId, bytes: u64) -> Result<Vec<u8>> {
        if let Some(e) = self.deferred.take() {
            // Drop the recorded work: it depends on an op that was never recorded.
            self.pending = None;
            self.pass = None;
            self.encoder = None;
            self.blob.clear();
            self.rope_tables.clear();
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
        #[cfg(not(target_arch = "wasm32"))]
        self.gpu
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| err(format!("waiting for the GPU failed: {e}")))?;
        let result = mapped.await;
        if let Some(e) = self.gpu.errors.take() {
            if result.is_ok() {
                staging.unmap();
            }
            return Err(err(e));
        }
        result.map_err(|e| err(format!("reading back from the GPU failed: {e}")))?;
        let data = {
            let view = staging
                .slice(0..bytes)
                .get_mapped_range()
                .map_err(|e| err(format!("reading back from the GPU failed: {e}")))?;
            view.to_vec()
        };
        staging.unmap();
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

    fn elementwise(&mut self, op: Op, bufs: &[BufId], p: EwParams, count: usize) {
        self.record(op, None, bufs, &p, None, count.div_ceil(256) as u32);
    }
}

/// Whether two matmuls' weights are split into parts alike.
fn same_parts(a: &PendingMatmul, b: &PendingMatmul) -> bool {
    a.parts.len() == b.parts.len() && a.parts.iter().zip(&b.parts).all(|(p, q)| p.row0 == q.row0 && p.rows == q.rows)
}

/// (cos, sin) of every pair of `rows` rows starting at position `pos0`, exactly as the
/// CPU backend computes them (f64 angles).
fn rope_table(rope: &RopeConfig, freq_factors: Option<&[f32]>, pos0: usize, rows: usize, out: &mut Vec<f32>) {
    let half = rope.n_rot / 2;
    out.clear();
    for r in 0..rows {
        let p = (pos0 + r) as f64 * rope.freq_scale as f64;
        for i in 0..half {
            let mut theta = p * (rope.base as f64).powf(-2.0 * i as f64 / rope.n_rot as f64);
            if let Some(ff) = freq_factors.and_then(|f| f.get(i)) {
                theta /= *ff as f64;
            }
            let (sin, cos) = theta.sin_cos();
            out.push(cos as f32);
            out.push(sin as f32);
        }
    }
}

impl Backend for GpuBackend {
    type Weight = GpuWeight;
    type Activation = GpuActivation;
    type KvCache = GpuKvCache;

    fn name(&self) -> String {
        format!("{} ({})", self.gpu.adapter.name, self.gpu.adapter.backend)
    }

    fn counters(&self) -> Counters {
        Counters { submits: self.stats.submits, dispatches: self.stats.dispatches, bytes_read: self.stats.bytes_read_back }
    }

    fn alloc_weight(&mut self, spec: &WeightSpec) -> Result<GpuWeight> {
        let name = &spec.name;
        let (be, bb) = (spec.ty.block_elems(), spec.ty.block_bytes());
        if spec.cols == 0 || !spec.cols.is_multiple_of(be) {
            return Err(err(format!("tensor '{name}': {} values per row is not a whole number of {:?} blocks", spec.cols, spec.ty)));
        }
        let src_row_bytes = spec.cols / be * bb;
        if spec.n_bytes != (src_row_bytes * spec.rows) as u64 {
            return Err(err(format!("tensor '{name}': {} bytes for {} rows of {} {:?} values", spec.n_bytes, spec.rows, spec.cols, spec.ty)));
        }
        // One-row tensors are read as f32 by the norm kernels: widened at upload.
        let ty = if spec.rows == 1 { GgmlType::F32 } else { spec.ty };
        let row_bytes = weights::stored_row_bytes(ty, spec.cols) as u64;
        let rows_per_part = (self.max_part_bytes / row_bytes) as usize;
        if rows_per_part == 0 {
            return Err(err(format!(
                "tensor '{name}': one row ({row_bytes} bytes) is larger than the GPU's largest storage binding ({} bytes)",
                self.max_part_bytes
            )));
        }
        let mut parts = Vec::new();
        let mut row0 = 0;
        while row0 < spec.rows {
            let rows = rows_per_part.min(spec.rows - row0);
            let label = format!("{name}[{row0}..{}]", row0 + rows);
            let buf = self.storage_buffer(&label, rows as u64 * row_bytes)?;
            parts.push(Part { buf, row0, rows });
            row0 += rows;
        }
        self.weight_bytes += spec.rows as u64 * row_bytes;
        Ok(GpuWeight {
            name: name.clone(),
            ty,
            rows: spec.rows,
            cols: spec.cols,
            row_words: row_bytes as usize / 4,
            parts,
            dense: None,
            upload: weights::Upload {
                src_ty: Some(spec.ty),
                src_row_bytes,
                received: 0,
                total: spec.n_bytes,
                pending: Vec::new(),
                next_row: 0,
            },
        })
    }

    fn write_weight(&mut self, w: &mut GpuWeight, offset: u64, bytes: &[u8]) -> Result<()> {
        if offset != w.upload.received || offset + bytes.len() as u64 > w.upload.total {
            return Err(err(format!(
                "tensor '{}': bytes {offset}..{} written after {} of {} bytes (ranges must be contiguous and in order)",
                w.name,
                offset + bytes.len() as u64,
                w.upload.received,
                w.upload.total
            )));
        }
        w.upload.received += bytes.len() as u64;
        if w.rows == 1 {
            w.upload.pending.extend_from_slice(bytes);
            return Ok(());
        }
        let rb = w.upload.src_row_bytes;
        let mut input = bytes;
        if !w.upload.pending.is_empty() {
            let take = (rb - w.upload.pending.len()).min(input.len());
            w.upload.pending.extend_from_slice(&input[..take]);
            input = &input[take..];
            if w.upload.pending.len() == rb {
                let row = std::mem::take(&mut w.upload.pending);
                self.stage_row(w, &row)?;
                w.upload.pending = row;
                w.upload.pending.clear();
            }
        }
        while input.len() >= rb {
            self.stage_row(w, &input[..rb])?;
            input = &input[rb..];
        }
        w.upload.pending.extend_from_slice(input);
        self.flush_stage(w);
        Ok(())
    }

    fn finish_weight(&mut self, w: &mut GpuWeight) -> Result<()> {
        if w.upload.received != w.upload.total {
            return Err(err(format!("tensor '{}': {} of {} bytes written", w.name, w.upload.received, w.upload.total)));
        }
        if w.rows == 1 {
            let src_ty = w.upload.src_ty.unwrap_or(w.ty);
            let mut dense = vec![0.0f32; w.cols];
            kindling_gguf::dequantize(src_ty, &w.upload.pending, &mut dense)?;
            let mut bytes = bytemuck::cast_slice::<f32, u8>(&dense).to_vec();
            bytes.resize(bytes.len().next_multiple_of(4), 0);
            self.gpu.queue.write_buffer(&self.buffers[w.parts[0].buf.0 as usize], 0, &bytes);
            w.dense = Some(dense);
        } else if w.upload.next_row != w.rows {
            return Err(err(format!("tensor '{}': {} of {} rows uploaded", w.name, w.upload.next_row, w.rows)));
        }
        w.upload.pending = Vec::new();
        self.check_errors()
    }

    fn alloc_activation(&mut self, capacity: usize, cols: usize) -> Result<GpuActivation> {
        let bytes = (capacity as u64)
            .checked_mul(cols as u64)
            .and_then(|n| n.checked_mul(4))
            .ok_or_else(|| err("activation size overflows"))?;
        let buf = self.storage_buffer(&format!("activation [{capacity}, {cols}]"), bytes)?;
        self.acts.push(ActInfo { buf, capacity, cols });
        self.grow_row_buffers(capacity)?;
        self.grow_staging(bytes);
        Ok(GpuActivation(self.acts.len() as u32 - 1))
    }

    fn alloc_kv_cache(&mut self, spec: KvSpec) -> Result<GpuKvCache> {
        let bytes = spec.capacity as u64 * spec.width as u64 * 4;
        let k = self.storage_buffer(&format!("k cache [{}, {}]", spec.capacity, spec.width), bytes)?;
        let v = self.storage_buffer(&format!("v cache [{}, {}]", spec.capacity, spec.width), bytes)?;
        Ok(GpuKvCache { k, v, spec })
    }

    fn begin_batch(&mut self, tokens: &[u32], start_pos: usize) -> Result<()> {
        self.flush_pending();
        if self.encoder.is_some() {
            self.submit(None);
        }
        self.grow_row_buffers(tokens.len())?;
        if !tokens.is_empty() {
            self.gpu.queue.write_buffer(&self.buffers[self.tokens.0 as usize], 0, bytemuck::cast_slice(tokens));
        }
        self.n_tokens = tokens.len();
        self.start_pos = start_pos;
        Ok(())
    }

    fn embed(&mut self, table: &GpuWeight, scale: f32, out: GpuActivation) {
        let n = self.rows(out);
        let out_cols = self.act(out).cols;
        if table.cols != out_cols {
            return self.defer(err(format!("embed: table '{}' rows of {} into rows of {out_cols}", table.name, table.cols)));
        }
        let out_buf = self.act(out).buf;
        for part in table.parts.clone() {
            let p = EmbedParams {
                n: n as u32,
                cols: table.cols as u32,
                row_words: table.row_words as u32,
                row0: part.row0 as u32,
                part_rows: part.rows as u32,
                total_rows: table.rows as u32,
                out_stride: out_cols as u32,
                scale,
            };
            self.record(Op::Embed, Some(table.ty), &[self.tokens, part.buf, out_buf], &p, None, n as u32);
        }
    }

    fn rms_norm(&mut self, x: GpuActivation, weight: &GpuWeight, group: usize, eps: f32, out: GpuActivation) {
        let n = self.rows(x);
        let cols = self.act(x).cols;
        if group == 0 || !cols.is_multiple_of(group) || self.act(out).cols != cols {
            return self.defer(err(format!("rms_norm: groups of {group} over rows of {cols}")));
        }
        let Some(w) = self.dense_f32(weight, "rms_norm", group) else { return };
        let p = NormParams { n: n as u32, cols: cols as u32, group: group as u32, eps };
        let groups = (n * (cols / group)) as u32;
        if x == out {
            self.record(Op::RmsNormInPlace, None, &[self.act(x).buf, w], &p, None, groups);
        } else {
            self.record(Op::RmsNorm, None, &[self.act(x).buf, self.act(out).buf, w], &p, None, groups);
        }
    }

    fn matmul(&mut self, x: GpuActivation, weight: &GpuWeight, out: GpuActivation) {
        let n = self.rows(x);
        let (xa, oa) = (self.act(x), self.act(out));
        if xa.cols != weight.cols || oa.cols != weight.rows || oa.capacity < n {
            let (xc, oc) = (xa.cols, oa.cols);
            return self.defer(err(format!(
                "matmul: '{}' is {} × {}, input rows have {xc} values, output rows {oc}",
                weight.name, weight.rows, weight.cols
            )));
        }
        let max = self.gpu.limits.max_compute_workgroups_per_dimension as usize;
        if n > MATVEC_MAX_ROWS && (n.div_ceil(64) > max || weight.parts.iter().any(|p| p.rows.div_ceil(64) > max)) {
            return self.defer(err(format!("matmul: '{}' of {} rows × {n} is too large to dispatch", weight.name, weight.rows)));
        }
        let pm = PendingMatmul {
            x,
            out,
            n,
            ty: weight.ty,
            cols: weight.cols,
            row_words: weight.row_words,
            parts: weight.parts.clone(),
        };
        // Another decode matvec over the same input and a weight of the same type and
        // width: held with the others (see `Pending::Group`).
        let joins = |a: &PendingMatmul| {
            n == 1
                && a.n == 1
                && a.x == x
                && a.ty == pm.ty
                && a.cols == pm.cols
                && a.row_words == pm.row_words
                && a.out != out
                && a.out != x
                && out != x
                && (a.parts.len() == 1 && pm.parts.len() == 1 || same_parts(a, &pm))
        };
        let group = match self.pending.take() {
            Some(Pending::Matmul(a)) if joins(&a) => Some(vec![a]),
            Some(Pending::Group(g)) if g.len() < 3 && g.iter().all(joins) => Some(g),
            other => {
                self.pending = other;
                None
            }
        };
        if let Some(mut g) = group {
            g.push(pm);
            self.pending = Some(Pending::Group(g));
            return;
        }
        self.flush_pending();
        self.pending = Some(Pending::Matmul(pm));
    }

    fn rope(&mut self, x: GpuActivation, heads: usize, head_dim: usize, rope: &RopeConfig, freq_factors: Option<&GpuWeight>) {
        let cols = self.act(x).cols;
        let half = rope.n_rot / 2;
        if half == 0 || rope.n_rot > head_dim || heads * head_dim > cols {
            return self.defer(err(format!("rope: {} rotary dims, {heads} heads of {head_dim}, rows of {cols}", rope.n_rot)));
        }
        let ff_buf = match freq_factors {
            Some(w) => match self.dense_f32(w, "rope", w.cols) {
                Some(buf) => Some(buf),
                None => return,
            },
            None => None,
        };
        // k right after q with the same table (config, factors, rows): one dispatch.
        // Not over one buffer (two writable bindings of it).
        let joins = match &self.pending {
            Some(Pending::Rope(r)) => {
                r.rope == *rope
                    && r.head_dim == head_dim
                    && r.ff.as_ref().map(|f| f.0) == ff_buf
                    && self.rows(r.x) == self.rows(x)
                    && self.act(r.x).buf != self.act(x).buf
            }
            _ => false,
        };
        if joins {
            if let Some(Pending::Rope(r)) = self.pending.take() {
                self.record_rope(r, Some((x, heads)));
            }
            return;
        }
        let ff = ff_buf.map(|buf| (buf, freq_factors.and_then(|w| w.dense.clone()).unwrap_or_default()));
        self.flush_pending();
        self.pending = Some(Pending::Rope(PendingRope { x, heads, head_dim, rope: *rope, ff }));
    }

    fn attention(
        &mut self,
        q: GpuActivation,
        k: GpuActivation,
        v: GpuActivation,
        cache: &mut GpuKvCache,
        params: &AttentionParams,
        out: GpuActivation,
    ) {
        let n = self.rows(q);
        let width = cache.spec.width;
        let hd = params.head_dim;
        let q_cols = params.head_count * hd;
        if self.start_pos + n > cache.spec.capacity {
            return self.defer(err(format!(
                "attention: positions up to {} do not fit a cache of {}",
                self.start_pos + n,
                cache.spec.capacity
            )));
        }
        if hd == 0 || hd > MAX_HEAD_DIM || params.head_count_kv == 0 || !params.head_count.is_multiple_of(params.head_count_kv) {
            return self.defer(err(format!(
                "attention: {} heads over {} kv heads of {hd} (the GPU kernel takes head_dim ≤ {MAX_HEAD_DIM})",
                params.head_count, params.head_count_kv
            )));
        }
        if params.head_count_kv * hd != width || self.act(q).cols < q_cols || self.act(out).cols < q_cols {
            return self.defer(err("attention: activation widths do not match the heads"));
        }
        // Decode over a long context: spread each (row, head) over several workgroups so
        // the GPU is filled, then merge their partial softmax sums (one more dispatch).
        let span = match params.sliding_window {
            Some(w) => (self.start_pos + n).min(w.max(1)),
            None => self.start_pos + n,
        };
        let rh = n * params.head_count;
        let splits = if n <= MAX_SPLIT_ROWS {
            span.div_ceil(SPLIT_POSITIONS).min(SPLIT_TARGET_GROUPS.div_ceil(rh)).clamp(1, MAX_SPLITS)
        } else {
            1
        };
        // The scratch is sized for the most rows and splits once, at the first call
        // (the prefill), so nothing is created in the token loop.
        let need = (MAX_SPLIT_ROWS * params.head_count * MAX_SPLITS * (hd + 2) * 4) as u64;
        if self.attn_scratch.is_none_or(|(_, have)| have < need) {
            match self.storage_buffer("attention split scratch", need) {
                Ok(buf) => {
                    self.attn_scratch = Some((buf, need));
                    let device = &self.gpu.device;
                    self.cache.pipeline(device, KernelKey::new(Op::AttnCombine, None));
                    let ob = self.act(out).buf;
                    self.cache.bind_group(device, Op::AttnCombine, &[ob, buf], &self.buffers, &self.buffers[self.params.0 as usize]);
                }
                Err(e) => return self.defer(e),
            }
        }
        let scratch = self.attn_scratch.map_or(BufId(0), |s| s.0);
        let p = AttnParams {
            n: n as u32,
            start: self.start_pos as u32,
            width: width as u32,
            q_cols: q_cols as u32,
            heads: params.head_count as u32,
            kv_heads: params.head_count_kv as u32,
            head_dim: hd as u32,
            window: params.sliding_window.unwrap_or(0) as u32,
            scale: params.scale,
            k_stride: width as u32,
            v_stride: width as u32,
            splits: splits as u32,
        };
        let (kb, vb) = (self.act(k).buf, self.act(v).buf);
        self.record(Op::KvStore, None, &[kb, vb, cache.k, cache.v], &p, None, (n * width).div_ceil(256) as u32);
        let (qb, ob) = (self.act(q).buf, self.act(out).buf);
        self.record(Op::Attention, None, &[qb, ob, cache.k, cache.v, scratch], &p, None, (rh * splits) as u32);
        if splits > 1 {
            self.record(Op::AttnCombine, None, &[ob, scratch], &p, None, rh as u32);
        }
    }

    fn gated_activation(&mut self, gate: GpuActivation, up: GpuActivation, act: Activation, out: GpuActivation) {
        let len = self.rows(gate) * self.act(gate).cols;
        let act = match act {
            Activation::Silu => 0,
            Activation::GeluTanh => 1,
        };
        // gate = Wg·x, up = Wu·x just held as a pair: one dispatch for all three.
        // Not when out is x (other workgroups still read it).
        let fusable = match &self.pending {
            Some(Pending::Group(v)) if v.len() == 2 && same_parts(&v[0], &v[1]) => {
                let (g, u) = (&v[0], &v[1]);
                g.out == gate
                    && u.out == up
                    && out != g.x
                    && self.act(out).buf != self.act(g.x).buf
                    && self.act(out).cols == self.act(gate).cols
                    && self.act(up).cols == self.act(gate).cols
                    && self.rows(gate) == 1
                    && self.rows(out) == 1
            }
            _ => false,
        };
        if fusable {
            if let Some(Pending::Group(mut v)) = self.pending.take() {
                if let (Some(u), Some(g)) = (v.pop(), v.pop()) {
                    self.record_matvec_gated(g, u, act, out);
                }
            }
            return;
        }
        let p = EwParams { len: len as u32, act, ..Default::default() };
        let bufs = [self.act(gate).buf, self.act(up).buf, self.act(out).buf];
        self.elementwise(Op::Gated, &bufs, p, len);
    }

    fn add(&mut self, x: GpuActivation, y: GpuActivation) {
        // x += W·z right after out = W·z (y = out): one dispatch. Not when x is the
        // matmul's input or output (other workgroups still read or write it).
        let fusable = match &self.pending {
            Some(Pending::Matmul(pm)) => {
                pm.out == y && x != pm.x && x != y && pm.n == self.rows(x) && self.act(x).cols == self.act(y).cols
            }
            _ => false,
        };
        if fusable {
            if let Some(Pending::Matmul(pm)) = self.pending.take() {
                self.record_matmul(pm, Some(x));
            }
            return;
        }
        let len = self.rows(x) * self.act(x).cols;
        let p = EwParams { len: len as u32, ..Default::default() };
        let bufs = [self.act(x).buf, self.act(y).buf];
        self.elementwise(Op::Add, &bufs, p, len);
    }

    fn select_row(&mut self, src: GpuActivation, src_row: usize, dst: GpuActivation) {
        let cols = self.act(src).cols;
        let p = EwParams { cols: cols as u32, src_row: src_row as u32, ..Default::default() };
        let bufs = [self.act(dst).buf, self.act(src).buf];
        self.elementwise(Op::SelectRow, &bufs, p, cols);
    }

    fn softcap(&mut self, x: GpuActivation, cap: f32) {
        let len = self.rows(x) * self.act(x).cols;
        let p = EwParams { len: len as u32, cap, ..Default::default() };
        let bufs = [self.act(x).buf];
        self.elementwise(Op::Softcap, &bufs, p, len);
    }

    async fn read_rows(&mut self, x: GpuActivation, rows: usize) -> Result<Vec<f32>> {
        let a = self.act(x);
        let rows = rows.min(a.capacity);
        let (buf, bytes) = (a.buf, (rows * a.cols * 4) as u64);
        let data = self.read_back(buf, bytes).await?;
        Ok(bytemuck::pod_collect_to_vec(&data))
    }

    async fn argmax_rows(&mut self, x: GpuActivation, rows: usize) -> Result<Vec<u32>> {
        let a = self.act(x);
        let rows = rows.min(a.capacity);
        let (buf, cols) = (a.buf, a.cols);
        if rows > self.max_rows {
            return Err(err(format!("argmax of {rows} rows: the backend holds {}", self.max_rows)));
        }
        let p = ArgmaxParams { n: rows as u32, cols: cols as u32 };
        self.record(Op::Argmax, None, &[buf, self.argmax], &p, None, rows as u32);
        let data = self.read_back(self.argmax, rows as u64 * 4).await?;
        Ok(bytemuck::pod_collect_to_vec(&data))
    }
}
