//! Fusion of op sequences the forward passes always emit, inside the backend: an op
//! is held back one step (`Pending`) so that the next op can join its dispatch —
//! a matmul and the residual add of its output, q/k/v matvecs (v may be of another
//! type; a batch's q/k/v on cooperative matrices or integer dot products too), the
//! gate/up matvecs with their gated activation, and the q/k preparation
//! with the KV-cache store of the attention after it (in decode, with the whole
//! attention: `attention_rope`), and a split batch matmul's sums into the residual
//! stream with the RMS norm of that stream after them, and a decode attention's merge of
//! its splits with the o projection's matvec after it (`matvec_merged`). Anything else
//! that arrives first records the held op on its own (`flush_pending`).

use super::*;

/// A matmul held back by one op, so a residual add that follows it joins its dispatch
/// (`res += W·x` beside `out = W·x`): two dispatches per layer fewer in decode. (Also
/// a member of a `Pending::Group`.)
pub(crate) struct PendingMatmul {
    pub(crate) x: GpuActivation,
    pub(crate) out: GpuActivation,
    pub(crate) n: usize,
    pub(crate) ty: GgmlType,
    pub(crate) cols: usize,
    pub(crate) row_words: usize,
    pub(crate) parts: Arc<[Part]>,
    /// The RMS norm that produced `x`, fused into this (decode) matvec.
    pub(crate) norm: Option<NormIn>,
    /// The merge of the attention splits that produce `x`, taken into this (decode)
    /// matvec (`matvec_merged`; never beside `norm`), with the kernel that takes it
    /// (`merged_matvec`, checked once when the merge is taken in).
    pub(crate) merge: Option<(PendingMerge, KernelKey)>,
}

/// A decode attention's merge of its splits (attn_combine) held back (see
/// `Pending::Merge`).
#[derive(Clone, Copy)]
pub(crate) struct PendingMerge {
    /// The attention's output, which the merge writes.
    pub(crate) out: GpuActivation,
    /// The attention's split scratch.
    pub(crate) scratch: BufId,
    /// The attention's parameters (one row; heads, head_dim, splits).
    pub(crate) p: AttnParams,
}

/// An RMS norm of whole rows fused into the matvec that reads its output: the norm's
/// input, weight buffer and epsilon (the matvec's `x` is the norm's output, which the
/// fused kernel still writes).
#[derive(Clone, Copy)]
pub(crate) struct NormIn {
    pub(crate) x: GpuActivation,
    pub(crate) w: BufId,
    pub(crate) eps: f32,
}

/// An RMS norm of whole rows held back (see `Pending::Norm`).
pub(crate) struct PendingNorm {
    pub(crate) x: GpuActivation,
    pub(crate) w: BufId,
    pub(crate) eps: f32,
    pub(crate) out: GpuActivation,
}

/// An op held back so that the op after it can join its dispatch.
pub(crate) enum Pending {
    /// A matmul: a residual add of its output may follow (`add`), or a second matmul
    /// over the same input and a same-shaped weight (`matmul`).
    Matmul(PendingMatmul),
    /// Two or three decode matvecs over the same input with weights of the same type
    /// and width: recorded as one `matvec_multi` dispatch (q, k, v projections) where
    /// every weight is one part; two of the same part layout followed by a gated
    /// activation of their outputs (a feed-forward's gate and up) are one
    /// `matvec_gated` dispatch per part. A batch's two or three on cooperative
    /// matrices or integer dot products (`multi_batch_fits`: q, k and v): one
    /// matmul_tiled over the weights side by side and one matmul_split_sum_multi
    /// (`record_batch_multi`); a batch's gate and up, held for the gated activation
    /// after them (`record_matmul_gated`), each on its own if it does not take them.
    Group(Vec<PendingMatmul>),
    /// An RMS norm of whole rows: the decode matvecs reading its output may take it in
    /// (`NormIn`), or a residual add of its output may join it (`rms_norm_add`).
    Norm(PendingNorm),
    /// q/k norm + rope (`rope_qk`): an attention over the same q and k may follow, whose
    /// KV-cache store then joins the dispatch.
    QkRope(PendingQkRope),
    /// The sums of a split batch matmul's spans into its output and a residual stream:
    /// an RMS norm of the stream's whole rows may join them (`matmul_split_sum_norm`:
    /// a prefill's norm after its o and down projections).
    SplitSum(PendingSplitSum),
    /// The merge of a decode attention's splits: the integer-dot matvec that reads its
    /// output next (the o projection) may merge them itself as it stages its input
    /// (`matvec_merged`), one dispatch a layer fewer.
    Merge(PendingMerge),
}

/// A split batch matmul's `matmul_split_sum` held back (see `Pending::SplitSum`).
pub(crate) struct PendingSplitSum {
    /// The matmul's parameters (n, rows, splits, strides; res_add set).
    pub(crate) p: MatmulParams,
    /// The weight type its kernel key carries (F32 for dequantized panels).
    pub(crate) ty: GgmlType,
    /// The output, the residual stream and the spans' partial sums.
    pub(crate) bufs: [BufId; 3],
}

