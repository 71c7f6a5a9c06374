// Appended to the matmul family (shaders/matmul.wgsl) where the device has no
// cooperative matrices: a large batch's matmul on the shader cores in two steps.
//   dequant_rows  p.rows weight rows from p.w_row0 on (the module's type, through w4)
//                 written as f32 into `out`: [rows, k], a scratch panel
//   matmul_wide   out = x · panelᵀ with WM × WN output tiles (tuning.rs WIDE_TILE),
//                 16 × 16 invocations of an 8 × 8 block each, WK values a step
// matmul_tiled dequantizes every weight value once per 64 activation rows while
// staging; a panel dequantized once leaves staging a copy, and a copy is cheap enough
// for a tile whose 64 products an invocation reads from four vec4s (an f32 probe on an
// H200: 30 TFLOP/s, against 22 for matmul_tiled's 4 × 4 blocks; bench/results/
// f32-gemm-h200.md). Where the tiles are few the dot products split into spans as in
// matmul_tiled (wid.y: the tile of activation rows and the span; matmul_split_sum adds
// the spans' sums).

// The panel, bound read-only for matmul_wide (dequant_rows writes it through `out`).
@group(0) @binding(12) var<storage, read> wf: array<vec4<f32>>;

@compute @workgroup_size(ITEMS_WG)
fn dequant_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let i = wg_linear(wid, nwg) * ITEMS_WG + lid;
    let k4 = p.k / 4u;
    if (i >= p.rows * k4) {
        return;
    }
    let v = w4(p.w_row0 + i / k4, 4u * (i % k4));
    out[4u * i] = v.x;
    out[4u * i + 1u] = v.y;
    out[4u * i + 2u] = v.z;
    out[4u * i + 3u] = v.w;
}

// Tiles as [WK][WM / 4] and [WK][WN / 4] vec4s: wide_x[kk * WM / 4 + i] holds value kk
// of activation rows 4i..4i+3 (loads transpose 4 × 4 blocks in registers, as
// matmul_tiled's).
var<workgroup> wide_x: array<vec4<f32>, WK * WM / 4u>;
var<workgroup> wide_w: array<vec4<f32>, WK * WN / 4u>;

// The 4 rows × 4 values an invocation loads a step: rows 4 (u % 32) ..+3 and values
// 4 (u / 32) ..+3 of the activation tile (u < 64), of the panel's tile (64 ≤ u < 128);
// 128 invocations load, half of the workgroup (WK = 8: 2 × 128 units).
struct Block {
    b0: vec4<f32>,
    b1: vec4<f32>,
    b2: vec4<f32>,
    b3: vec4<f32>,
}

// Values e..e+3 of panel row r, zero past the panel's rows or the span's end.
fn wf4(r: u32, e: u32, e_end: u32) -> vec4<f32> {
    if (r >= p.rows || e >= e_end) {
        return vec4<f32>(0.0);
    }
    return wf[(r * p.k + e) / 4u];
}

// x4 within the batch and the span (x_stride and k are multiples of 4 on this path).
fn xw4(r: u32, e: u32, e_end: u32) -> vec4<f32> {
    if (r >= p.n || e >= e_end) {
        return vec4<f32>(0.0);
    }
    return x[(r * p.x_stride + e) / 4u];
}

fn wide_load(u: u32, m0: u32, n0: u32, k0: u32, e_end: u32) -> Block {
    let rq = u % 32u;
    let e = k0 + 4u * ((u % 64u) / 32u);
    if (u < 64u) {
        let r = m0 + 4u * rq;
        return Block(xw4(r, e, e_end), xw4(r + 1u, e, e_end), xw4(r + 2u, e, e_end), xw4(r + 3u, e, e_end));
    }
    let r = n0 + 4u * rq;
    return Block(wf4(r, e, e_end), wf4(r + 1u, e, e_end), wf4(r + 2u, e, e_end), wf4(r + 3u, e, e_end));
}

