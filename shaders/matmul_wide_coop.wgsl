// Appended to the matmul family after matmul_coop.wgsl where the device has cooperative
// matrices (16 × 16 × 16, f16 inputs, f32 sums, subgroups of 32): a large batch's matmul
// from a panel of the weight dequantized to f16 once (dequant_rows, shaders/
// dequant_rows.wgsl, appended after this), where matmul_tiled dequantizes every weight
// value again for each 128 activation rows while staging.
//   matmul_wide  out = x · panelᵀ: WM × WN output tiles, 8 subgroups of 64 activation
//                rows × 32 panel rows each (4 × 2 accumulator matrices), WCK values a step
//                staged as f16 in workgroup memory (the activations converted on the
//                way). Each invocation loads its four 8-value chunks of both tiles for the
//                next step before the subgroups multiply this one, so the loads are in
//                flight behind the matrix work. A GEMM probe over f16 operands on an H200
//                (coop_gemm_probe, bench/results/coop-panels-h200.md) had this shape at
//                99 TFLOP/s on gate's 8,960 × 1,536 over 512 rows, against 64–78 for
//                matmul_tiled over the Q4_K weight.
// Where the tiles are few the dot products split into spans as in matmul_tiled (wid.y:
// the tile of activation rows and the span; matmul_split_sum adds the spans' sums).
// Gated (p.gated: each 128 panel rows are 64 rows of a feed-forward's gate and the same
// 64 rows of up, as dequant_rows lays them out), the subgroups of a tile's gate half
// write act(gate) * up into output columns n0 / 2.. (p.rows2 of them in this panel), the
// up piece from the slot of the subgroup two on; never split.
// Precision: as matmul_coop.wgsl's (inputs rounded to f16, products exact, sums f32;
// activations clamped to f16's range).

// The panel's element as dequant_rows writes it.
alias PanelVec = vec4<f16>;
fn to_panel(v: vec4<f32>) -> PanelVec {
    let big = vec4<f32>(65504.0);
    return vec4<f16>(clamp(v, -big, big));
}

// The panel, bound read-only for matmul_wide (dequant_rows writes it at binding 13).
@group(0) @binding(12) var<storage, read> wh: array<vec4<f16>>;

// A staged row: the step plus 8 halves (the rows of a 16 × 16 load start in different
// banks; 144 bytes, a multiple of the 16 the matrix loads need), in vec4s: the tiles are
// vec4<f16>s, which the matrix loads read as f16s (indices and strides in vec4s), so a
// chunk of 8 values is staged with two stores.
const WLD4: u32 = (WCK + 8u) / 4u;
var<workgroup> wide_a: array<vec4<f16>, WM * WLD4>;
var<workgroup> wide_b: array<vec4<f16>, WN * WLD4>;
// A 16 × 16 f32 result piece per subgroup on its way to the output (bounds, residual,
// split sums, the gated activation).
var<workgroup> wide_cs: array<f32, 2048>;

// The piece in subgroup sg's slot of wide_cs: rows r0.., columns c0.. of the output (or
// of span `split`'s partial sums), 8 values per invocation; gated, only the gate half's
// subgroups write. Barriers around: the slots are written and read across subgroups.
fn wide_emit(sg: u32, lane: u32, r0: u32, c0: u32, split: u32) {
    workgroupBarrier();
    let gated = p.gated != 0u;
    if (!gated || sg % 4u < 2u) {
        let columns = select(p.rows, p.rows2, gated);
        for (var i = 0u; i < 8u; i++) {
            let at = lane + 32u * i;
            let r = r0 + at / 16u;
            let c = c0 + at % 16u;
            if (r < p.n && c < columns) {
                var v = wide_cs[sg * 256u + at];
                if (gated) {
                    v = gated_act(v, wide_cs[(sg + 2u) * 256u + at], p.act);
                }
                if (p.splits > 1u) {
                    out2[(split * p.n + r) * p.rows + c] = v;
                } else {
                    put(r, c, v);
                }
            }
        }
    }
    workgroupBarrier();
}

// Zeros where invocation `at` (matmul_wide's store position) stages its chunks.
fn wide_clear(at: u32) {
    for (var r = 0u; r < 128u; r += 32u) {
        wide_a[at + r * WLD4] = vec4<f16>();
        wide_a[at + r * WLD4 + 1u] = vec4<f16>();
        wide_b[at + r * WLD4] = vec4<f16>();
        wide_b[at + r * WLD4 + 1u] = vec4<f16>();
    }
}

