//! The CPU backend: the browser fallback and the reference every other backend is
//! tested against. Ops execute immediately; weights stay quantized in memory and are
//! dequantized a row (or block) at a time inside the kernels. Results do not depend on
//! the number of threads: every dot product is summed in the same order.

mod dot;
mod kernels;
mod op_clock;
mod parallel;
#[cfg(not(target_arch = "wasm32"))]
mod spin_pool;

use kindling_gguf::GgmlType;
use kindling_model::{Activation, AttentionParams, Backend, KvSpec, ModelError, Result, RopeConfig, WeightSpec};

/// The vector lanes the dot products were built with: `"sse2"` (x86_64), `"wasm-simd128"`
/// or `"portable"` (plain arrays: other targets, or the `portable-lanes` feature).
pub use dot::LANES;
pub use kernels::QGEMM_ROWS;
pub use parallel::{set_max_threads, threads, POOLED};

/// A weight: the tensor's GGUF bytes, exactly as stored.
pub struct CpuWeight {
    ty: GgmlType,
    rows: usize,
    cols: usize,
    data: Vec<u8>,
    /// Dequantized copy of small one-row tensors (norm weights, RoPE factors).
    dense: Option<Vec<f32>>,
}

impl CpuWeight {
    fn row_bytes(&self) -> usize {
        self.data.len() / self.rows.max(1)
    }

    fn row(&self, i: usize) -> &[u8] {
        let rb = self.row_bytes();
        &self.data[i * rb..(i + 1) * rb]
    }

    fn dense(&self) -> &[f32] {
        self.dense.as_deref().unwrap_or(&[])
    }
}

/// Handle of an activation matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuActivation(usize);

struct Matrix {
    data: Vec<f32>,
    capacity: usize,
    cols: usize,
}

/// One layer's keys and values; grows as positions arrive. The values are
/// `[positions, width]`; the keys transposed in blocks of positions
/// (`kernels::KEY_BLOCK`), as the attention's scores read them.
pub struct CpuKvCache {
    kt: Vec<f32>,
    v: Vec<f32>,
    spec: KvSpec,
}

#[derive(Default)]
pub struct CpuBackend {
    acts: Vec<Matrix>,
    tokens: Vec<u32>,
    start_pos: usize,
    /// Per row of a packed batch, its sequence's rows `[first, end)`; empty for a
    /// batch of one sequence from `start_pos`.
    spans: Vec<[u32; 2]>,
    /// Total bytes of weights allocated (for reporting).
    weight_bytes: u64,
    /// The matmuls' per-call preparation of activations (kept to allocate once).
    scratch: kernels::Scratch,
    /// `matvecs`' scratch.
    matvec_scratch: kernels::MatvecScratch,
    /// Wall time per op (`KINDLING_CPU_PROFILE`; off by default).
    clock: op_clock::OpClock,
    /// The batch's rope rotations, worked out once for q and k of every layer.
    rope_angles: kernels::RopeAngles,
}

impl CpuBackend {
    pub fn new() -> Self {
        CpuBackend { clock: op_clock::OpClock::from_env(), ..Self::default() }
    }

    pub fn weight_bytes(&self) -> u64 {
        self.weight_bytes
    }

    /// Total bytes of the activations allocated (the engine's workspace), f32.
    pub fn activation_bytes(&self) -> u64 {
        self.acts.iter().map(|m| 4 * m.capacity as u64 * m.cols as u64).sum()
    }

    /// Rows the current batch has in activation `a`.
    fn rows(&self, a: CpuActivation) -> usize {
        self.tokens.len().min(self.acts[a.0].capacity)
    }

    fn cols(&self, a: CpuActivation) -> usize {
        self.acts[a.0].cols
    }

    /// Takes an activation's storage out so it can be written while others are read.
    fn take(&mut self, a: CpuActivation) -> Vec<f32> {
        std::mem::take(&mut self.acts[a.0].data)
    }

