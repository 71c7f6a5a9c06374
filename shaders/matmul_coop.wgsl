// Appended to the matmul family (shaders/matmul.wgsl) instead of matmul_tiled.wgsl
// where the device has cooperative matrices (tensor cores: wgpu's experimental
// `wgpu_cooperative_matrix`, 16 × 16 × 16 with f16 inputs and f32 sums, subgroups of
// 32; native only, see ShaderFeatures::coop_matrix). shaders.rs prepends the `enable`s,
// the tile's size, CM activation rows × CN weight rows (kernels::batch_tile, which the
// host dispatches by), and CK, the values per step (kernels::COOP_STEP).
//
// matmul_tiled: one output tile per workgroup, one subgroup per 32 × 32 piece of it,
// held as 2 × 2 accumulator matrices. Per step of CK values the workgroup stages the
// activation rows and the dequantized weight rows in workgroup memory as f16, 8 values
// per invocation and call (a K-quant's scales decoded once for the 8: dq8), then each
// subgroup multiplies its two A and two B 16 × 16 pieces. Products of f16s are exact
// and the sums f32: the only loss is rounding the inputs to f16 (relative 2^-11 each;
// activations are clamped to f16's range). Staging, not the multiplies, is what takes
// the time, so the tile is large (kernels::COOP_TILE: every weight value is dequantized
// once per CM activation rows, every activation converted once per CN weight rows).
// With p.gated the tile's weight rows are half a feed-forward's gate rows and half the
// same rows of its up weight (w2), and the gate half's subgroups write act(gate) * up:
// the gated activation joins the dispatch (fetch, emit_piece). With p.multi (in the
// variant compiled with MULTI, which shaders.rs sets for a key with a third weight type)
// the tile's weight rows are output columns of w, w2 and w3 side by side (a layer's q, k
// and v), whose sums go to out2 for matmul_split_sum_multi (matmul.wgsl) to route.

const CLD: u32 = 40u; // stride of a staged row in halves: CK plus 8, so that the rows of
                      // a 16 × 16 load start in different banks (80 bytes, a multiple of
                      // the 16 the matrix loads need)
const CSG: u32 = (CM / 32u) * (CN / 32u); // subgroups (of 32) per workgroup
// ah: activation rows m0.. as [CM][CLD] (A, row-major); bh: weight rows n0.. as
// [CN][CLD], which read column-major is B (k × n); cs: a 16 × 16 f32 result piece per
// subgroup on its way to put() (bounds, residual add).
var<workgroup> ah: array<f16, CM * CLD>;
var<workgroup> bh: array<f16, CN * CLD>;
var<workgroup> cs: array<f32, CSG * 256u>;

// Eight f32s as f16s at staged position `at` of tile 0 (ah) or 1 (bh). Written out:
// a loop indexing the vectors took a quarter of the kernel's time (H100).
fn stage8(tile: u32, at: u32, v: mat2x4<f32>) {
    let big = vec4<f32>(65504.0);
    let h0 = vec4<f16>(clamp(v[0], -big, big));
    let h1 = vec4<f16>(clamp(v[1], -big, big));
    if (tile == 0u) {
        ah[at] = h0.x;
        ah[at + 1u] = h0.y;
        ah[at + 2u] = h0.z;
        ah[at + 3u] = h0.w;
        ah[at + 4u] = h1.x;
        ah[at + 5u] = h1.y;
        ah[at + 6u] = h1.z;
        ah[at + 7u] = h1.w;
    } else {
        bh[at] = h0.x;
        bh[at + 1u] = h0.y;
        bh[at + 2u] = h0.z;
        bh[at + 3u] = h0.w;
        bh[at + 4u] = h1.x;
        bh[at + 5u] = h1.y;
        bh[at + 6u] = h1.z;
        bh[at + 7u] = h1.w;
    }
}

// Weight values e..e+7 of row `row` of w (which 0), w2 (1) or w3 (2) (e a multiple of 8,
// below p.k).
fn w8_at(which: u32, row: u32, e: u32) -> mat2x4<f32> {
    if (which == 2u) {
        if (by8()) {
            return dq8_3(chunk_block_3(row, e / 8u), chunk_index_3(e / 8u));
        }
        return mat2x4<f32>(w4_3(row, e), w4_3(row, e + 4u));
    }
    if (which == 1u) {
        if (by8()) {
            return dq8_2(chunk_block_2(row, e / 8u), chunk_index_2(e / 8u));
        }
        return mat2x4<f32>(w4_2(row, e), w4_2(row, e + 4u));
    }
    if (by8()) {
        return w8(row, e / 8u);
    }
    return mat2x4<f32>(w4(row, e), w4(row, e + 4u));
}

