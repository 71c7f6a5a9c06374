// Appended to the matmul family (shaders/matmul.wgsl) where the device has no
// cooperative matrices: a large batch's matmul on the shader cores in two steps.
//   dequant_rows  (shaders/dequant_rows.wgsl, appended after this) a panel of the
//                 weight part's rows dequantized to f32: [rows, k], a scratch
//   matmul_wide   out = x · panelᵀ with WM × WN output tiles (tuning.rs WIDE_TILE),
//                 16 × 16 invocations of an 8 × 8 block each, WK values a step
// matmul_tiled dequantizes every weight value once per 64 activation rows while
// staging; a panel dequantized once leaves staging a copy, and a copy is cheap enough
// for a tile whose 64 products an invocation reads from four vec4s (an f32 probe on an
// H200: 30 TFLOP/s, against 22 for matmul_tiled's 4 × 4 blocks; bench/results/
// f32-gemm-h200.md). Where the tiles are few the dot products split into spans as in
// matmul_tiled (wid.y: the tile of activation rows and the span; matmul_split_sum adds
// the spans' sums). Gated (p.gated: each 128 panel rows are 64 rows of a feed-forward's
// gate and the same 64 rows of up, as dequant_rows lays them out; from
// tuning.rs WIDE_GATED_MIN_ROWS rows), a tile writes act(gate) * up into output columns
// n0 / 2..: one dispatch over both weights, never split.

// The panel's element as dequant_rows writes it.
alias PanelVec = vec4<f32>;
fn to_panel(v: vec4<f32>) -> PanelVec {
    return v;
}

// The panel, bound read-only for matmul_wide (dequant_rows writes it at binding 13).
@group(0) @binding(12) var<storage, read> wf: array<vec4<f32>>;

// Tiles as [WK][WM / 4] and [WK][WN / 4] vec4s: wide_x[kk][i] holds value kk of
// activation rows 4i..4i+3 (loads transpose 4 × 4 blocks in registers, as
// matmul_tiled's). Two-level arrays, not one flat one: the index clamps a browser's
// compiler adds (Tint's robustness) then fall on the step's row and on tx / ty, which
// stay fixed through a step, rather than on each read's computed sum; under Dawn on an
// H200 gate's GEMM took 471 µs against 486 (bench/results/wide-splits-h200.md).
var<workgroup> wide_x: array<array<vec4<f32>, WM / 4u>, WK>;
var<workgroup> wide_w: array<array<vec4<f32>, WN / 4u>, WK>;

// Each step, invocations 0..63 load 4 activation rows × 4 values, 64..127 the same of
// the panel (rows 4 (u % 32) ..+3 of the tile, values 4 (u / 32) ..+3 of the step) and
// store them transposed (a 4 × 4 block in registers) as whole vec4s. Rows past the batch
// or the panel read its last row instead (their products land in outputs never stored),
// so only the span's end is tested, once a step: values past it are zero. The loads are
// written out in the kernel, not in a function returning them: on an H200 the same
// kernel with its loads in a function returning a struct of four vec4s ran 19–38% slower
// (bench/results/f32-gemm-h200.md, calls 3 and 4).

