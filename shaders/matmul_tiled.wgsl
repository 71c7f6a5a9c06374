// Appended to the matmul family (shaders/matmul.wgsl) where the device has no
// cooperative matrices (else shaders/matmul_coop.wgsl defines the same entry point):
// matmul_tiled, the batch (prefill) kernel in f32 on the shader cores.
// TM × TN: activation rows × weight rows per tile (tuning.rs BATCH_TILE_F32 writes them;
// 16 × 16 invocations of a 4 × 4 block each). Where the tiles are few (a down projection, k
// and v), the dot products split into p.splits spans of p.k_span values: wid.y is then the
// tile of activation rows (p.m_tiles of them) and the span, and each span's sums go to
// out2 for matmul_split_sum (matmul.wgsl), as on cooperative matrices.
const TK: u32 = 32u; // values per step (divides every quantized block)
// Tiles in workgroup memory as [TK][TM / 4] and [TK][TN / 4] vec4s: xs[kk * 16 + i] holds
// value kk of rows 4i..4i+3. Loads store whole vec4s (a 4 × 4 block transposed in
// registers); the inner loop reads one vec4 of each tile per value and does 16 FMAs.
var<workgroup> xs: array<vec4<f32>, TK * TM / 4u>;
var<workgroup> ws: array<vec4<f32>, TK * TN / 4u>;

@compute @workgroup_size(16, 16)
fn matmul_tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let n0 = wid.x * TN;
    let m0 = (wid.y % p.m_tiles) * TM;
    let split = wid.y / p.m_tiles;
    let k_end = min(p.k, (split + 1u) * p.k_span);
    let tx = lid3.x;
    let ty = lid3.y;
    // accI: activation row m0 + 4 ty + I, weight rows (output columns) n0 + 4 tx ..+3.
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    // Loading: invocations 0..127 fill the weight tile, 128..255 the activation tile
    // (whole warps each way); invocation l takes rows 4 (l % 16) ..+3 and values
    // 4 ((l / 16) % 8) ..+3 of its tile.
    let ld = lid % 128u;
    let rq = ld % 16u;
    let kq = ld / 16u;
    let loads_w = lid < 128u;
    for (var k0 = split * p.k_span; k0 < k_end; k0 += TK) {
        let e = k0 + 4u * kq;
        var b0 = vec4<f32>(0.0);
        var b1 = vec4<f32>(0.0);
        var b2 = vec4<f32>(0.0);
        var b3 = vec4<f32>(0.0);
        if (e < k_end) {
            if (loads_w) {
                let r = n0 + 4u * rq;
                if (r < p.rows) { b0 = w4(r, e); }
                if (r + 1u < p.rows) { b1 = w4(r + 1u, e); }
                if (r + 2u < p.rows) { b2 = w4(r + 2u, e); }
                if (r + 3u < p.rows) { b3 = w4(r + 3u, e); }
            } else {
                let r = m0 + 4u * rq;
                if (r < p.n) { b0 = x4(r, e); }
                if (r + 1u < p.n) { b1 = x4(r + 1u, e); }
                if (r + 2u < p.n) { b2 = x4(r + 2u, e); }
                if (r + 3u < p.n) { b3 = x4(r + 3u, e); }
            }
        }
        // Transposed: value 4 kq + c of the four rows.
        let at = 4u * kq * 16u + rq;
        let t0 = vec4<f32>(b0.x, b1.x, b2.x, b3.x);
        let t1 = vec4<f32>(b0.y, b1.y, b2.y, b3.y);
        let t2 = vec4<f32>(b0.z, b1.z, b2.z, b3.z);
        let t3 = vec4<f32>(b0.w, b1.w, b2.w, b3.w);
        if (loads_w) {
            ws[at] = t0;
            ws[at + 16u] = t1;
            ws[at + 32u] = t2;
            ws[at + 48u] = t3;
        } else {
            xs[at] = t0;
            xs[at + 16u] = t1;
            xs[at + 32u] = t2;
            xs[at + 48u] = t3;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < TK; kk++) {
            let a = xs[kk * 16u + ty];
            let b = ws[kk * 16u + tx];
            acc0 += a.x * b;
            acc1 += a.y * b;
            acc2 += a.z * b;
            acc3 += a.w * b;
        }
        workgroupBarrier();
    }
    store4(m0 + 4u * ty, n0 + 4u * tx, acc0, split);
    store4(m0 + 4u * ty + 1u, n0 + 4u * tx, acc1, split);
    store4(m0 + 4u * ty + 2u, n0 + 4u * tx, acc2, split);
    store4(m0 + 4u * ty + 3u, n0 + 4u * tx, acc3, split);
}

// out[r, c..c+3] = v, within the batch and this part's rows (split: span `split`'s
// partial sums, out2[split][r][c..c+3]). The components are named, never v[j] in a
// loop: with that dynamic index, Tint's SPIR-V of matmul_wide (16 calls) took 162
// registers on an H200 against 119 without it, one workgroup a multiprocessor instead of
// two (naga's: 123 and 119; bench/results/tint-registers.md).
fn store4(r: u32, c: u32, v: vec4<f32>, split: u32) {
    if (r >= p.n) {
        return;
    }
    store1(r, c, v.x, split);
    store1(r, c + 1u, v.y, split);
    store1(r, c + 2u, v.z, split);
    store1(r, c + 3u, v.w, split);
}