fn wide_store(u: u32, b: Block) {
    let at = 4u * ((u % 64u) / 32u) * 32u + u % 32u;
    let t0 = vec4<f32>(b.b0.x, b.b1.x, b.b2.x, b.b3.x);
    let t1 = vec4<f32>(b.b0.y, b.b1.y, b.b2.y, b.b3.y);
    let t2 = vec4<f32>(b.b0.z, b.b1.z, b.b2.z, b.b3.z);
    let t3 = vec4<f32>(b.b0.w, b.b1.w, b.b2.w, b.b3.w);
    if (u < 64u) {
        wide_x[at] = t0;
        wide_x[at + 32u] = t1;
        wide_x[at + 64u] = t2;
        wide_x[at + 96u] = t3;
    } else {
        wide_w[at] = t0;
        wide_w[at + 32u] = t1;
        wide_w[at + 64u] = t2;
        wide_w[at + 96u] = t3;
    }
}

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
    // accIC_J: activation row m0 + 4 (ty + 16 I) + C, panel rows (output columns)
    // n0 + 4 (tx + 16 J) ..+3: two 4 × 4 blocks 64 apart each way, so that a warp's
    // reads of a tile row are 16 consecutive vec4s.
    var acc00_0 = vec4<f32>(0.0);
    var acc00_1 = vec4<f32>(0.0);
    var acc01_0 = vec4<f32>(0.0);
    var acc01_1 = vec4<f32>(0.0);
    var acc02_0 = vec4<f32>(0.0);
    var acc02_1 = vec4<f32>(0.0);
    var acc03_0 = vec4<f32>(0.0);
    var acc03_1 = vec4<f32>(0.0);
    var acc10_0 = vec4<f32>(0.0);
    var acc10_1 = vec4<f32>(0.0);
    var acc11_0 = vec4<f32>(0.0);
    var acc11_1 = vec4<f32>(0.0);
    var acc12_0 = vec4<f32>(0.0);
    var acc12_1 = vec4<f32>(0.0);
    var acc13_0 = vec4<f32>(0.0);
    var acc13_1 = vec4<f32>(0.0);
    // Invocations 0..127 load (whole warps); the next step's loads are issued before
    // this step's products, so their latency hides behind them (2 barriers a step).
    let loads = lid < 128u;
    var next = Block(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    if (loads) {
        next = wide_load(lid, m0, n0, k_begin, k_end);
    }
    for (var k0 = k_begin; k0 < k_end; k0 += WK) {
        if (loads) {
            wide_store(lid, next);
        }
        workgroupBarrier();
        if (loads && k0 + WK < k_end) {
            next = wide_load(lid, m0, n0, k0 + WK, k_end);
        }
        for (var kk = 0u; kk < WK; kk++) {
            let a0 = wide_x[kk * (WM / 4u) + ty];
            let a1 = wide_x[kk * (WM / 4u) + ty + 16u];
            let c0 = wide_w[kk * (WN / 4u) + tx];
            let c1 = wide_w[kk * (WN / 4u) + tx + 16u];
            acc00_0 += a0.x * c0;
            acc00_1 += a0.x * c1;
            acc01_0 += a0.y * c0;
            acc01_1 += a0.y * c1;
            acc02_0 += a0.z * c0;
            acc02_1 += a0.z * c1;
            acc03_0 += a0.w * c0;
            acc03_1 += a0.w * c1;
            acc10_0 += a1.x * c0;
            acc10_1 += a1.x * c1;
            acc11_0 += a1.y * c0;
            acc11_1 += a1.y * c1;
            acc12_0 += a1.z * c0;
            acc12_1 += a1.z * c1;
            acc13_0 += a1.w * c0;
            acc13_1 += a1.w * c1;
        }
        workgroupBarrier();
    }
    let r0 = m0 + 4u * ty;
    let r1 = r0 + 64u;
    let c0 = n0 + 4u * tx;
    let c1 = c0 + 64u;
    store4(r0, c0, acc00_0, split);
    store4(r0, c1, acc00_1, split);
    store4(r0 + 1u, c0, acc01_0, split);
    store4(r0 + 1u, c1, acc01_1, split);
    store4(r0 + 2u, c0, acc02_0, split);
    store4(r0 + 2u, c1, acc02_1, split);
    store4(r0 + 3u, c0, acc03_0, split);
    store4(r0 + 3u, c1, acc03_1, split);
    store4(r1, c0, acc10_0, split);
    store4(r1, c1, acc10_1, split);
    store4(r1 + 1u, c0, acc11_0, split);
    store4(r1 + 1u, c1, acc11_1, split);
    store4(r1 + 2u, c0, acc12_0, split);
    store4(r1 + 2u, c1, acc12_1, split);
    store4(r1 + 3u, c0, acc13_0, split);
    store4(r1 + 3u, c1, acc13_1, split);
}