@compute @workgroup_size(256)
fn matmul_wide(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let n0 = wid.x * WN;
    let m0 = (wid.y % p.m_tiles) * WM;
    let split = wid.y / p.m_tiles;
    let k_begin = split * p.k_span;
    let k_end = min(p.k, k_begin + p.k_span);
    // This subgroup's piece: activation rows wm.., panel rows wn.. of the tile.
    let sg = lid / 32u;
    let lane = lid % 32u;
    let wm = (sg / 4u) * 64u;
    let wn = (sg % 4u) * 32u;
    // This invocation's load unit: rows u, u + 32, u + 64 and u + 96 of both tiles,
    // values de..de + 7 of each step. Rows past the batch or the panel read its last row
    // (their products land in outputs never stored).
    let u = lid / 8u;
    let de = 8u * (lid % 8u);
    let xr0 = min(m0 + u, p.n - 1u) * p.x_stride;
    let xr1 = min(m0 + u + 32u, p.n - 1u) * p.x_stride;
    let xr2 = min(m0 + u + 64u, p.n - 1u) * p.x_stride;
    let xr3 = min(m0 + u + 96u, p.n - 1u) * p.x_stride;
    let pr0 = min(n0 + u, p.rows - 1u) * p.k;
    let pr1 = min(n0 + u + 32u, p.rows - 1u) * p.k;
    let pr2 = min(n0 + u + 64u, p.rows - 1u) * p.k;
    let pr3 = min(n0 + u + 96u, p.rows - 1u) * p.k;
    let at = u * WLD4 + de / 4u;
    let big = vec4<f32>(65504.0);
    var c00 = coop_mat16x16<f32, C>();
    var c01 = coop_mat16x16<f32, C>();
    var c10 = coop_mat16x16<f32, C>();
    var c11 = coop_mat16x16<f32, C>();
    var c20 = coop_mat16x16<f32, C>();
    var c21 = coop_mat16x16<f32, C>();
    var c30 = coop_mat16x16<f32, C>();
    var c31 = coop_mat16x16<f32, C>();
    // One more pass than steps: each loads step k0 (zeros past the span), multiplies the
    // step staged by the pass before, then stages its own; the loads are written once.
    // The first pass multiplies zeros (its tiles cleared here): naga takes a branch on
    // the step as non-uniform, and matrix operations need uniform control flow.
    wide_clear(at);
    workgroupBarrier();
    for (var k0 = k_begin; ; k0 += WCK) {
        let e = k0 + de;
        var a0 = vec4<f16>();
        var a1 = vec4<f16>();
        var a2 = vec4<f16>();
        var a3 = vec4<f16>();
        var a4 = vec4<f16>();
        var a5 = vec4<f16>();
        var a6 = vec4<f16>();
        var a7 = vec4<f16>();
        var b0 = vec4<f16>();
        var b1 = vec4<f16>();
        var b2 = vec4<f16>();
        var b3 = vec4<f16>();
        var b4 = vec4<f16>();
        var b5 = vec4<f16>();
        var b6 = vec4<f16>();
        var b7 = vec4<f16>();
        if (e < k_end) {
            a0 = vec4<f16>(clamp(x[(xr0 + e) / 4u], -big, big));
            a1 = vec4<f16>(clamp(x[(xr0 + e) / 4u + 1u], -big, big));
            a2 = vec4<f16>(clamp(x[(xr1 + e) / 4u], -big, big));
            a3 = vec4<f16>(clamp(x[(xr1 + e) / 4u + 1u], -big, big));
            a4 = vec4<f16>(clamp(x[(xr2 + e) / 4u], -big, big));
            a5 = vec4<f16>(clamp(x[(xr2 + e) / 4u + 1u], -big, big));
            a6 = vec4<f16>(clamp(x[(xr3 + e) / 4u], -big, big));
            a7 = vec4<f16>(clamp(x[(xr3 + e) / 4u + 1u], -big, big));
            b0 = wh[(pr0 + e) / 4u];
            b1 = wh[(pr0 + e) / 4u + 1u];
            b2 = wh[(pr1 + e) / 4u];
            b3 = wh[(pr1 + e) / 4u + 1u];
            b4 = wh[(pr2 + e) / 4u];
            b5 = wh[(pr2 + e) / 4u + 1u];
            b6 = wh[(pr3 + e) / 4u];
            b7 = wh[(pr3 + e) / 4u + 1u];
        }
        for (var kk = 0u; kk < WCK; kk += 16u) {
            // Indices as plain values: naga 30's SPIR-V writer does not emit one
            // computed inside a matrix load's pointer argument.
            let ia0 = wm * WLD4 + kk / 4u;
            let ia1 = ia0 + 16u * WLD4;
            let ia2 = ia0 + 32u * WLD4;
            let ia3 = ia0 + 48u * WLD4;
            let ib0 = wn * WLD4 + kk / 4u;
            let ib1 = ib0 + 16u * WLD4;
            let ma0 = coopLoadT<coop_mat16x16<f16, A>>(&wide_a[ia0], WLD4);
            let ma1 = coopLoadT<coop_mat16x16<f16, A>>(&wide_a[ia1], WLD4);
            let ma2 = coopLoadT<coop_mat16x16<f16, A>>(&wide_a[ia2], WLD4);
            let ma3 = coopLoadT<coop_mat16x16<f16, A>>(&wide_a[ia3], WLD4);
            let mb0 = coopLoad<coop_mat16x16<f16, B>>(&wide_b[ib0], WLD4);
            let mb1 = coopLoad<coop_mat16x16<f16, B>>(&wide_b[ib1], WLD4);
            c00 = coopMultiplyAdd(ma0, mb0, c00);
            c01 = coopMultiplyAdd(ma0, mb1, c01);
            c10 = coopMultiplyAdd(ma1, mb0, c10);
            c11 = coopMultiplyAdd(ma1, mb1, c11);
            c20 = coopMultiplyAdd(ma2, mb0, c20);
            c21 = coopMultiplyAdd(ma2, mb1, c21);
            c30 = coopMultiplyAdd(ma3, mb0, c30);
            c31 = coopMultiplyAdd(ma3, mb1, c31);
        }
        workgroupBarrier();
        if (k0 >= k_end) {
            break;
        }
        wide_a[at] = a0;
        wide_a[at + 1u] = a1;
        wide_a[at + 32u * WLD4] = a2;
        wide_a[at + 32u * WLD4 + 1u] = a3;
        wide_a[at + 64u * WLD4] = a4;
        wide_a[at + 64u * WLD4 + 1u] = a5;
        wide_a[at + 96u * WLD4] = a6;
        wide_a[at + 96u * WLD4 + 1u] = a7;
        wide_b[at] = b0;
        wide_b[at + 1u] = b1;
        wide_b[at + 32u * WLD4] = b2;
        wide_b[at + 32u * WLD4 + 1u] = b3;
        wide_b[at + 64u * WLD4] = b4;
        wide_b[at + 64u * WLD4 + 1u] = b5;
        wide_b[at + 96u * WLD4] = b6;
        wide_b[at + 96u * WLD4 + 1u] = b7;
        workgroupBarrier();
    }
    // Gated, the output columns of this tile's gate half (the up half writes nothing).
    let r0 = m0 + wm;
    let c0 = select(n0 + wn, n0 / 2u + wn, p.gated != 0u);
    let slot = sg * 256u;
    coopStoreT(c00, &wide_cs[slot], 16u);
    wide_emit(sg, lane, r0, c0, split);
    coopStoreT(c01, &wide_cs[slot], 16u);
    wide_emit(sg, lane, r0, c0 + 16u, split);
    coopStoreT(c10, &wide_cs[slot], 16u);
    wide_emit(sg, lane, r0 + 16u, c0, split);
    coopStoreT(c11, &wide_cs[slot], 16u);
    wide_emit(sg, lane, r0 + 16u, c0 + 16u, split);
    coopStoreT(c20, &wide_cs[slot], 16u);
    wide_emit(sg, lane, r0 + 32u, c0, split);
    coopStoreT(c21, &wide_cs[slot], 16u);
    wide_emit(sg, lane, r0 + 32u, c0 + 16u, split);
    coopStoreT(c30, &wide_cs[slot], 16u);
    wide_emit(sg, lane, r0 + 48u, c0, split);
    coopStoreT(c31, &wide_cs[slot], 16u);
    wide_emit(sg, lane, r0 + 48u, c0 + 16u, split);
}