@compute @workgroup_size(16, 16)
fn matmul_wide(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let n0 = wid.x * WN;
    let m0 = (wid.y % p.m_tiles) * WM;
    let split = wid.y / p.m_tiles;
    let k_begin = split * p.k_span;
    let k_end = min(p.k, k_begin + p.k_span);
    let tx = lid3.x;
    let ty = lid3.y;
    // acc[8 I + 2 C + J]: activation row m0 + 4 (ty + 16 I) + C, panel rows (output
    // columns) n0 + 4 (tx + 16 J) ..+3: two 4 × 4 blocks 64 apart each way, so that a
    // warp's reads of a tile row are 16 consecutive vec4s. Indexed by constants only, so
    // it stays in registers.
    var acc: array<vec4<f32>, 16>;
    // This invocation's load unit: from the batch (is_x) or the panel, its first row
    // and its last, the offset of its values in a step, where it stores them.
    let is_x = lid < 64u;
    let u = lid % 64u;
    let first = select(n0, m0, is_x) + 4u * (u % 32u);
    let last = select(p.rows, p.n, is_x) - 1u;
    let stride = select(p.k, p.x_stride, is_x);
    let r0 = min(first, last) * stride;
    let r1 = min(first + 1u, last) * stride;
    let r2 = min(first + 2u, last) * stride;
    let r3 = min(first + 3u, last) * stride;
    let de = 4u * (u / 32u);
    let at = u % 32u;
    var b0 = vec4<f32>(0.0);
    var b1 = vec4<f32>(0.0);
    var b2 = vec4<f32>(0.0);
    var b3 = vec4<f32>(0.0);
    // The next step's loads are issued before this step's products, so their latency
    // hides behind them (2 barriers a step).
    var e = k_begin + de;
    if (lid < 128u && e < k_end) {
        if (is_x) {
            b0 = x[(r0 + e) / 4u];
            b1 = x[(r1 + e) / 4u];
            b2 = x[(r2 + e) / 4u];
            b3 = x[(r3 + e) / 4u];
        } else {
            b0 = wf[(r0 + e) / 4u];
            b1 = wf[(r1 + e) / 4u];
            b2 = wf[(r2 + e) / 4u];
            b3 = wf[(r3 + e) / 4u];
        }
    }
    for (var k0 = k_begin; k0 < k_end; k0 += WK) {
        if (lid < 128u) {
            let t0 = vec4<f32>(b0.x, b1.x, b2.x, b3.x);
            let t1 = vec4<f32>(b0.y, b1.y, b2.y, b3.y);
            let t2 = vec4<f32>(b0.z, b1.z, b2.z, b3.z);
            let t3 = vec4<f32>(b0.w, b1.w, b2.w, b3.w);
            if (is_x) {
                wide_x[de][at] = t0;
                wide_x[de + 1u][at] = t1;
                wide_x[de + 2u][at] = t2;
                wide_x[de + 3u][at] = t3;
            } else {
                wide_w[de][at] = t0;
                wide_w[de + 1u][at] = t1;
                wide_w[de + 2u][at] = t2;
                wide_w[de + 3u][at] = t3;
            }
        }
        workgroupBarrier();
        e = k0 + WK + de;
        if (lid < 128u && e < k_end) {
            if (is_x) {
                b0 = x[(r0 + e) / 4u];
                b1 = x[(r1 + e) / 4u];
                b2 = x[(r2 + e) / 4u];
                b3 = x[(r3 + e) / 4u];
            } else {
                b0 = wf[(r0 + e) / 4u];
                b1 = wf[(r1 + e) / 4u];
                b2 = wf[(r2 + e) / 4u];
                b3 = wf[(r3 + e) / 4u];
            }
        } else {
            b0 = vec4<f32>(0.0);
            b1 = vec4<f32>(0.0);
            b2 = vec4<f32>(0.0);
            b3 = vec4<f32>(0.0);
        }
        // The step's WK = 8 values (tuning.rs asserts it) written out with constant tile
        // rows where STEP_WRITTEN_OUT (the wasm build: faster through Chrome's compiler,
        // slower through naga; tuning.rs STEP_WRITTEN_OUT has the figures).
        if (STEP_WRITTEN_OUT == 1u) {
            wide_products(&acc, wide_x[0u][ty], wide_x[0u][ty + 16u], wide_w[0u][tx], wide_w[0u][tx + 16u]);
            wide_products(&acc, wide_x[1u][ty], wide_x[1u][ty + 16u], wide_w[1u][tx], wide_w[1u][tx + 16u]);
            wide_products(&acc, wide_x[2u][ty], wide_x[2u][ty + 16u], wide_w[2u][tx], wide_w[2u][tx + 16u]);
            wide_products(&acc, wide_x[3u][ty], wide_x[3u][ty + 16u], wide_w[3u][tx], wide_w[3u][tx + 16u]);
            wide_products(&acc, wide_x[4u][ty], wide_x[4u][ty + 16u], wide_w[4u][tx], wide_w[4u][tx + 16u]);
            wide_products(&acc, wide_x[5u][ty], wide_x[5u][ty + 16u], wide_w[5u][tx], wide_w[5u][tx + 16u]);
            wide_products(&acc, wide_x[6u][ty], wide_x[6u][ty + 16u], wide_w[6u][tx], wide_w[6u][tx + 16u]);
            wide_products(&acc, wide_x[7u][ty], wide_x[7u][ty + 16u], wide_w[7u][tx], wide_w[7u][tx + 16u]);
        } else {
            for (var kk = 0u; kk < WK; kk++) {
                wide_products(&acc, wide_x[kk][ty], wide_x[kk][ty + 16u], wide_w[kk][tx], wide_w[kk][tx + 16u]);
            }
        }
        workgroupBarrier();
    }
    let o0 = m0 + 4u * ty;
    let o1 = o0 + 64u;
    if (p.gated != 0u) {
        // Gated: the tile's columns 4 tx.. are gate rows and 64 + 4 tx.. the same rows of
        // up (dequant_rows' layout), so acc[2 i] and acc[2 i + 1] pair up.
        let g = n0 / 2u + 4u * tx;
        wide_store_gated(o0, g, acc[0], acc[1]);
        wide_store_gated(o0 + 1u, g, acc[2], acc[3]);
        wide_store_gated(o0 + 2u, g, acc[4], acc[5]);
        wide_store_gated(o0 + 3u, g, acc[6], acc[7]);
        wide_store_gated(o1, g, acc[8], acc[9]);
        wide_store_gated(o1 + 1u, g, acc[10], acc[11]);
        wide_store_gated(o1 + 2u, g, acc[12], acc[13]);
        wide_store_gated(o1 + 3u, g, acc[14], acc[15]);
        return;
    }
    let c0 = n0 + 4u * tx;
    let c1 = c0 + 64u;
    wide_store4(o0, c0, acc[0], split);
    wide_store4(o0, c1, acc[1], split);
    wide_store4(o0 + 1u, c0, acc[2], split);
    wide_store4(o0 + 1u, c1, acc[3], split);
    wide_store4(o0 + 2u, c0, acc[4], split);
    wide_store4(o0 + 2u, c1, acc[5], split);
    wide_store4(o0 + 3u, c0, acc[6], split);
    wide_store4(o0 + 3u, c1, acc[7], split);
    wide_store4(o1, c0, acc[8], split);
    wide_store4(o1, c1, acc[9], split);
    wide_store4(o1 + 1u, c0, acc[10], split);
    wide_store4(o1 + 1u, c1, acc[11], split);
    wide_store4(o1 + 2u, c0, acc[12], split);
    wide_store4(o1 + 2u, c1, acc[13], split);
    wide_store4(o1 + 3u, c0, acc[14], split);
    wide_store4(o1 + 3u, c1, acc[15], split);
}