/// A `rope_qk` held back (see `Pending::QkRope`).
pub(crate) struct PendingQkRope {
    pub(crate) q: GpuActivation,
    pub(crate) k: GpuActivation,
    /// The batch's values: biased in place (with `bias`) and stored (with a store).
    pub(crate) v: GpuActivation,
    pub(crate) heads: usize,
    pub(crate) kv_heads: usize,
    pub(crate) head_dim: usize,
    pub(crate) rope: RopeConfig,
    /// The frequency-factor buffer and its values.
    pub(crate) ff: Option<(BufId, Arc<[f32]>)>,
    /// The q and k norm weight buffers and the epsilon.
    pub(crate) norm: Option<(BufId, BufId, f32)>,
    /// The q, k and v bias buffers (never together with `norm`).
    pub(crate) bias: Option<(BufId, BufId, BufId)>,
}

/// Storage buffers `attention_rope` binds: within the 10 browsers commonly allow.
pub(crate) const ATTENTION_ROPE_STORAGE_BUFFERS: u32 = 10;

/// What `attention_rope` reads and writes besides the prepared rope's weights.
pub(crate) struct AttentionRopeBuffers<'a> {
    pub(crate) q: GpuActivation,
    pub(crate) out: GpuActivation,
    pub(crate) k: GpuActivation,
    pub(crate) v: GpuActivation,
    pub(crate) cache: &'a GpuKvCache,
    pub(crate) scratch: BufId,
}

/// Where `qk_rope` also stores the batch's k and v rows: the cache and its row width.
pub(crate) struct KvStoreTarget {
    pub(crate) k_cache: BufId,
    pub(crate) v_cache: BufId,
    pub(crate) width: usize,
}

impl GpuBackend {
    /// Records the pending op(s), if any, on their own.
    pub(crate) fn flush_pending(&mut self) {
        match self.pending.take() {
            None => {}
            Some(Pending::Matmul(pm)) => self.record_matmul_alone(pm),
            Some(Pending::Group(g)) => self.record_group(g),
            Some(Pending::QkRope(r)) => self.record_qk_rope(r, None),
            Some(Pending::Norm(n)) => self.record_norm(&n, None),
            Some(Pending::SplitSum(ss)) => self.record_split_sum(&ss),
            Some(Pending::Merge(m)) => self.record_merge(&m),
        }
    }

    /// The merge of an attention's splits after it: recorded now (a batch), or held for
    /// the decode matvec that reads its output (`Pending::Merge`).
    pub(crate) fn merge_splits(&mut self, m: PendingMerge) {
        self.flush_pending();
        match m.p.n {
            1 => self.pending = Some(Pending::Merge(m)),
            _ => self.record_merge(&m),
        }
    }

    /// Records the merge of an attention's splits on its own (attn_combine).
    fn record_merge(&mut self, m: &PendingMerge) {
        let bufs = [self.act(m.out).buf, m.scratch];
        self.record(Op::AttnCombine, None, &bufs, &m.p, None, m.p.n * m.p.heads);
    }

    /// The merged matvec's kernel for a weight of type `ty` and rows of `cols` values,
    /// where `m` can be taken into it (`GpuOptions::merge_splits_in_matvec`): a decode
    /// row whose every run is one head's (head_dim a multiple of 16), the attention's
    /// output as wide as the weight's rows, and the integer-dot kernel on this device.
    pub(crate) fn merged_matvec(&self, m: &PendingMerge, ty: GgmlType, cols: usize) -> Option<KernelKey> {
        let hd = m.p.head_dim as usize;
        let fits = self.merge_splits_in_matvec
            && m.p.n == 1
            && hd.is_multiple_of(16)
            && m.p.heads as usize * hd == cols
            && self.act(m.out).cols == cols
            && m.p.splits as usize <= MAX_SPLITS;
        let key = KernelKey::new(Op::MatvecMerged, Some(ty)).with_int_runs(cols);
        (fits && self.is_int(key)).then_some(key)
    }

    /// The sums of a split batch matmul's spans (`p.splits` > 1) into `out` (and, with
    /// res_add, the residual stream): returned to be held where they add into the
    /// stream's whole rows, so that a norm of the stream may join them, else recorded.
    pub(crate) fn split_sum(&mut self, p: MatmulParams, ty: GgmlType, bufs: [BufId; 3]) -> Option<PendingSplitSum> {
        self.stats.split_batch_matmuls += 1;
        let whole_rows = p.out_offset == 0 && p.rows == p.res_stride;
        let held = PendingSplitSum { p, ty, bufs };
        if p.res_add != 0 && whole_rows {
            return Some(held);
        }
        self.record_split_sum(&held);
        None
    }

    fn record_split_sum(&mut self, s: &PendingSplitSum) {
        let items = (s.p.n * s.p.rows) as usize;
        self.record(Op::MatmulSplitSum, Some(s.ty), &s.bufs, &s.p, None, item_groups(items));
    }

    /// A held split sum into `x`'s whole rows, with the RMS norm of `x` (weight `w`)
    /// into `out` in the same dispatch; false (nothing recorded) where none is held or
    /// it does not fit.
    pub(crate) fn norm_joins_split_sum(&mut self, x: GpuActivation, w: BufId, eps: f32, out: GpuActivation) -> bool {
        // (Every whole-row norm asks, decode's included: nothing more unless sums are held.)
        if !matches!(self.pending, Some(Pending::SplitSum(_))) {
            return false;
        }
        let (xb, cols, rows, hb) = (self.act(x).buf, self.act(x).cols, self.rows(x), self.act(out).buf);
        let fits = |p: &mut Pending| match p {
            Pending::SplitSum(s) => {
                let [ob, rb, _] = s.bufs;
                rb == xb && s.p.rows as usize == cols && s.p.n as usize == rows && hb != rb && hb != ob
            }
            _ => false,
        };
        let Some(Pending::SplitSum(s)) = self.pending.take_if(fits) else { return false };
        let [ob, rb, sums] = s.bufs;
        let p = MatmulParams { eps, ..s.p };
        self.stats.split_sums_normed += 1;
        self.record(Op::MatmulSplitSumNorm, Some(s.ty), &[w, ob, rb, sums, hb], &p, None, s.p.n);
        true
    }

