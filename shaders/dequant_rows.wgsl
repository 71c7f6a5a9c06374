// Appended to the matmul family after the large batches' panel GEMM (matmul_wide.wgsl on
// the shader cores, matmul_wide_coop.wgsl on cooperative matrices), which defines the
// panel's element (PanelVec: vec4<f32> or vec4<f16>) and to_panel().
//   dequant_rows  p.rows panel rows of the weight part (the module's type, through w4)
//                 written into the panel: [rows, k], 4 values per invocation (dq8 over 8,
//                 one decode of a group's scale for all eight, measured 2.3x slower on an
//                 H200: 105 µs against 45 for gate's 8,960 × 1,536 Q4_K).
// Plain, panel row i is weight row p.w_row0 + i. Gated (p.gated: a feed-forward's gate in
// w and up in w2, for matmul_wide's gated tiles), each 128 panel rows are 64 gate rows
// from p.w_row0 + 64 (i / 128) and the same 64 rows of up; rows past the weight's
// p.rows2 repeat its last (their products land in outputs never stored).

// The panel as dequant_rows writes it (matmul_wide reads it at binding 12).
@group(0) @binding(13) var<storage, read_write> panel_out: array<PanelVec>;

@compute @workgroup_size(ITEMS_WG)
fn dequant_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let i = wg_linear(wid, nwg) * ITEMS_WG + lid;
    let k4 = p.k / 4u;
    if (i >= p.rows * k4) {
        return;
    }
    let r = i / k4;
    let e = 4u * (i % k4);
    if (p.gated == 0u) {
        panel_out[i] = to_panel(w4(p.w_row0 + r, e));
        return;
    }
    let row = min(p.w_row0 + (r / 128u) * 64u + r % 64u, p.rows2 - 1u);
    if (r % 128u < 64u) {
        panel_out[i] = to_panel(w4(row, e));
    } else {
        panel_out[i] = to_panel(w4_2(row, e));
    }
}