// One value of the step: acc (as matmul_wide's) += the products of activation rows a0
// (4 ty ..+3) and a1 (64 on) with panel rows c0 (4 tx ..+3) and c1 (64 on).
fn wide_products(acc: ptr<function, array<vec4<f32>, 16>>, a0: vec4<f32>, a1: vec4<f32>, c0: vec4<f32>,
                 c1: vec4<f32>) {
    (*acc)[0] += a0.x * c0;
    (*acc)[1] += a0.x * c1;
    (*acc)[2] += a0.y * c0;
    (*acc)[3] += a0.y * c1;
    (*acc)[4] += a0.z * c0;
    (*acc)[5] += a0.z * c1;
    (*acc)[6] += a0.w * c0;
    (*acc)[7] += a0.w * c1;
    (*acc)[8] += a1.x * c0;
    (*acc)[9] += a1.x * c1;
    (*acc)[10] += a1.y * c0;
    (*acc)[11] += a1.y * c1;
    (*acc)[12] += a1.z * c0;
    (*acc)[13] += a1.z * c1;
    (*acc)[14] += a1.w * c0;
    (*acc)[15] += a1.w * c1;
}

// Gated: act(g) * u into output row r, columns c..c + 3 of this panel's p.rows2 (its
// gate rows); never split, never added into a residual (record_matmul_gated).
fn wide_store_gated(r: u32, c: u32, g: vec4<f32>, u: vec4<f32>) {
    let at = r * p.out_stride + p.out_offset + c;
    if (r >= p.n || c >= p.rows2) {
        return;
    }
    out[at] = gated_act(g.x, u.x, p.act);
    if (c + 3u < p.rows2) {
        out[at + 1u] = gated_act(g.y, u.y, p.act);
        out[at + 2u] = gated_act(g.z, u.z, p.act);
        out[at + 3u] = gated_act(g.w, u.w, p.act);
        return;
    }
    if (c + 1u < p.rows2) {
        out[at + 1u] = gated_act(g.y, u.y, p.act);
    }
    if (c + 2u < p.rows2) {
        out[at + 2u] = gated_act(g.z, u.z, p.act);
    }
}

// store4 (matmul_tiled.wgsl) without its tests per value where the 4 columns are
// within the part and nothing is added into a residual (the common case).
fn wide_store4(r: u32, c: u32, v: vec4<f32>, split: u32) {
    if (r >= p.n || c + 3u >= p.rows || (p.splits == 1u && p.res_add != 0u)) {
        store4(r, c, v, split);
        return;
    }
    var at = r * p.out_stride + p.out_offset + c;
    if (p.splits > 1u) {
        at = (split * p.n + r) * p.rows + c;
        out2[at] = v.x;
        out2[at + 1u] = v.y;
        out2[at + 2u] = v.z;
        out2[at + 3u] = v.w;
        return;
    }
    out[at] = v.x;
    out[at + 1u] = v.y;
    out[at + 2u] = v.z;
    out[at + 3u] = v.w;
}