    fn put(&mut self, a: CpuActivation, data: Vec<f32>) {
        self.acts[a.0].data = data;
    }

    /// `Backend::matmuls` of one row by `N` weights (`jobs.len() == N`), as one
    /// parallel section.
    fn matvecs<const N: usize>(&mut self, x: CpuActivation, jobs: &[(&CpuWeight, CpuActivation)]) {
        let xs = self.take(x);
        let mut outs: [Vec<f32>; N] = core::array::from_fn(|i| self.take(jobs[i].1));
        let mut i = 0;
        let mut parts = outs.each_mut().map(|o| {
            let w = jobs[i].0;
            i += 1;
            let n = w.rows.min(o.len());
            kernels::Matvec { ty: w.ty, w: &w.data, rows: w.rows, out: &mut o[..n] }
        });
        let cols = self.cols(x).min(xs.len());
        kernels::matvecs(&xs[..cols], &mut parts, &mut self.matvec_scratch);
        for (o, &(_, out)) in outs.into_iter().zip(jobs) {
            self.put(out, o);
        }
        self.put(x, xs);
    }
}

/// Row r's position: within its sequence in a packed batch (`spans`), else after the
/// `start_pos` positions already cached.
fn position(spans: &[[u32; 2]], start_pos: usize, r: usize) -> usize {
    match spans.get(r) {
        Some(&[first, _]) => r - first as usize,
        None => start_pos + r,
    }
}

impl Backend for CpuBackend {
    type Weight = CpuWeight;
    type Activation = CpuActivation;
    type KvCache = CpuKvCache;

    fn name(&self) -> String {
        format!("cpu ({} threads)", parallel::threads())
    }

    fn alloc_weight(&mut self, spec: &WeightSpec) -> Result<CpuWeight> {
        let n = usize::try_from(spec.n_bytes)
            .map_err(|_| ModelError::out_of_memory(format!("tensor '{}' is too large for this machine", spec.name)))?;
        let mut data = Vec::new();
        data.try_reserve_exact(n)
            .map_err(|_| ModelError::out_of_memory(format!("cannot allocate {n} bytes for tensor '{}'", spec.name)))?;
        data.resize(n, 0);
        self.weight_bytes += spec.n_bytes;
        Ok(CpuWeight { ty: spec.ty, rows: spec.rows, cols: spec.cols, data, dense: None })
    }

    fn write_weight(&mut self, w: &mut CpuWeight, offset: u64, bytes: &[u8]) -> Result<()> {
        let start = offset as usize;
        let dst = w
            .data
            .get_mut(start..start + bytes.len())
            .ok_or_else(|| ModelError::backend("weight write past the end of its tensor"))?;
        dst.copy_from_slice(bytes);
        Ok(())
    }

    fn finish_weight(&mut self, w: &mut CpuWeight) -> Result<()> {
        if w.rows == 1 {
            let mut dense = vec![0.0; w.cols];
            kindling_gguf::dequantize(w.ty, &w.data, &mut dense)?;
            w.dense = Some(dense);
        }
        Ok(())
    }

    fn alloc_activation(&mut self, capacity: usize, cols: usize) -> Result<CpuActivation> {
        let n = capacity.checked_mul(cols).ok_or_else(|| ModelError::backend("activation size overflows"))?;
        self.acts.push(Matrix { data: vec![0.0; n], capacity, cols });
        Ok(CpuActivation(self.acts.len() - 1))
    }