    /// Records an RMS norm of whole rows (`res`: and `res += out`).
    pub(crate) fn record_norm(&mut self, n: &PendingNorm, res: Option<GpuActivation>) {
        let rows = self.rows(n.x);
        let cols = self.act(n.x).cols;
        let p = NormParams { n: rows as u32, cols: cols as u32, group: cols as u32, eps: n.eps };
        let (xb, ob) = (self.act(n.x).buf, self.act(n.out).buf);
        match res {
            Some(r) => self.record(Op::RmsNormAdd, None, &[xb, ob, n.w, self.act(r).buf], &p, None, rows as u32),
            None => self.record(Op::RmsNorm, None, &[xb, ob, n.w], &p, None, rows as u32),
        }
    }

    /// Records a fused input norm on its own (for a kernel that cannot take it), after
    /// which its matvec reads the norm's output as a plain input.
    fn unfuse_norm(&mut self, m: &mut PendingMatmul) {
        if let Some(nm) = m.norm.take() {
            let pn = PendingNorm { x: nm.x, w: nm.w, eps: nm.eps, out: m.x };
            self.record_norm(&pn, None);
        }
    }

    /// Records matvecs held as a group: one `matvec_multi` dispatch when every weight
    /// is one part, else each on its own.
    pub(crate) fn record_group(&mut self, mut g: Vec<PendingMatmul>) {
        // A batch's group: one dispatch over the weights where it fits. Not a pair of one
        // shape: a feed-forward's gate and up that no gated activation took stay apart
        // (SPLIT_K_COOP_MULTI was timed on q, k and v, not on them).
        let gate_up = g.len() == 2 && same_parts(&g[0], &g[1]);
        let batch = g.first().is_some_and(|m| m.n > MATVEC_MAX_ROWS);
        if batch && !gate_up && self.multi_batch_fits(&g.iter().collect::<Vec<_>>()) {
            return self.record_batch_multi(g);
        }
        if g.len() < 2 || g.len() > 3 || g.iter().any(|m| m.parts.len() != 1 || m.n > 1) {
            for m in g {
                self.record_matmul_alone(m);
            }
            return;
        }
        // The normed variant binds nine storage buffers.
        if self.gpu.limits.max_storage_buffers_per_shader_stage < 9 {
            self.unfuse_norm(&mut g[0]);
        }
        let first = &g[0];
        let third = g.last().filter(|_| g.len() == 3).unwrap_or(first);
        let norm = first.norm;
        let xb = match norm {
            Some(nm) => self.act(nm.x).buf,
            None => self.act(first.x).buf,
        };
        let x_stride = self.act(first.x).cols as u32;
        let mut bufs = vec![xb];
        let mut rows = [0u32; 3];
        for (i, m) in g.iter().enumerate() {
            bufs.push(m.parts[0].buf);
            bufs.push(self.act(m.out).buf);
            rows[i] = m.parts[0].rows as u32;
        }
        let op = if norm.is_some() { Op::MatvecMultiNormed } else { Op::MatvecMulti };
        let key = KernelKey::new(op, Some(first.ty)).with_third_type(third.ty).with_int_runs(first.cols);
        let lanes = matvec_lanes(rows.iter().sum::<u32>() as usize, first.cols);
        let groups: usize = rows.iter().map(|&r| (r as usize).div_ceil(matvec_rows(lanes))).sum();
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
            row_words3: third.row_words as u32,
            lanes,
            eps: norm.map_or(0.0, |nm| nm.eps),
            ..Default::default()
        };
        if let Some(nm) = norm {
            bufs.extend([nm.w, self.act(first.x).buf]);
        }
        self.record_keyed(key, &bufs, &p, None, groups as u32);
    }

    /// Records gate and up (one row, same weight type and part layout) and
    /// `out = act(gate) * up` as one dispatch per weight part.
    pub(crate) fn record_matvec_gated(&mut self, g: PendingMatmul, u: PendingMatmul, act: u32, out: GpuActivation) {
        let xb = match g.norm {
            Some(nm) => self.act(nm.x).buf,
            None => self.act(g.x).buf,
        };
        let hb = self.act(g.x).buf;
        let (x_stride, ob, out_stride) = (self.act(g.x).cols as u32, self.act(out).buf, self.act(out).cols as u32);
        let key = |op| KernelKey::new(op, Some(g.ty)).with_int_runs(g.cols);
        let op = if g.norm.is_some() { Op::MatvecGatedNormed } else { Op::MatvecGated };
        // On integer dot products, where each workgroup's 16 outputs make a run, it also
        // writes its output quantized for the down projection after it (`qx_ready`).
        let int = self.is_int(key(op));
        let whole_runs = g.parts.iter().all(|gp| gp.row0 % 16 == 0 && matvec_lanes(gp.rows, g.cols) == 16);
        let qx = match int && whole_runs && out_stride % 32 == 0 {
            true => self.qx_runs_of(ob, out_stride),
            false => None,
        };
        for (gp, up) in g.parts.iter().zip(u.parts.iter()) {
            let p = MatmulParams {
                n: 1,
                k: g.cols as u32,
                rows: gp.rows as u32,
                row_words: g.row_words as u32,
                x_stride,
                out_stride,
                out_offset: gp.row0 as u32,
                act,
                lanes: matvec_lanes(gp.rows, g.cols),
                eps: g.norm.map_or(0.0, |nm| nm.eps),
                qx_runs: qx.map_or(0, |_| out_stride / 16),
                ..Default::default()
            };
            let groups = gp.rows.div_ceil(matvec_rows(p.lanes)) as u32;
            let qb = qx.unwrap_or(self.dummy);
            match g.norm {
                Some(nm) => self.record_keyed(key(op), &[xb, gp.buf, ob, up.buf, nm.w, hb, qb], &p, None, groups),
                None => self.record_keyed(key(op), &[xb, gp.buf, ob, up.buf, qb], &p, None, groups),
            }
        }
        self.qx_ready = qx.map(|q| (ob, q));
    }

    /// Whether `key` runs as an integer-dot kernel on this device.
    fn is_int(&self, key: KernelKey) -> bool {
        key.with_features(self.shader_features).features.int_runs > 0
    }

    /// The buffer of quantized runs for an activation buffer of `cols` values a row
    /// (matvec_gated's `qx`), made on first use; None where it cannot be made (the
    /// gate/up kernel then writes no runs).
    fn qx_runs_of(&mut self, act: BufId, cols: u32) -> Option<BufId> {
        if let Some(&q) = self.qx_bufs.get(&(act, cols)) {
            return Some(q);
        }
        // Four vec4<u32> sections of a run each.
        let q = self.storage_buffer("quantized runs", cols as u64 / 16 * 64).ok()?;
        self.qx_bufs.insert((act, cols), q);
        Some(q)
    }

    /// Whether a batch's gate and up matmuls (`g`, `u`: one part each, same type and
    /// shape) can be one dispatch with the gated activation (`record_matmul_gated`): on
    /// cooperative matrices unsplit, as the activation needs whole sums; on the shader
    /// cores as one gated f32 panel (`wide_pays` gated: matmul_tiled has no gated form
    /// there).
    pub(crate) fn gated_batch_fits(&self, g: &PendingMatmul, u: &PendingMatmul) -> bool {
        let one_part = |m: &PendingMatmul| m.parts.len() == 1 && m.norm.is_none();
        let kernel_fits = || match self.shader_features.coop_matrix {
            true => self.batch_grid(g.parts[0].rows, g.n, g.cols, true).2 == 1,
            false => self.wide_pays(g.n, g.parts[0].rows, g.cols, self.act(g.x).cols as u32, true),
        };
        g.n > MATVEC_MAX_ROWS
            && one_part(g)
            && one_part(u)
            && same_parts(g, u)
            && g.ty == u.ty
            && g.row_words == u.row_words
            && kernel_fits()
    }

    /// Whether a batch's matmuls over one input (two or three held as a group: a
    /// layer's q, k and v) can be one dispatch over their weights side by side
    /// (`record_batch_multi`): one part each, of one width, the first two of one type
    /// (the third's may differ: v beside q and k), none that would run as dequantized
    /// panels; on cooperative matrices, or on integer dot products where each weight's
    /// type takes that kernel (`batch_key`; the f32 kernel has no such form). On an H200
    /// the 1.5B's q, k and v with their sums took 119 µs a layer as three and 65 as one
    /// (bench/results/qkv-submit-h200.md): k and v alone are 16 tiles of 128 × 128 over
    /// 512 rows, which leave most of the GPU idle.
    pub(crate) fn multi_batch_fits(&self, ms: &[&PendingMatmul]) -> bool {
        let (Some(first), true) = (ms.first(), (2..=3).contains(&ms.len())) else { return false };
        // Asked at every matmul held beside another, decode's matvecs included: the
        // plain comparisons first, so a decode step stops at the first.
        let shaped = |m: &&PendingMatmul| {
            m.n == first.n && m.n > MATVEC_MAX_ROWS && m.x == first.x && m.cols == first.cols && m.parts.len() == 1
        };
        if !ms.iter().all(shaped) || ms[1].ty != first.ty || ms[1].row_words != first.row_words {
            return false;
        }
        let x_stride = self.act(first.x).cols as u32;
        let int = |m: &&PendingMatmul| {
            let key = self.batch_key(KernelKey::new(Op::MatmulTiled, Some(m.ty)), m.cols, x_stride);
            key.with_features(self.shader_features).features.int_batch > 0
        };
        let tiled =
            |m: &&PendingMatmul| m.norm.is_none() && !self.wide_pays(m.n, m.parts[0].rows, m.cols, x_stride, false);
        ms.iter().all(tiled) && (self.shader_features.coop_matrix || ms.iter().all(int))
    }

    /// Records a batch's matmuls over one input (`multi_batch_fits`) as one
    /// matmul_tiled over their weights side by side, every tile's sums into the partial
    /// sums (split where the tiles are few), then matmul_split_sum_multi, which writes
    /// each column into its weight's output.
    fn record_batch_multi(&mut self, g: Vec<PendingMatmul>) {
        let (first, third) = (&g[0], g.get(2));
        let rows: Vec<usize> = g.iter().map(|m| m.parts[0].rows).collect();
        let total: usize = rows.iter().sum();
        let (n, k) = (first.n, first.cols);
        let (gx, gy, splits) = self.batch_grid(total, n, k, false);
        let splits = match self.shader_features.coop_matrix {
            true if self.allow_split_k => split_k(gx * gy, k, SPLIT_K_COOP_MULTI),
            _ => splits,
        };
        let p = MatmulParams {
            n: n as u32,
            k: k as u32,
            rows: total as u32,
            row_words: first.row_words as u32,
            x_stride: self.act(first.x).cols as u32,
            out_stride: self.act(first.out).cols as u32,
            rows2: rows[1] as u32,
            rows3: rows.get(2).map_or(0, |&r| r as u32),
            row_words3: third.map_or(first.row_words, |m| m.row_words) as u32,
            splits: splits as u32,
            k_span: k.div_ceil(splits).next_multiple_of(SPLIT_K_ALIGN) as u32,
            m_tiles: gy as u32,
            multi: 1,
            ..Default::default()
        };
        let Some(sums) = self.partial_sums_buffer(splits * n * total) else { return };
        let (xb, ob, w2) = (self.act(first.x).buf, self.act(first.out).buf, g[1].parts[0].buf);
        let (w3, vb) = match third {
            Some(m) => (m.parts[0].buf, self.act(m.out).buf),
            // No third weight: the second again (read only) and the dummy output.
            None => (w2, self.dummy),
        };
        let key =
            KernelKey::new(Op::MatmulTiled, Some(first.ty)).over_several_weights(third.map_or(first.ty, |m| m.ty));
        let key = self.batch_key(key, k, p.x_stride);
        let digits = key.with_features(self.shader_features).features.int_batch;
        // x, w, out (unwritten: the sums go to their kernel), no residual, the sums, w2
        // (over integer dot products: the quantized input, w2 in the last slot), w3.
        let mut bufs = [xb, first.parts[0].buf, ob, self.dummy, sums, w2, w3, w2];
        if digits > 0 {
            let Some(qx) = self.batch_input_quantized(xb, &p, digits) else { return };
            bufs[5] = qx;
        }
        self.record_grid(key, &bufs, &p, None, gx as u32, (gy * splits) as u32);
        self.stats.multi_batch_matmuls += 1;
        let kb = self.act(g[1].out).buf;
        self.record(Op::MatmulSplitSumMulti, Some(first.ty), &[ob, kb, sums, vb], &p, None, item_groups(n * total));
        // (Its outputs are never x: `beside` in matmul().)
        self.keep_batch_input_quantized(xb, &p, digits, [ob, self.dummy]);
    }

    /// Records a batch's gate and up and `out = act(gate) * up` as one dispatch
    /// (`gated_batch_fits` holds): on cooperative matrices, or a gated f32 panel.
    pub(crate) fn record_matmul_gated(&mut self, g: PendingMatmul, u: PendingMatmul, act: u32, out: GpuActivation) {
        let p = MatmulParams {
            n: g.n as u32,
            k: g.cols as u32,
            rows: g.parts[0].rows as u32,
            row_words: g.row_words as u32,
            x_stride: self.act(g.x).cols as u32,
            out_stride: self.act(out).cols as u32,
            act,
            ..Default::default()
        };
        let bufs = [self.act(g.x).buf, g.parts[0].buf, self.act(out).buf, self.dummy];
        // Gated: unsplit (gated_batch_fits), so nothing is held.
        let held = self.record_batch_matmul(p, g.ty, bufs, Some(u.parts[0].buf));
        debug_assert!(held.is_none());
    }

    /// Records a matmul's dispatches without a residual add (so none is held).
    pub(crate) fn record_matmul_alone(&mut self, pm: PendingMatmul) {
        let held = self.record_matmul(pm, None);
        debug_assert!(held.is_none(), "a split sum held without a residual stream");
    }

    /// Records a matmul's dispatches (one per weight part); with `res`, each also adds
    /// its result into that activation. A batch matmul split over whole rows of `res`
    /// returns its spans' sums unrecorded (`split_sum`), for the caller to hold.
    #[must_use]
    pub(crate) fn record_matmul(
        &mut self,
        mut pm: PendingMatmul,
        res: Option<GpuActivation>,
    ) -> Option<PendingSplitSum> {
        // The normed matvec writes its normalised input where the residual would go.
        if res.is_some() {
            self.unfuse_norm(&mut pm);
        }
        // The attention splits' merge taken in (`matvec_merged`).
        let merge = pm.merge.take();
        let (xa, oa) = (self.act(pm.x), self.act(pm.out));
        let (hb, ob, x_stride, out_stride) = (xa.buf, oa.buf, xa.cols as u32, oa.cols as u32);
        let xb = match pm.norm {
            Some(nm) => self.act(nm.x).buf,
            None => hb,
        };
        let (rb, res_stride) = match res {
            Some(r) => (self.act(r).buf, self.act(r).cols as u32),
            None => (self.dummy, 0),
        };
        let n = pm.n;
        // The runs the gate/up kernel just wrote of this input, where the weight type
        // reads them: no staging in this matvec.
        let staged = self.qx_ready.filter(|&(a, _)| a == xb && n == 1 && pm.norm.is_none()).map(|(_, q)| q);
        let staged_key = KernelKey::new(Op::Matvec, Some(pm.ty)).with_input_staged(pm.cols);
        let staged = staged.filter(|_| self.is_int(staged_key));
        // One row: the integer-dot kernel where the weight type has one.
        let int_key = |op| KernelKey::new(op, Some(pm.ty)).with_int_runs(if n == 1 { pm.cols } else { 0 });
        let int_matvec = self.is_int(int_key(Op::Matvec));
        let mut held = None;
        for part in pm.parts.iter() {
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
                lanes: matvec_lanes(part.rows, pm.cols),
                eps: pm.norm.map_or(0.0, |nm| nm.eps),
                ..Default::default()
            };
            let (rows, tall_rows) = (matvec_rows(p.lanes), matvec_tall_rows(p.lanes));
            let bufs = [xb, part.buf, ob, rb];
            if let Some((m, key)) = merge {
                let p = MatmulParams { merge_splits: m.p.splits, merge_head_dim: m.p.head_dim, ..p };
                let bufs = [m.scratch, part.buf, ob, rb, xb];
                self.record_keyed(key, &bufs, &p, None, part.rows.div_ceil(rows) as u32);
                self.stats.merged_matvecs += 1;
            } else if let Some(nm) = pm.norm {
                let bufs = [xb, part.buf, ob, rb, nm.w, hb];
                self.record_keyed(int_key(Op::MatvecNormed), &bufs, &p, None, part.rows.div_ceil(rows) as u32);
            } else if n == 1 && part.rows >= TALL_MIN_ROWS && !int_matvec {
                // A vocabulary-sized weight without integer-dot units (with them, the
                // integer-dot matvec below: Qwen2.5-1.5B's Q6_K output 142 → 106 µs a
                // token on an H100).
                self.record(Op::MatvecTall, Some(pm.ty), &bufs, &p, None, part.rows.div_ceil(tall_rows) as u32);
            } else if let Some(q) = staged {
                self.record_keyed(staged_key, &[q, part.buf, ob, rb], &p, None, part.rows.div_ceil(rows) as u32);
                self.stats.input_staged_matvecs += 1;
            } else if n <= MATVEC_MAX_ROWS {
                self.record_keyed(int_key(Op::Matvec), &bufs, &p, None, part.rows.div_ceil(rows) as u32);
            } else if let Some(ss) = self.record_batch_matmul(p, pm.ty, [xb, part.buf, ob, rb], None) {
                // (Only a part over whole rows is held: then it is the only part.)
                held = Some(ss);
            }
        }
        held
    }

    /// The buffer a batch matmul split into `splits` spans writes its `outputs` partial
    /// sums per span to (grown on need, rounded up to a power of two within a binding's
    /// bytes, so that longer prompts rarely need another); unsplit, any buffer not bound
    /// elsewhere in the dispatch. None after deferring an error.
    pub(crate) fn split_sums_buffer(&mut self, splits: usize, outputs: usize) -> Option<BufId> {
        if splits <= 1 {
            return Some(self.dummy_read);
        }
        self.partial_sums_buffer(splits * outputs)
    }

    /// The buffer of `split_sums_buffer` for `values` partial sums in all (a matmul over
    /// several weights writes its sums there even unsplit).
    fn partial_sums_buffer(&mut self, values: usize) -> Option<BufId> {
        let bytes = (values * 4) as u64;
        let grown = bytes.next_power_of_two().min(self.max_part_bytes).max(bytes);
        let s = self.scratch_or_defer(self.split_sums, "matmul split sums", grown)?;
        self.split_sums = Some(s);
        Some(s.0)
    }

    /// The grid of a batch matmul over `rows` weight rows and `n` activation rows of `k`
    /// values, (tiles across the weight, tiles down the batch, spans the dot products
    /// split into: `split_k`). Gated, a tile covers half
    /// as many weight rows (its other half is the same rows of up).
    fn batch_grid(&self, rows: usize, n: usize, k: usize, gated: bool) -> (usize, usize, usize) {
        let (tm, tn) = batch_tile(self.shader_features);
        let (gx, gy) = (rows.div_ceil(if gated { tn / 2 } else { tn }), n.div_ceil(tm));
        let splits = if self.allow_split_k { split_k(gx * gy, k, split_k_rule(self.shader_features)) } else { 1 };
        (gx, gy, splits)
    }

    /// A batch's matmul over one weight part (`matmul_tiled`); its dot products split
    /// into spans where it has few output tiles (`split_k`),
    /// their partial sums then added up by a second dispatch. With `up` (a feed-forward's
    /// up weight beside the gate in `wb`), gated: act(gate) * up into `ob`, unsplit
    /// (`gated_batch_fits`).
    #[must_use]
    fn record_batch_matmul(
        &mut self,
        mut p: MatmulParams,
        ty: GgmlType,
        [xb, wb, ob, rb]: [BufId; 4],
        up: Option<BufId>,
    ) -> Option<PendingSplitSum> {
        let (n, rows, k) = (p.n as usize, p.rows as usize, p.k as usize);
        if self.wide_pays(n, rows, k, p.x_stride, up.is_some()) {
            return self.record_wide_matmul(p, ty, [xb, wb, ob, rb], up);
        }
        let (gx, gy, splits) = self.batch_grid(rows, n, k, up.is_some());
        p.gated = up.is_some() as u32;
        p.splits = splits as u32;
        p.k_span = k.div_ceil(splits).next_multiple_of(SPLIT_K_ALIGN) as u32;
        p.m_tiles = gy as u32;
        let sums = self.split_sums_buffer(splits, n * rows)?;
        // Not gated: the weight again (read only) in up's slot; and in the slots of the
        // second and third of several weights.
        let mut bufs = [xb, wb, ob, rb, sums, up.unwrap_or(wb), wb, wb];
        let key = self.batch_key(KernelKey::new(Op::MatmulTiled, Some(ty)), k, p.x_stride);
        let digits = key.with_features(self.shader_features).features.int_batch;
        if digits > 0 {
            // The quantized input, in up's slot.
            bufs[5] = self.batch_input_quantized(xb, &p, digits)?;
        }
        self.record_grid(key, &bufs, &p, None, gx as u32, (gy * splits) as u32);
        let held = if splits > 1 { self.split_sum(p, ty, [ob, rb, sums]) } else { None };
        self.keep_batch_input_quantized(xb, &p, digits, [ob, rb]);
        held
    }

    /// `key` (a matmul_tiled's) on integer dot products where the device runs that kernel
    /// (never gated: that is on cooperative matrices) and it is the faster kernel for the
    /// weight type(s) (quantize_runs reads the activations as vec4s: `x_stride` a multiple
    /// of 4).
    fn batch_key(&self, key: KernelKey, k: usize, x_stride: u32) -> KernelKey {
        let pays = |t: GgmlType| self.int_batch_every_type || tuning::int_batch_pays(t, self.shader_features.int_batch);
        match x_stride.is_multiple_of(4) && key.ty.is_some_and(pays) && key.ty3.is_none_or(pays) {
            true => key.with_int_batch(k),
            false => key,
        }
    }

    /// The integer-dot kernel's input `xb` (as `p` reads it) quantized in `digits` digits
    /// (quantize_runs), recorded now unless the last batch matmul left it so: once for
    /// q, k and v, not again by every tile across the weight. None after deferring an
    /// error.
    fn batch_input_quantized(&mut self, xb: BufId, p: &MatmulParams, digits: u32) -> Option<BufId> {
        let (n, k) = (p.n as usize, p.k as usize);
        self.stats.int_batch_matmuls += 1;
        // A held op recorded now could write x: first it, then the test.
        self.flush_pending();
        if self.batch_qx_of != Some((xb, p.n, p.k, p.x_stride, digits)) {
            let need = (n * k / 16 * (digits as usize + 1) * 16) as u64;
            let qx = self.scratch_or_defer(self.batch_qx, "matmul quantized input", need)?;
            self.batch_qx = Some(qx);
            let qp = QuantParams { n: n as u32, k: k as u32, x_stride: p.x_stride, digits };
            self.record(Op::QuantizeRuns, None, &[xb, qx.0], &qp, None, item_groups(n * k / 16));
            self.stats.batch_inputs_quantized += 1;
        }
        self.batch_qx.map(|q| q.0)
    }

    /// After an integer-dot batch matmul over `xb` wrote `[out, res]`: the next matmul
    /// may read the same quantized input, unless this one wrote x.
    fn keep_batch_input_quantized(&mut self, xb: BufId, p: &MatmulParams, digits: u32, [ob, rb]: [BufId; 2]) {
        if digits > 0 && ob != xb && (p.res_add == 0 || rb != xb) {
            self.batch_qx_of = Some((xb, p.n, p.k, p.x_stride, digits));
        }
    }

    /// The blob offset of the (cos, sin) table of batch rows `row0..row0 + rows` (each
    /// at its `position`: in a packed batch, within its sequence), written on its first
    /// use in this submission (every layer shares it), its values computed on its first
    /// use in the batch. None after deferring an error.
    fn rope_table_at(
        &mut self,
        rope: &RopeConfig,
        ff: Option<&(BufId, Arc<[f32]>)>,
        row0: usize,
        rows: usize,
    ) -> Option<u32> {
        let key = (*rope, ff.map(|f| f.0), self.start_pos + row0, rows);
        let table_bytes = (rows * rope.n_rot / 2) as u64 * 8;
        // (Before the lookup: making room may submit, which forgets every offset.)
        if !self.ensure_room(table_bytes.next_multiple_of(PARAMS_SLOT) + PARAMS_SLOT) {
            self.defer(err("rope: table does not fit the parameter buffer"));
            return None;
        }
        let i = match self.rope_tables.iter().position(|t| t.key == key) {
            Some(i) => i,
            None => {
                let positions: Vec<usize> = (row0..row0 + rows).map(|r| self.position(r)).collect();
                let values = rope_table(rope, ff.map(|f| &f.1[..]), &positions).into();
                self.rope_tables.push(BatchRopeTable { key, values, offset: None });
                self.rope_tables.len() - 1
            }
        };
        if let Some(o) = self.rope_tables[i].offset {
            return Some(o);
        }
        let values = self.rope_tables[i].values.clone();
        let o = self.push_blob(bytemuck::cast_slice(&values));
        self.rope_tables[i].offset = Some(o);
        Some(o)
    }

    /// Batch rows per rope dispatch: as many as one table binding holds.
    fn rope_rows_per_dispatch(rope: &RopeConfig) -> usize {
        ((TABLE_BYTES / (rope.n_rot as u64 / 2 * 8)) as usize).max(1)
    }

    /// Records a rope of one activation's heads.
    pub(crate) fn record_rope(
        &mut self,
        x: GpuActivation,
        heads: usize,
        head_dim: usize,
        rope: &RopeConfig,
        ff: Option<(BufId, Arc<[f32]>)>,
    ) {
        let n = self.rows(x);
        let (xb, cols) = (self.act(x).buf, self.act(x).cols);
        let half = rope.n_rot / 2;
        let mut row0 = 0;
        while row0 < n {
            let rows = Self::rope_rows_per_dispatch(rope).min(n - row0);
            let Some(offset) = self.rope_table_at(rope, ff.as_ref(), row0, rows) else { return };
            let p = RopeParams {
                n: rows as u32,
                row0: row0 as u32,
                cols: cols as u32,
                heads: heads as u32,
                head_dim: head_dim as u32,
                half: half as u32,
                neox: (rope.style == RopeStyle::Neox) as u32,
                ..Default::default()
            };
            let threads = rows * heads * half;
            self.record(Op::Rope, None, &[xb], &p, Some(offset), item_groups(threads));
            row0 += rows;
        }
    }

    /// What a held `rope_qk` binds in its q/k norms' (or biases') slots and v bias's:
    /// the q and k norm weights or biases, v's bias (dummies where absent), and the
    /// norm's epsilon.
    fn prep_buffers(&self, r: &PendingQkRope) -> (BufId, BufId, BufId, f32) {
        let (qn, kn, eps) = r.norm.unwrap_or((self.dummy_read, self.dummy_read, 0.0));
        match r.bias {
            Some((bq, bk, bv)) => (bq, bk, bv, eps),
            None => (qn, kn, self.dummy_read, eps),
        }
    }

    /// Records a decode step's attention with the held `rope_qk` taken in
    /// (`attention_rope`: biases, q/k norms, rotation and the KV store in the attention
    /// dispatch), then the merge of its splits if it has any (held: `merge_splits`).
    /// `p`: the attention's parameters, completed here with the rope's.
    pub(crate) fn record_attention_rope(&mut self, r: PendingQkRope, mut p: AttnParams, b: AttentionRopeBuffers<'_>) {
        let Some(table) = self.rope_table_at(&r.rope, r.ff.as_ref(), 0, 1) else { return };
        let (qn, kn, vbias, eps) = self.prep_buffers(&r);
        p.half = (r.rope.n_rot / 2) as u32;
        p.neox = (r.rope.style == RopeStyle::Neox) as u32;
        p.norm = r.norm.is_some() as u32;
        p.eps = eps;
        p.bias = r.bias.is_some() as u32;
        let [qb, ob, kb, vb] = [b.q, b.out, b.k, b.v].map(|a| self.act(a).buf);
        let bufs = [qb, ob, kb, vb, qn, kn, b.cache.k, b.cache.v, b.scratch, vbias];
        self.record(Op::AttentionRope, None, &bufs, &p, Some(table), p.heads * p.splits);
        if p.splits > 1 {
            self.merge_splits(PendingMerge { out: b.out, scratch: b.scratch, p });
        }
    }

    /// Records a held `rope_qk` (q/k norms and rotation in one dispatch per table), and
    /// with `store` the KV-cache store of the batch's k and v rows too.
    pub(crate) fn record_qk_rope(&mut self, r: PendingQkRope, store: Option<KvStoreTarget>) {
        let n = self.rows(r.q);
        let (qa, ka) = (self.act(r.q), self.act(r.k));
        let (qb, q_cols, kb, k_cols) = (qa.buf, qa.cols, ka.buf, ka.cols);
        let (qn, kn, vbias, eps) = self.prep_buffers(&r);
        let (kc, vc, width) = match &store {
            Some(s) => (s.k_cache, s.v_cache, s.width),
            None => (self.dummy, self.dummy, 0),
        };
        // v is written (biased in place) or read (stored) only when needed.
        let (vb, v_stride) = match store.is_some() || r.bias.is_some() {
            true => (self.act(r.v).buf, self.act(r.v).cols),
            false => (self.dummy, 0),
        };
        let half = r.rope.n_rot / 2;
        let mut row0 = 0;
        while row0 < n {
            let rows = Self::rope_rows_per_dispatch(&r.rope).min(n - row0);
            let Some(offset) = self.rope_table_at(&r.rope, r.ff.as_ref(), row0, rows) else { return };
            let p = RopeParams {
                n: rows as u32,
                row0: row0 as u32,
                cols: q_cols as u32,
                heads: r.heads as u32,
                head_dim: r.head_dim as u32,
                half: half as u32,
                neox: (r.rope.style == RopeStyle::Neox) as u32,
                heads2: r.kv_heads as u32,
                cols2: k_cols as u32,
                norm: r.norm.is_some() as u32,
                eps,
                store: store.is_some() as u32,
                start: self.start_pos as u32,
                width: width as u32,
                v_stride: v_stride as u32,
                bias: r.bias.is_some() as u32,
            };
            let groups = (rows * (r.heads + r.kv_heads)) as u32;
            match r.bias {
                Some(_) => {
                    self.record(Op::QkRopeBias, None, &[qb, kb, vb, vbias, qn, kn, kc, vc], &p, Some(offset), groups)
                }
                None => self.record(Op::QkRope, None, &[qb, kb, vb, qn, kn, kc, vc], &p, Some(offset), groups),
            }
            row0 += rows;
        }
    }
}

/// Whether two matmuls' weights are split into parts alike.
pub(crate) fn same_parts(a: &PendingMatmul, b: &PendingMatmul) -> bool {
    a.parts.len() == b.parts.len()
        && a.parts.iter().zip(b.parts.iter()).all(|(p, q)| p.row0 == q.row0 && p.rows == q.rows)
}