// Chunk i of tile 0 (activation rows from r0) or 1 (weight rows from r0) at step k0:
// values k0 + 8 (i % (CK / 8)).. of its row i / (CK / 8), so consecutive invocations
// take consecutive chunks of a row; zero outside the batch or the part. Gated (p.gated),
// the weight tile's first CN / 2 rows are gate rows r0 / 2.., the others the same rows
// of up. Over several weights (p.multi), row r of the tile is output column r of
// w, w2 and w3 side by side (multi_row).
fn fetch(tile: u32, r0: u32, i: u32, k0: u32) -> mat2x4<f32> {
    var r = r0 + i / (CK / 8u);
    var which = 0u;
    if (tile == 1u && p.gated != 0u) {
        let t = i / (CK / 8u);
        which = t / (CN / 2u);
        r = r0 / 2u + t % (CN / 2u);
    }
    let e = k0 + 8u * (i % (CK / 8u));
    if (e >= p.k || r >= select(p.rows, p.n, tile == 0u)) {
        return mat2x4<f32>();
    }
    if (tile == 0u) {
        return mat2x4<f32>(x4(r, e), x4(r, e + 4u));
    }
    if (MULTI && p.multi != 0u) {
        let at = multi_row(r);
        return w8_at(at.x, at.y, e);
    }
    return w8_at(which, r, e);
}

// A result piece (rows r0.., columns c0.. of the output) from this subgroup's slot of
// cs: 8 values per invocation, into the output (put) or, for span `split` of a split
// dot product or of a matmul over several weights (p.multi), into its partial sums
// (out2: [splits][n][rows]). Gated, the subgroups
// of the gate half of the tile write act(gate) * up, the up piece from the slot of the
// subgroup CN / 64 on (same rows and piece of the other half); the others write
// nothing. Barriers around: the piece is written cooperatively.
fn emit_piece(sg: u32, lane: u32, r0: u32, c0: u32, split: u32) {
    workgroupBarrier();
    let gated = p.gated != 0u;
    if (!gated || sg % (CN / 32u) < CN / 64u) {
        for (var i = 0u; i < 8u; i++) {
            let at = lane + 32u * i;
            let r = r0 + at / 16u;
            let c = c0 + at % 16u;
            if (r < p.n && c < p.rows) {
                var v = cs[sg * 256u + at];
                if (gated) {
                    v = gated_act(v, cs[(sg + CN / 64u) * 256u + at], p.act);
                }
                if (to_partials()) {
                    out2[(split * p.n + r) * p.rows + c] = v;
                } else {
                    put(r, c, v);
                }
            }
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(CSG * 32u)
fn matmul_tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    // wid.y: tile of activation rows, then span of the split (p.m_tiles tiles each).
    let n0 = wid.x * CN;
    let m0 = (wid.y % p.m_tiles) * CM;
    let split = wid.y / p.m_tiles;
    let k_end = min(p.k, (split + 1u) * p.k_span);
    // This subgroup's 32 × 32 piece: activation rows wm.., weight rows wn.. of the tile.
    let sg = lid / 32u;
    let lane = lid % 32u;
    let wm = (sg / (CN / 32u)) * 32u;
    let wn = (sg % (CN / 32u)) * 32u;
    var c00 = coop_mat16x16<f32, C>();
    var c01 = coop_mat16x16<f32, C>();
    var c10 = coop_mat16x16<f32, C>();
    var c11 = coop_mat16x16<f32, C>();
    for (var k0 = split * p.k_span; k0 < k_end; k0 += CK) {
        // One chunk of each tile per invocation (kernels.rs asserts the tile and step
        // make it so), both loaded before either is stored: the two loads are in
        // flight together (+10% prefill on an H100 over loading and storing each in
        // turn).
        let at = (lid / (CK / 8u)) * CLD + 8u * (lid % (CK / 8u));
        let av = fetch(0u, m0, lid, k0);
        let bv = fetch(1u, n0, lid, k0);
        stage8(0u, at, av);
        stage8(1u, at, bv);
        workgroupBarrier();
        for (var kk = 0u; kk < CK; kk += 16u) {
            let a0 = coopLoadT<coop_mat16x16<f16, A>>(&ah[wm * CLD + kk], CLD);
            let a1 = coopLoadT<coop_mat16x16<f16, A>>(&ah[(wm + 16u) * CLD + kk], CLD);
            let b0 = coopLoad<coop_mat16x16<f16, B>>(&bh[wn * CLD + kk], CLD);
            let b1 = coopLoad<coop_mat16x16<f16, B>>(&bh[(wn + 16u) * CLD + kk], CLD);
            c00 = coopMultiplyAdd(a0, b0, c00);
            c01 = coopMultiplyAdd(a0, b1, c01);
            c10 = coopMultiplyAdd(a1, b0, c10);
            c11 = coopMultiplyAdd(a1, b1, c11);
        }
        workgroupBarrier();
    }
    let r0 = m0 + wm;
    // Gated, the output columns of this tile's gate half (the up half writes nothing).
    let c0 = select(n0 + wn, n0 / 2u + wn, p.gated != 0u);
    coopStoreT(c00, &cs[sg * 256u], 16u);
    emit_piece(sg, lane, r0, c0, split);
    coopStoreT(c01, &cs[sg * 256u], 16u);
    emit_piece(sg, lane, r0, c0 + 16u, split);
    coopStoreT(c10, &cs[sg * 256u], 16u);
    emit_piece(sg, lane, r0 + 16u, c0, split);
    coopStoreT(c11, &cs[sg * 256u], 16u);
    emit_piece(sg, lane, r0 + 16u, c0 + 16u, split);
}
