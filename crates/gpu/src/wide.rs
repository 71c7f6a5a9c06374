//! A large batch's matmul on the shader cores (the browser's prefill): the weight part
//! dequantized to f32 a panel of rows at a time (`dequant_rows`), then multiplied by
//! `matmul_wide` (shaders/matmul_wide.wgsl), whose staging is then a copy. Where the
//! device has cooperative matrices, or the batch or the weight is small, batch matmuls
//! stay on `matmul_tiled` (fusion.rs).

use super::*;

impl GpuBackend {
    /// Whether a batch matmul of `n` activation rows over a `rows` × `k` weight part
    /// runs as dequantized panels: on the shader cores, over WIDE_MIN_ROWS or more rows,
    /// on a weight part large enough (`wide_weight_pays`, or any with
    /// `GpuOptions::wide_every_weight`), with vec4-aligned rows of input.
    pub(crate) fn wide_pays(&self, n: usize, rows: usize, k: usize, x_stride: u32) -> bool {
        self.allow_wide_batch
            && !self.shader_features.coop_matrix
            && n >= WIDE_MIN_ROWS
            && (self.wide_every_weight || wide_weight_pays(rows, k))
            && k.is_multiple_of(4)
            && x_stride.is_multiple_of(4)
            && self.wide_panel_rows(k).is_some()
    }

    /// Weight rows per panel of a `k`-value weight: within WIDE_PANEL_BYTES and what one
    /// buffer may hold.
    fn wide_panel_rows(&self, k: usize) -> Option<usize> {
        wide_panel_rows(k, WIDE_PANEL_BYTES.min(self.max_part_bytes))
    }

    /// `out (+)= x · Wᵀ` over one weight part of type `ty` (`p` as record_batch_matmul
    /// takes it), a panel at a time: dequant_rows into the panel scratch, matmul_wide
    /// from it (its dot products split into spans where its tiles are few, the spans
    /// then summed by matmul_split_sum). Callers check `wide_pays` first.
    pub(crate) fn record_wide_matmul(&mut self, p: MatmulParams, ty: GgmlType, [xb, wb, ob, rb]: [BufId; 4]) {
        let (n, rows, k) = (p.n as usize, p.rows as usize, p.k as usize);
        let Some(panel_rows) = self.wide_panel_rows(k) else {
            return self.defer(err("matmul_wide: no panel fits this weight's rows"));
        };
        let panel_rows = panel_rows.min(rows);
        let need = wide_panel_bytes(rows, k, self.max_part_bytes).unwrap_or(0);
        let panel = match self.scratch_buffer(self.wide_panel, "matmul dequantized panel", need) {
            Ok(s) => s,
            Err(e) => return self.defer(e),
        };
        self.wide_panel = Some(panel);
        self.stats.wide_batch_matmuls += 1;
        let f32_key = KernelKey::new(Op::MatmulWide, Some(GgmlType::F32));
        for r0 in (0..rows).step_by(panel_rows) {
            let pr = panel_rows.min(rows - r0);
            let dp = MatmulParams { rows: pr as u32, w_row0: r0 as u32, ..p };
            self.record(Op::DequantRows, Some(ty), &[wb, panel.0], &dp, None, item_groups(pr * k / 4));
            self.stats.panels_dequantized += 1;
            let (gx, gy) = (pr.div_ceil(WIDE_TILE.1), n.div_ceil(WIDE_TILE.0));
            // At most as many spans' sums as one buffer holds.
            let room = (self.max_part_bytes / (n * pr * 4) as u64).max(1) as usize;
            let splits = if self.allow_split_k { split_k(gx * gy, k, SPLIT_K_SHADER).min(room) } else { 1 };
            let k_span = k.div_ceil(splits).next_multiple_of(SPLIT_K_ALIGN);
            let splits = k.div_ceil(k_span);
            let mp = MatmulParams {
                rows: pr as u32,
                out_offset: p.out_offset + r0 as u32,
                splits: splits as u32,
                k_span: k_span as u32,
                m_tiles: gy as u32,
                ..p
            };
            let Some(sums) = self.split_sums_buffer(splits, n * pr) else {
                return;
            };
            self.record_grid(f32_key, &[xb, ob, rb, sums, panel.0], &mp, None, gx as u32, (gy * splits) as u32);
            if splits > 1 {
                self.stats.split_batch_matmuls += 1;
                self.record(Op::MatmulSplitSum, Some(GgmlType::F32), &[ob, rb, sums], &mp, None, item_groups(n * pr));
            }
        }
    }
}
