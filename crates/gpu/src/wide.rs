//! A large batch's matmul from its weight dequantized once (`dequant_rows`, shaders/
//! dequant_rows.wgsl), a panel of rows at a time, then multiplied by `matmul_wide`, whose
//! staging is then a copy:
//!   - on the shader cores (the browser's prefill): f32 panels (shaders/matmul_wide.wgsl)
//!     for the weights large enough to repay the dequantizing;
//!   - on cooperative matrices: f16 panels (shaders/matmul_wide_coop.wgsl) for a
//!     feed-forward's gate and up with their gated activation, whose panel interleaves the
//!     two weights' rows so one dispatch writes act(gate) · up.
//!
//! Where the batch or the weight is small, batch matmuls stay on `matmul_tiled`
//! (fusion.rs).

use super::*;
use crate::fusion::PendingSplitSum;

impl GpuBackend {
    /// Whether a batch matmul of `n` activation rows over a `rows` × `k` weight part
    /// (`gated`: a feed-forward's gate beside up, with the gated activation) runs as
    /// dequantized panels: over WIDE_MIN_ROWS or more rows, with vec4-aligned rows of
    /// input, where a panel fits, and
    ///   - on the shader cores, on a weight large enough (`wide_weight_pays`), gated
    ///     from WIDE_GATED_MIN_ROWS rows (`wide_gated_pays`: one f32 panel and one
    ///     dispatch for gate and up), or any with `GpuOptions::wide_every_weight`;
    ///   - on cooperative matrices, gated (or any with `wide_every_weight`): a GEMM
    ///     probe had the f16 panel GEMM 1.25x matmul_tiled's speed on gate's shape, and
    ///     no faster on down's or q's once the dequantizing and split sums are counted
    ///     (bench/results/coop-panels-h200.md).
    pub(crate) fn wide_pays(&self, n: usize, rows: usize, k: usize, x_stride: u32, gated: bool) -> bool {
        let coop = self.shader_features.coop_matrix;
        let weight = match (coop, gated) {
            (true, _) => gated || self.wide_every_weight,
            (false, true) => self.wide_every_weight || wide_gated_pays(n, rows, k),
            (false, false) => self.wide_every_weight || wide_weight_pays(n, rows, k),
        };
        // The coop kernel loads 8 values a chunk, the f32 one 4.
        self.allow_wide_batch
            && weight
            && n >= WIDE_MIN_ROWS
            && k.is_multiple_of(if coop { 8 } else { 4 })
            && x_stride.is_multiple_of(4)
            && self.wide_panel_rows(k, gated).is_some()
    }

    /// Weight rows (output columns; gated, gate rows) per panel of a `k`-value weight:
    /// within the panel form's limit and what one buffer may hold (`wide_form_rows`).
    fn wide_panel_rows(&self, k: usize, gated: bool) -> Option<usize> {
        wide_form_rows(k, self.max_part_bytes, self.panel_form(gated))
    }

    fn panel_form(&self, gated: bool) -> PanelForm {
        PanelForm::of(self.shader_features.coop_matrix, gated)
    }

    /// `out (+)= x · Wᵀ` over one weight part of type `ty` (`p` as record_batch_matmul
    /// takes it), or with `up` (up's part beside gate's in `wb`) `out = act(x · Gᵀ) ·
    /// (x · Uᵀ)`, a panel at a time: dequant_rows into the panel scratch, matmul_wide from
    /// it (its dot products split into spans where its tiles are few and it is not gated,
    /// the spans then summed by matmul_split_sum, or returned to be held as
    /// record_batch_matmul's are: `split_sum`). Callers check `wide_pays` first.
    #[must_use]
    pub(crate) fn record_wide_matmul(
        &mut self,
        p: MatmulParams,
        ty: GgmlType,
        [xb, wb, ob, rb]: [BufId; 4],
        up: Option<BufId>,
    ) -> Option<PendingSplitSum> {
        let (n, rows, k) = (p.n as usize, p.rows as usize, p.k as usize);
        let Some(panel_rows) = self.wide_panel_rows(k, up.is_some()) else {
            self.defer(err("matmul_wide: no panel fits this weight's rows"));
            return None;
        };
        let panel_rows = panel_rows.min(rows);
        let need = wide_panel_bytes(rows, k, self.max_part_bytes, self.panel_form(up.is_some())).unwrap_or(0);
        let panel = self.scratch_or_defer(self.wide_panel, "matmul dequantized panel", need)?;
        self.wide_panel = Some(panel);
        self.stats.wide_batch_matmuls += 1;
        let f32_key = KernelKey::new(Op::MatmulWide, Some(GgmlType::F32));
        let mut held = None;
        for r0 in (0..rows).step_by(panel_rows) {
            let pr = panel_rows.min(rows - r0);
            // Gated, a panel of pr gate rows holds them and up's (wide_gated_rows).
            let len = if up.is_some() { wide_gated_rows(pr) } else { pr };
            let dp =
                MatmulParams { rows: len as u32, w_row0: r0 as u32, gated: up.is_some() as u32, rows2: p.rows, ..p };
            self.record(
                Op::DequantRows,
                Some(ty),
                &[wb, up.unwrap_or(wb), panel.0],
                &dp,
                None,
                item_groups(len * k / 4),
            );
            self.stats.panels_dequantized += 1;
            let (gx, gy) = (len.div_ceil(WIDE_TILE.1), n.div_ceil(WIDE_TILE.0));
            // At most as many spans' sums as one buffer holds; gated, unsplit (the
            // activation needs whole sums).
            let room = (self.max_part_bytes / (n * len * 4) as u64).max(1) as usize;
            let splits = match up {
                None if self.allow_split_k => wide_split_k(gx * gy, k).min(room),
                _ => 1,
            };
            let k_span = k.div_ceil(splits).next_multiple_of(SPLIT_K_ALIGN);
            let splits = k.div_ceil(k_span);
            let mp = MatmulParams {
                rows: len as u32,
                rows2: pr as u32,
                gated: up.is_some() as u32,
                out_offset: p.out_offset + r0 as u32,
                splits: splits as u32,
                k_span: k_span as u32,
                m_tiles: gy as u32,
                ..p
            };
            let sums = self.split_sums_buffer(splits, n * len)?;
            self.record_grid(f32_key, &[xb, ob, rb, sums, panel.0], &mp, None, gx as u32, (gy * splits) as u32);
            if splits > 1 {
                // (Only a panel over whole rows is held: then it is the only panel.)
                held = self.split_sum(mp, GgmlType::F32, [ob, rb, sums]);
            }
        }
        held
    }
}