    /// Reserves the whole cache up front, fallibly: `attention` grows `k` and `v` into
    /// this capacity without reallocating, so a cache that does not fit is an
    /// `OutOfMemory` error here (in WebAssembly a failed infallible allocation would
    /// abort the module). The pages are not touched until positions arrive.
    fn alloc_kv_cache(&mut self, spec: KvSpec) -> Result<CpuKvCache> {
        let n = spec.capacity.checked_mul(spec.width).filter(|n| n.checked_mul(4).is_some());
        let fail = || {
            ModelError::out_of_memory(format!(
                "cannot allocate a KV cache of {} positions x {} values ({} MiB for keys and values of one layer)",
                spec.capacity,
                spec.width,
                (2 * spec.capacity as u64 * spec.width as u64 * 4) >> 20
            ))
        };
        let n = n.ok_or_else(fail)?;
        // The keys' last block is whole.
        let keys = spec.capacity.next_multiple_of(kernels::KEY_BLOCK) * spec.width;
        let (mut kt, mut v) = (Vec::new(), Vec::new());
        kt.try_reserve_exact(keys).map_err(|_| fail())?;
        v.try_reserve_exact(n).map_err(|_| fail())?;
        Ok(CpuKvCache { kt, v, spec })
    }

    fn begin_batch(&mut self, tokens: &[u32], start_pos: usize) -> Result<()> {
        self.tokens.clear();
        self.tokens.extend_from_slice(tokens);
        self.start_pos = start_pos;
        self.spans.clear();
        self.rope_angles.forget();
        Ok(())
    }

    fn begin_packed_batch(&mut self, tokens: &[u32], lens: &[usize]) -> Result<()> {
        let spans = kindling_model::packed_spans(lens, tokens.len())?;
        self.begin_batch(tokens, 0)?;
        if lens.len() > 1 {
            self.spans = spans;
        }
        Ok(())
    }

