//! The ops of the `Backend` trait: each validates its arguments (a bad call is
//! reported at the next read, never a panic) and records its dispatch, or hands it to
//! the fusion stage (`fusion.rs`) when a following op may join it.

use super::*;

impl Backend for GpuBackend {
    type Weight = GpuWeight;
    type Activation = GpuActivation;
    type KvCache = GpuKvCache;

    fn name(&self) -> String {
        format!("{} ({})", self.gpu.adapter.name, self.gpu.adapter.backend)
    }

    fn counters(&self) -> Counters {
        Counters {
            submits: self.stats.submits,
            dispatches: self.stats.dispatches,
            bytes_read: self.stats.bytes_read_back,
            wait_us: self.stats.wait_us,
        }
    }

    fn take_profile(&mut self) -> Option<Vec<KernelTime>> {
        self.profiler.as_mut().map(|p| p.take())
    }

    fn alloc_weight(&mut self, spec: &WeightSpec) -> Result<GpuWeight> {
        let name = &spec.name;
        let (be, bb) = (spec.ty.block_elems(), spec.ty.block_bytes());
        if spec.cols == 0 || !spec.cols.is_multiple_of(be) {
            return Err(err(format!(
                "tensor '{name}': {} values per row is not a whole number of {:?} blocks",
                spec.cols, spec.ty
            )));
        }
        let src_row_bytes = spec.cols / be * bb;
        if spec.n_bytes != (src_row_bytes * spec.rows) as u64 {
            return Err(err(format!(
                "tensor '{name}': {} bytes for {} rows of {} {:?} values",
                spec.n_bytes, spec.rows, spec.cols, spec.ty
            )));
        }
        // One-row tensors are read as f32 by the norm kernels: widened at upload.
        let ty = if spec.rows == 1 { GgmlType::F32 } else { spec.ty };
        let row_bytes = weights::stored_row_bytes(ty, spec.cols) as u64;
        let rows_per_part = (self.max_part_bytes / row_bytes) as usize;
        if rows_per_part == 0 {
            return Err(ModelError::out_of_memory(format!(
                "tensor '{name}': one row ({row_bytes} bytes) does not fit the device: its largest storage binding is {} bytes",
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
            parts: parts.into(),
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
            w.dense = Some(dense.into());
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
        let f16 = self.shader_features.kv_f16;
        if f16 && !spec.width.is_multiple_of(2) {
            return Err(err(format!("an f16 KV cache needs an even row width, not {}", spec.width)));
        }
        let bytes = kv_cache_buffer_bytes(spec.capacity, spec.width, f16);
        let k = self.storage_buffer(&format!("k cache [{}, {}]", spec.capacity, spec.width), bytes)?;
        let v = self.storage_buffer(&format!("v cache [{}, {}]", spec.capacity, spec.width), bytes)?;
        Ok(GpuKvCache { k, v, spec })
    }

    fn begin_batch(&mut self, tokens: &[u32], start_pos: usize) -> Result<()> {
        self.flush_pending();
        self.chain.forget();
        if self.encoder.is_some() {
            self.submit(None);
        }
        self.grow_row_buffers(tokens.len())?;
        if !tokens.is_empty() {
            self.gpu.queue.write_buffer(&self.buffers[self.tokens.0 as usize], 0, bytemuck::cast_slice(tokens));
        }
        self.n_tokens = tokens.len();
        let parts = self.submit_parts && tokens.len() > MATVEC_MAX_ROWS;
        self.submit_after = if parts { PREFILL_FIRST_SUBMIT } else { 0 };
        self.start_pos = start_pos;
        self.packed.clear();
        // Tables are keyed by their rows' first position, which a packed batch does not
        // give: each batch starts its own list.
        self.rope_tables.clear();
        Ok(())
    }

    fn begin_packed_batch(&mut self, tokens: &[u32], lens: &[usize]) -> Result<()> {
        let spans = kindling_model::packed_spans(lens, tokens.len())?;
        self.begin_batch(tokens, 0)?;
        if lens.len() > 1 {
            let bytes = bytemuck::cast_slice::<[u32; 2], u8>(&spans);
            self.gpu.queue.write_buffer(&self.buffers[self.spans.0 as usize], 0, bytes);
            self.packed = spans;
        }
        Ok(())
    }

    fn embed(&mut self, table: &GpuWeight, scale: f32, out: GpuActivation) {
        let n = self.rows(out);
        let out_cols = self.act(out).cols;
        if table.cols != out_cols {
            return self
                .defer(err(format!("embed: table '{}' rows of {} into rows of {out_cols}", table.name, table.cols)));
        }
        let out_buf = self.act(out).buf;
        for part in table.parts.iter().copied() {
            let p = EmbedParams {
                n: n as u32,
                cols: table.cols as u32,
                row_words: table.row_words as u32,
                row0: part.row0 as u32,
                part_rows: part.rows as u32,
                total_rows: table.rows as u32,
                out_stride: out_cols as u32,
                scale,
                start: 0,
                packed: 0,
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
        // A whole-row norm into another activation: joining a held split sum into x
        // (prefill), or held for the matvecs or the residual add reading its output to
        // take it in (see `Pending::Norm`).
        if group == cols && x != out {
            if self.norm_joins_split_sum(x, w, eps, out) {
                return;
            }
            self.flush_pending();
            self.pending = Some(Pending::Norm(PendingNorm { x, w, eps, out }));
            return;
        }
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
        if n > MATVEC_MAX_ROWS
            && (n.div_ceil(BATCH_TILE_F32.0) > max
                || weight.parts.iter().any(|p| p.rows.div_ceil(BATCH_TILE_F32.1) > max))
        {
            return self.defer(err(format!(
                "matmul: '{}' of {} rows × {n} is too large to dispatch",
                weight.name, weight.rows
            )));
        }
        // A decode matvec right after the whole-row norm of its input takes the norm in
        // (not for a vocabulary-sized weight: every workgroup recomputes the norm).
        let norm = match &self.pending {
            Some(Pending::Norm(pn)) if pn.out == x && n == 1 && out != pn.x && weight.rows <= NORM_FUSE_MAX_ROWS => {
                Some(NormIn { x: pn.x, w: pn.w, eps: pn.eps })
            }
            _ => None,
        };
        if norm.is_some() {
            self.pending = None;
        }
        let pm = PendingMatmul {
            x,
            out,
            n,
            ty: weight.ty,
            cols: weight.cols,
            row_words: weight.row_words,
            parts: weight.parts.clone(),
            norm,
            merge: None,
        };
        // Another decode matvec over the same input and a weight of the same width:
        // held with the others (see `Pending::Group`). The first two are of one type
        // (gate and up may become matvec_gated); a third may be of another (v beside q
        // and k: matvec_multi reads it in its own type).
        // (Over the same input, of the same width, into another output, neither output
        // being the input.)
        let beside = |a: &PendingMatmul| {
            a.x == x && a.cols == pm.cols && a.out != out && a.out != x && out != x && a.merge.is_none()
        };
        let joins = |a: &PendingMatmul| {
            n == 1 && a.n == 1 && beside(a) && (a.parts.len() == 1 && pm.parts.len() == 1 || same_parts(a, &pm))
        };
        let same_type = |a: &PendingMatmul| a.ty == pm.ty && a.row_words == pm.row_words;
        // A batch's two matmuls over one input, of one type and shape: held as a pair, as
        // a feed-forward's gate and up, which the gated activation after them may take
        // into one dispatch (record_matmul_gated). And a batch's two
        // or three over one input that one dispatch takes (multi_batch_fits: q, k and v),
        // held as a group.
        let batch_group = match &self.pending {
            Some(Pending::Matmul(a)) => {
                a.n == n && beside(a) && (self.gated_batch_fits(a, &pm) || self.multi_batch_fits(&[a, &pm]))
            }
            Some(Pending::Group(g)) => {
                g.len() == 2 && g.iter().all(beside) && self.multi_batch_fits(&[&g[0], &g[1], &pm])
            }
            _ => false,
        };
        let group = match self.pending.take() {
            Some(Pending::Matmul(a)) if joins(&a) && same_type(&a) => Some(vec![a]),
            Some(Pending::Matmul(a)) if batch_group => Some(vec![a]),
            Some(Pending::Group(g)) if g.len() == 2 && (g.iter().all(joins) || batch_group) => Some(g),
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
        // A decode matvec reading the output of the attention just recorded takes the
        // merge of its splits in (`matvec_merged`; not where it writes its own input).
        let mut pm = pm;
        let key = match &self.pending {
            Some(Pending::Merge(m)) if m.out == x && out != x && n == 1 => self.merged_matvec(m, pm.ty, pm.cols),
            _ => None,
        };
        if let (Some(key), Some(Pending::Merge(m))) = (key, &self.pending) {
            pm.merge = Some((*m, key));
            self.pending = None;
        }
        self.flush_pending();
        self.pending = Some(Pending::Matmul(pm));
    }

    fn rope(
        &mut self,
        x: GpuActivation,
        heads: usize,
        head_dim: usize,
        rope: &RopeConfig,
        freq_factors: Option<&GpuWeight>,
    ) {
        if !self.rope_fits(x, heads, head_dim, rope) {
            return;
        }
        let Some(ff) = self.freq_factors(freq_factors) else { return };
        self.flush_pending();
        self.record_rope(x, heads, head_dim, rope, ff);
    }

    fn rope_qk(&mut self, q: GpuActivation, k: GpuActivation, v: GpuActivation, p: &QkRope<'_, GpuWeight>) {
        let hd = p.head_dim;
        if !self.rope_fits(q, p.heads, hd, p.rope) || !self.rope_fits(k, p.kv_heads, hd, p.rope) {
            return;
        }
        if hd > MAX_HEAD_DIM
            || self.rows(q) != self.rows(k)
            || self.act(q).buf == self.act(k).buf
            || self.odd_f16_heads(hd)
        {
            return self.defer(err(format!("rope_qk: heads of {hd} (at most {MAX_HEAD_DIM}, even with an f16 KV cache) over two distinct activations of equal rows")));
        }
        let Some(ff) = self.freq_factors(p.freq_factors) else { return };
        let norm = match p.norm {
            Some((qn, kn, eps)) => match (self.dense_f32(qn, "q norm", hd), self.dense_f32(kn, "k norm", hd)) {
                (Some(a), Some(b)) => Some((a, b, eps)),
                _ => return,
            },
            None => None,
        };
        // The biases join the dispatch through the norm weights' bindings (and one more
        // for v's): where the model has both, or the device allows fewer than nine
        // storage buffers, they are added on their own first.
        let mut bias = None;
        if let Some([bq, bk, bv]) = p.bias {
            if norm.is_none() && self.gpu.limits.max_storage_buffers_per_shader_stage >= 9 {
                let (qw, kw) = (self.act(q).cols, self.act(k).cols);
                match (
                    self.dense_f32(bq, "q bias", qw),
                    self.dense_f32(bk, "k bias", kw),
                    self.dense_f32(bv, "v bias", kw),
                ) {
                    (Some(a), Some(b), Some(c)) => bias = Some((a, b, c)),
                    _ => return,
                }
            } else {
                self.add_bias(q, bq);
                self.add_bias(k, bk);
                self.add_bias(v, bv);
            }
        }
        self.flush_pending();
        let (heads, kv_heads, rope) = (p.heads, p.kv_heads, *p.rope);
        self.pending =
            Some(Pending::QkRope(PendingQkRope { q, k, v, heads, kv_heads, head_dim: hd, rope, ff, norm, bias }));
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
        if hd == 0
            || hd > MAX_HEAD_DIM
            || params.head_count_kv == 0
            || !params.head_count.is_multiple_of(params.head_count_kv)
            || self.odd_f16_heads(hd)
        {
            return self.defer(err(format!(
                "attention: {} heads over {} kv heads of {hd} (the GPU kernel takes head_dim ≤ {MAX_HEAD_DIM}, even with an f16 KV cache)",
                params.head_count, params.head_count_kv
            )));
        }
        if params.head_count_kv * hd != width || self.act(q).cols < q_cols || self.act(out).cols < q_cols {
            return self.defer(err("attention: activation widths do not match the heads"));
        }
        if !params.causal && params.sliding_window.is_some() {
            return self.defer(err("attention: a sliding window needs causal attention"));
        }
        // Decode over a long context: spread each (row, head) over several workgroups so
        // the GPU is filled, then merge their partial softmax sums (one more dispatch).
        let span = match params.sliding_window {
            Some(w) => (self.start_pos + n).min(w.max(1)),
            None => self.start_pos + n,
        };
        let rh = n * params.head_count;
        // A batch (prefill) goes through attention_tiled where head_dim allows, its
        // blocks' positions shared among workgroups for long prompts.
        let (tile_rows, split_positions, target_groups, max_hd) = if self.shader_features.coop_matrix {
            (coop_attention_rows(hd), ATTN_COOP_SPLIT_POSITIONS, ATTN_COOP_TARGET_GROUPS, ATTN_COOP_MAX_HEAD_DIM)
        } else {
            (ATTN_TILE_ROWS, ATTN_TILE_SPLIT_POSITIONS, ATTN_TILE_TARGET_GROUPS, ATTN_TILE_MAX_HEAD_DIM)
        };
        let tiled = n > MAX_SPLIT_ROWS && hd.is_multiple_of(4) && hd <= max_hd;
        let splits = if tiled {
            let blocks = n.div_ceil(tile_rows) * params.head_count;
            span.div_ceil(split_positions).min(target_groups.div_ceil(blocks)).clamp(1, MAX_SPLITS)
        } else if n <= MAX_SPLIT_ROWS && span > SPLIT_MIN_SPAN {
            span.div_ceil(SPLIT_POSITIONS).min(SPLIT_TARGET_GROUPS.div_ceil(rh)).clamp(1, MAX_SPLITS)
        } else {
            1
        };
        // The scratch is sized for the most decode rows and splits once, at the first
        // call (the prefill), so nothing is created in the token loop; a longer prompt's
        // splits may grow it.
        let need = ((MAX_SPLIT_ROWS * MAX_SPLITS).max(n * splits) * params.head_count * (SPLIT_HEAD + hd) * 4) as u64;
        let Some((scratch, size)) = self.scratch_or_defer(self.attn_scratch, "attention split scratch", need) else {
            return;
        };
        if self.attn_scratch != Some((scratch, size)) {
            self.attn_scratch = Some((scratch, size));
            let device = &self.gpu.device;
            self.cache.pipeline(device, KernelKey::new(Op::AttnCombine, None));
            let ob = self.act(out).buf;
            self.cache.bind_group(
                device,
                Op::AttnCombine,
                &[ob, scratch],
                &self.buffers,
                &self.buffers[self.params.0 as usize],
            );
        }
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
            softcap: params.softcap.unwrap_or(0.0),
            non_causal: u32::from(!params.causal),
            packed: u32::from(!self.packed.is_empty()),
            ..Default::default()
        };
        // q and k just prepared by `rope_qk`: the store joins that dispatch.
        let joins = match &self.pending {
            Some(Pending::QkRope(r)) => {
                r.q == q
                    && r.k == k
                    && r.v == v
                    && r.heads == params.head_count
                    && r.kv_heads == params.head_count_kv
                    && r.head_dim == hd
            }
            _ => false,
        };
        // In decode the attention itself does that preparation: one dispatch fewer.
        let in_attention =
            n == 1 && !tiled && self.gpu.limits.max_storage_buffers_per_shader_stage >= ATTENTION_ROPE_STORAGE_BUFFERS;
        match self.pending.take() {
            Some(Pending::QkRope(r)) if joins && in_attention => {
                let bufs = AttentionRopeBuffers { q, out, k, v, cache, scratch };
                return self.record_attention_rope(r, p, bufs);
            }
            Some(Pending::QkRope(r)) if joins => {
                self.record_qk_rope(r, Some(KvStoreTarget { k_cache: cache.k, v_cache: cache.v, width }));
            }
            other => {
                self.pending = other;
                let (kb, vb) = (self.act(k).buf, self.act(v).buf);
                self.record(Op::KvStore, None, &[kb, vb, cache.k, cache.v], &p, None, item_groups(n * width));
            }
        }
        let (qb, ob) = (self.act(q).buf, self.act(out).buf);
        let bufs = [qb, ob, cache.k, cache.v, scratch, self.spans];
        if tiled {
            let groups = n.div_ceil(tile_rows) * params.head_count * splits;
            self.record(Op::AttentionTiled, None, &bufs, &p, None, groups as u32);
        } else {
            self.record(Op::Attention, None, &bufs, &p, None, (rh * splits) as u32);
        }
        if splits > 1 {
            self.merge_splits(PendingMerge { out, scratch, p });
        }
    }

    fn gated_activation(&mut self, gate: GpuActivation, up: GpuActivation, act: Activation, out: GpuActivation) {
        let len = self.rows(gate) * self.act(gate).cols;
        let act = act_code(act);
        // gate = Wg·x, up = Wu·x just held as a pair: one dispatch for all three (per
        // weight part in decode; a batch's where the pair was held only if it fits that
        // kernel, gated_batch_fits). Not when out is x (other workgroups still read it).
        let fusable = match &self.pending {
            Some(Pending::Group(v)) if v.len() == 2 && same_parts(&v[0], &v[1]) => {
                let (g, u) = (&v[0], &v[1]);
                let n = self.rows(gate);
                g.out == gate
                    && u.out == up
                    && out != g.x
                    && self.act(out).buf != self.act(g.x).buf
                    && self.act(out).cols == self.act(gate).cols
                    && self.act(up).cols == self.act(gate).cols
                    && g.n == n
                    && self.rows(out) == n
                    && (n == 1 || self.gated_batch_fits(g, u))
            }
            _ => false,
        };
        if fusable {
            if let Some(Pending::Group(mut v)) = self.pending.take() {
                if let (Some(u), Some(g)) = (v.pop(), v.pop()) {
                    if g.n == 1 {
                        self.record_matvec_gated(g, u, act, out);
                    } else {
                        self.record_matmul_gated(g, u, act, out);
                    }
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
                // A split prefill matmul's sums into x: held for a norm of x to join.
                self.pending = self.record_matmul(pm, Some(x)).map(Pending::SplitSum);
            }
            return;
        }
        // x += norm(z) right after y = norm(z): one dispatch (Gemma 3's post-norms).
        let norm_fusable = match &self.pending {
            Some(Pending::Norm(pn)) => {
                pn.out == y
                    && x != y
                    && x != pn.x
                    && self.rows(x) == self.rows(y)
                    && self.act(x).cols == self.act(y).cols
            }
            _ => false,
        };
        if norm_fusable {
            if let Some(Pending::Norm(pn)) = self.pending.take() {
                self.record_norm(&pn, Some(x));
            }
            return;
        }
        let len = self.rows(x) * self.act(x).cols;
        let p = EwParams { len: len as u32, cols: len as u32, ..Default::default() };
        let bufs = [self.act(x).buf, self.act(y).buf];
        self.elementwise(Op::Add, &bufs, p, len);
    }

    fn add_bias(&mut self, x: GpuActivation, bias: &GpuWeight) {
        let cols = self.act(x).cols;
        let Some(b) = self.dense_f32(bias, "add_bias", cols) else { return };
        let len = self.rows(x) * cols;
        let p = EwParams { len: len as u32, cols: cols as u32, ..Default::default() };
        self.elementwise(Op::Add, &[self.act(x).buf, b], p, len);
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

    fn supports_encoders(&self) -> bool {
        true
    }

    fn layer_norm(&mut self, x: GpuActivation, weight: &GpuWeight, bias: &GpuWeight, eps: f32, out: GpuActivation) {
        let n = self.rows(x);
        let cols = self.act(x).cols;
        if self.act(out).cols != cols || self.rows(out) != n {
            return self.defer(err(format!("layer_norm: rows of {cols} into rows of {}", self.act(out).cols)));
        }
        let Some(w) = self.dense_f32(weight, "layer_norm", cols) else { return };
        let Some(b) = self.dense_f32(bias, "layer_norm bias", cols) else { return };
        let p = NormParams { n: n as u32, cols: cols as u32, group: cols as u32, eps };
        if x == out {
            self.record(Op::LayerNormInPlace, None, &[self.act(x).buf, w, b], &p, None, n as u32);
        } else {
            self.record(Op::LayerNorm, None, &[self.act(x).buf, self.act(out).buf, w, b], &p, None, n as u32);
        }
    }

    fn add_position_embedding(&mut self, x: GpuActivation, table: &GpuWeight) {
        let n = self.rows(x);
        let cols = self.act(x).cols;
        let rows = if self.packed.is_empty() { self.start_pos } else { 0 }..self.position_end(n);
        if table.cols != cols || rows.end > table.rows {
            return self.defer(err(format!(
                "add_position_embedding: '{}' holds {} positions of {} values; the batch needs positions {rows:?} of {cols}",
                table.name, table.rows, table.cols
            )));
        }
        let xb = self.act(x).buf;
        // Only the parts holding the batch's positions.
        for part in table.parts.iter().copied().filter(|p| p.row0 < rows.end && rows.start < p.row0 + p.rows) {
            let p = EmbedParams {
                n: n as u32,
                cols: cols as u32,
                row_words: table.row_words as u32,
                row0: part.row0 as u32,
                part_rows: part.rows as u32,
                total_rows: table.rows as u32,
                out_stride: cols as u32,
                scale: 1.0,
                start: self.start_pos as u32,
                packed: u32::from(!self.packed.is_empty()),
            };
            self.record(Op::AddPositions, Some(table.ty), &[part.buf, xb, self.spans], &p, None, n as u32);
        }
    }

    fn activation(&mut self, x: GpuActivation, act: Activation) {
        let len = self.rows(x) * self.act(x).cols;
        let p = EwParams { len: len as u32, act: act_code(act), ..Default::default() };
        self.elementwise(Op::Activation, &[self.act(x).buf], p, len);
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
        let out = self.argmax;
        if !self.record_argmax(buf, cols, rows, out)? {
            let data = self.read_back(out, rows as u64 * 4).await?;
            return Ok(bytemuck::pod_collect_to_vec(&data));
        }
        // (id, value) pairs; one row needs only its id, the first word.
        let words: Vec<u32> =
            bytemuck::pod_collect_to_vec(&self.read_back(out, if rows == 1 { 4 } else { rows as u64 * 8 }).await?);
        Ok(words.iter().step_by(2).copied().collect())
    }

    async fn top_k_rows(&mut self, x: GpuActivation, rows: usize, k: usize) -> Result<Vec<Vec<(u32, f32)>>> {
        let a = self.act(x);
        let (buf, cols, rows) = (a.buf, a.cols, rows.min(a.capacity));
        let k = k.min(cols);
        if rows == 0 || k == 0 {
            return Ok(vec![Vec::new(); rows]);
        }
        if k > MAX_TOP_K {
            return Err(err(format!("top {k} candidates: the GPU selects at most {MAX_TOP_K}")));
        }
        let out_bytes = (rows * k * 8) as u64;
        let (out, size) = self.scratch_buffer(self.top_k_out, "top-k candidates", out_bytes)?;
        if self.top_k_out != Some((out, size)) {
            self.grow_staging(out_bytes);
            self.top_k_out = Some((out, size));
        }
        self.record_top_k(buf, cols, rows, k, out)?;
        let data: Vec<u32> = bytemuck::pod_collect_to_vec(&self.read_back(out, out_bytes).await?);
        Ok(data
            .chunks_exact(2 * k)
            .map(|row| row.chunks_exact(2).filter(|e| e[0] != u32::MAX).map(|e| (e[0], f32::from_bits(e[1]))).collect())
            .collect())
    }

    fn can_chain(&self) -> bool {
        true
    }

    async fn submit_chained(&mut self, x: GpuActivation) -> Result<()> {
        self.chain_submit(x).await
    }

    fn begin_chained_batch(&mut self, start_pos: usize) -> Result<()> {
        self.chain_begin(start_pos)
    }

    async fn finish_chained(&mut self) -> Result<u32> {
        self.chain_finish().await
    }

    fn can_chain_masked(&self) -> bool {
        // A held step's timestamps would be resolved before it runs (profile.rs).
        self.profiler.is_none()
    }

    async fn submit_masked_chained(&mut self, x: GpuActivation, mask: &[u32]) -> Result<()> {
        self.chain_submit_masked(x, mask).await
    }

    fn submit_recorded(&mut self) -> Result<()> {
        GpuBackend::submit_recorded(self)
    }

    fn discard_recorded(&mut self) {
        self.drop_recorded();
    }
}

/// An activation as the kernels' `act` parameter (prelude.wgsl `gated_act`).
fn act_code(act: Activation) -> u32 {
    match act {
        Activation::Silu => 0,
        Activation::GeluTanh => 1,
    }
}