    fn embed(&mut self, table: &CpuWeight, scale: f32, out: CpuActivation) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let n = self.rows(out);
        let cols = self.cols(out);
        let mut o = self.take(out);
        for (r, &t) in self.tokens[..n].iter().enumerate() {
            let row = &mut o[r * cols..(r + 1) * cols];
            if (t as usize) < table.rows && kindling_gguf::dequantize(table.ty, table.row(t as usize), row).is_ok() {
                row.iter_mut().for_each(|v| *v *= scale);
            } else {
                row.fill(0.0); // unreachable: `Model::eval` checks ids against the vocabulary
            }
        }
        self.put(out, o);
        self.clock.stop_op(start, "embed", batch);
    }

    fn rms_norm(&mut self, x: CpuActivation, weight: &CpuWeight, group: usize, eps: f32, out: CpuActivation) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let n = self.rows(x);
        let cols = self.cols(x);
        let src = if x == out { None } else { Some(self.take(x)) };
        let mut o = self.take(out);
        if let Some(s) = &src {
            o[..n * cols].copy_from_slice(&s[..n * cols]);
        }
        // A prompt batch's groups (rows, or heads) shared over the threads; each group's
        // sums are its own, so any split gives the same results.
        let w = weight.dense();
        parallel::for_each_band(&mut o[..n * cols], group.max(1), 8, |_, band| kernels::rms_norm(band, w, group, eps));
        self.put(out, o);
        if let Some(s) = src {
            self.put(x, s);
        }
        self.clock.stop_op(start, "rms_norm", batch);
    }

    fn matmul(&mut self, x: CpuActivation, w: &CpuWeight, out: CpuActivation) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let n = self.rows(x);
        let xs = self.take(x);
        let mut o = self.take(out);
        kernels::matmul(&xs[..n * w.cols], n, w.ty, &w.data, w.rows, w.cols, &mut o[..n * w.rows], &mut self.scratch);
        self.put(out, o);
        self.put(x, xs);
        self.clock.stop(start, || format!("matmul {} {}x{} {}", w.ty, w.rows, w.cols, op_clock::rows_kind(batch)));
    }

    fn matmuls(&mut self, x: CpuActivation, jobs: &[(&CpuWeight, CpuActivation)]) {
        let cols = self.cols(x);
        let distinct = jobs
            .iter()
            .enumerate()
            .all(|(i, (w, o))| *o != x && w.cols == cols && jobs[..i].iter().all(|(_, p)| p != o));
        match jobs.len() {
            // A decode step: the weights' rows in one parallel section (`kernels::matvecs`).
            2 | 3 if distinct && self.rows(x) == 1 => {
                let start = self.clock.start();
                if jobs.len() == 2 {
                    self.matvecs::<2>(x, jobs);
                } else {
                    self.matvecs::<3>(x, jobs);
                }
                self.clock.stop(start, || {
                    let shapes: Vec<String> =
                        jobs.iter().map(|(w, _)| format!("{} {}x{}", w.ty, w.rows, w.cols)).collect();
                    format!("matvecs {}", shapes.join(" + "))
                });
            }
            _ => {
                for &(w, out) in jobs {
                    self.matmul(x, w, out);
                }
            }
        }
    }

    fn rope(
        &mut self,
        x: CpuActivation,
        heads: usize,
        head_dim: usize,
        rope: &RopeConfig,
        freq_factors: Option<&CpuWeight>,
    ) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let n = self.rows(x);
        let cols = self.cols(x);
        let ff = freq_factors.map(|w| w.dense());
        let mut data = self.take(x);
        let (start_pos, spans) = (self.start_pos, &self.spans[..]);
        let pairs = self.rope_angles.pairs(rope, ff, n, |r| position(spans, start_pos, r));
        let half = rope.n_rot / 2;
        // A prompt batch's rows shared over the threads.
        parallel::for_each_band(&mut data[..n * cols], cols, 16, |r0, band| {
            for (i, row) in band.chunks_exact_mut(cols).enumerate() {
                let p = &pairs[(r0 + i) * half..(r0 + i + 1) * half];
                kernels::rope_row(&mut row[..heads * head_dim], heads, head_dim, rope.style, p);
            }
        });
        self.put(x, data);
        self.clock.stop_op(start, "rope", batch);
    }

    fn attention(
        &mut self,
        q: CpuActivation,
        k: CpuActivation,
        v: CpuActivation,
        cache: &mut CpuKvCache,
        p: &AttentionParams,
        out: CpuActivation,
    ) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let n = self.rows(q);
        let width = cache.spec.width;
        let end = (self.start_pos + n) * width;
        if cache.v.len() < end {
            cache.v.resize(end, 0.0);
        }
        let at = self.start_pos * width;
        kernels::store_keys(&self.acts[k.0].data[..n * width], width, self.start_pos, &mut cache.kt);
        cache.v[at..end].copy_from_slice(&self.acts[v.0].data[..n * width]);
        let qs = self.take(q);
        let mut o = self.take(out);
        let q_cols = p.head_count * p.head_dim;
        let rows = kernels::Rows { start: self.start_pos, n, spans: &self.spans };
        kernels::attention(&qs[..n * q_cols], &cache.kt, &cache.v[..end], width, rows, p, &mut o[..n * q_cols]);
        self.put(out, o);
        self.put(q, qs);
        self.clock.stop_op(start, "attention", batch);
    }

    fn gated_activation(&mut self, gate: CpuActivation, up: CpuActivation, act: Activation, out: CpuActivation) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let len = self.rows(gate) * self.cols(gate);
        let g = self.take(gate);
        let u = self.take(up);
        let mut o = self.take(out);
        // Shared out in a prompt batch (an exp or tanh per value, tens of microseconds a
        // band of 4,096); a decode row of most models stays on this thread. (Bands of
        // 32,768 had left SmolLM2's 64-row batches on 3 threads.) Value by value, so any
        // split gives the same results.
        parallel::for_each_band(&mut o[..len], 1, 1 << 12, |at, band| {
            let r = at..at + band.len();
            kernels::gated(&g[r.clone()], &u[r], act, band)
        });
        self.put(out, o);
        self.put(up, u);
        self.put(gate, g);
        self.clock.stop_op(start, "gated_activation", batch);
    }

    fn add_bias(&mut self, x: CpuActivation, bias: &CpuWeight) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let (n, cols) = (self.rows(x), self.cols(x));
        // The loader checked the bias is one row of x's width.
        let b = bias.dense();
        for row in self.acts[x.0].data[..n * cols].chunks_exact_mut(cols) {
            row.iter_mut().zip(b).for_each(|(v, b)| *v += b);
        }
        self.clock.stop_op(start, "add_bias", batch);
    }

    fn add(&mut self, x: CpuActivation, y: CpuActivation) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let len = self.rows(x) * self.cols(x);
        let ys = self.take(y);
        self.acts[x.0].data[..len].iter_mut().zip(&ys[..len]).for_each(|(a, b)| *a += b);
        self.put(y, ys);
        self.clock.stop_op(start, "add", batch);
    }

    fn select_row(&mut self, src: CpuActivation, src_row: usize, dst: CpuActivation) {
        let cols = self.cols(src);
        let s = self.take(src);
        self.acts[dst.0].data[..cols].copy_from_slice(&s[src_row * cols..(src_row + 1) * cols]);
        self.put(src, s);
    }

    fn softcap(&mut self, x: CpuActivation, cap: f32) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let len = self.rows(x) * self.cols(x);
        self.acts[x.0].data[..len].iter_mut().for_each(|v| *v = cap * (*v / cap).tanh());
        self.clock.stop_op(start, "softcap", batch);
    }

    fn supports_encoders(&self) -> bool {
        true
    }

    fn layer_norm(&mut self, x: CpuActivation, weight: &CpuWeight, bias: &CpuWeight, eps: f32, out: CpuActivation) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let n = self.rows(x);
        let cols = self.cols(x);
        let src = if x == out { None } else { Some(self.take(x)) };
        let mut o = self.take(out);
        if let Some(s) = &src {
            o[..n * cols].copy_from_slice(&s[..n * cols]);
        }
        kernels::layer_norm(&mut o[..n * cols], weight.dense(), bias.dense(), eps);
        self.put(out, o);
        if let Some(s) = src {
            self.put(x, s);
        }
        self.clock.stop_op(start, "layer_norm", batch);
    }

    fn add_position_embedding(&mut self, x: CpuActivation, table: &CpuWeight) {
        let (n, cols) = (self.rows(x), self.cols(x));
        let mut row = vec![0.0f32; table.cols];
        for r in 0..n {
            let pos = position(&self.spans, self.start_pos, r);
            // The encoder refuses inputs past the table (the context length) before
            // running; a row past it adds nothing rather than panicking.
            if pos >= table.rows || kindling_gguf::dequantize(table.ty, table.row(pos), &mut row).is_err() {
                continue;
            }
            let xr = &mut self.acts[x.0].data[r * cols..(r + 1) * cols];
            xr.iter_mut().zip(&row).for_each(|(v, p)| *v += p);
        }
    }

    fn activation(&mut self, x: CpuActivation, act: Activation) {
        let (start, batch) = (self.clock.start(), self.tokens.len());
        let len = self.rows(x) * self.cols(x);
        kernels::activation(&mut self.acts[x.0].data[..len], act);
        self.clock.stop_op(start, "activation", batch);
    }

    async fn read_rows(&mut self, x: CpuActivation, rows: usize) -> Result<Vec<f32>> {
        let m = &self.acts[x.0];
        let rows = rows.min(m.capacity);
        Ok(m.data[..rows * m.cols].to_vec())
    }

    async fn argmax_rows(&mut self, x: CpuActivation, rows: usize) -> Result<Vec<u32>> {
        let m = &self.acts[x.0];
        let rows = rows.min(m.capacity);
        Ok(m.data[..rows * m.cols]
            .chunks_exact(m.cols.max(1))
            .map(|row| {
                let mut best = (0u32, f32::NEG_INFINITY);
                for (i, &v) in row.iter().enumerate() {
                    if v > best.1 {
                        best = (i as u32, v);
                    }
                }
                best.0
            })
            .collect())
    }
}
