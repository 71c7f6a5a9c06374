// out[r, out_offset + j] = W[j] · x[r] for activation rows r < n and weight rows
// j < rows of one weight part, reading the quantized weight directly: the type's
// quant/*.wgsl snippet (prepended) provides dq4(), which dequantizes 4 values in
// registers; sums are f32. Two entry points share the bindings:
//   matvec        few rows (decode): MV_ROWS weight rows per workgroup, MV_LANES
//                 invocations per row striding over its blocks, each keeping one sum
//                 per activation row (n ≤ MV_MAX_B), reduced through workgroup memory
//   matmul_tiled  batches (prefill): a TM × TN output tile per workgroup, the x tile and
//                 the dequantized weight tile staged in workgroup memory TK columns at a
//                 time, 4 × 4 outputs per invocation
// Params: MatmulParams.

// Params: n (activation rows), k (values per row), rows (weight rows in this part),
// row_words (u32 words per stored weight row), x_stride, out_stride, out_offset.
@group(0) @binding(0) var<uniform> p: Params;
// x: [n, x_stride] f32 activations.
@group(0) @binding(1) var<storage, read> x: array<f32>;
// w: [rows, row_words] one weight part, rows repacked to aligned blocks.
@group(0) @binding(2) var<storage, read> w: array<u32>;
// out: [n, out_stride] f32.
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// Values 4g..4g+3 of weight row `row` (zero past the row's end: only float types have
// rows that are not whole groups of 4).
fn w4(row: u32, e: u32) -> vec4<f32> {
    let v = dq4(row * p.row_words + (e / BLOCK_ELEMS) * BLOCK_WORDS, (e % BLOCK_ELEMS) / 4u);
    if (e + 4u <= p.k) {
        return v;
    }
    return select(vec4<f32>(0.0), v, vec4<u32>(e) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(p.k));
}

// Values e..e+3 of activation row r (zero past the row's end).
fn x4(r: u32, e: u32) -> vec4<f32> {
    let b = r * p.x_stride + e;
    if (e + 4u <= p.k) {
        return vec4<f32>(x[b], x[b + 1u], x[b + 2u], x[b + 3u]);
    }
    var v = vec4<f32>(0.0);
    for (var c = 0u; c < 4u; c++) {
        if (e + c < p.k) {
            v[c] = x[b + c];
        }
    }
    return v;
}

const MV_WG: u32 = 256u;
const MV_LANES: u32 = 64u;
const MV_ROWS: u32 = 4u; // MV_WG / MV_LANES
const MV_MAX_B: u32 = 8u;
var<workgroup> mv_red: array<f32, 2048>; // [MV_MAX_B][MV_WG]

@compute @workgroup_size(256)
fn matvec(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let lane = lid % MV_LANES;
    let row = wg_linear(wid, nwg) * MV_ROWS + lid / MV_LANES;
    let nb = min(p.n, MV_MAX_B);
    var acc: array<f32, MV_MAX_B>;
    if (row < p.rows) {
        for (var e = 4u * lane; e < p.k; e += 4u * MV_LANES) {
            let wv = w4(row, e);
            for (var b = 0u; b < nb; b++) {
                acc[b] += dot(wv, x4(b, e));
            }
        }
    }
    for (var b = 0u; b < nb; b++) {
        mv_red[b * MV_WG + lid] = acc[b];
    }
    workgroupBarrier();
    for (var s = MV_LANES / 2u; s > 0u; s >>= 1u) {
        if (lane < s) {
            for (var b = 0u; b < nb; b++) {
                mv_red[b * MV_WG + lid] += mv_red[b * MV_WG + lid + s];
            }
        }
        workgroupBarrier();
    }
    if (row < p.rows && lane == 0u) {
        for (var b = 0u; b < nb; b++) {
            out[b * p.out_stride + p.out_offset + row] = mv_red[b * MV_WG + lid];
        }
    }
}

const TM: u32 = 64u; // activation rows per tile
const TN: u32 = 64u; // weight rows per tile
const TK: u32 = 32u; // values per step (divides every quantized block)
var<workgroup> xs: array<f32, 2048>; // [TK][TM]
var<workgroup> ws: array<f32, 2048>; // [TK][TN]

@compute @workgroup_size(16, 16)
fn matmul_tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let n0 = wid.x * TN;
    let m0 = wid.y * TM;
    let tx = lid3.x;
    let ty = lid3.y;
    var acc: array<f32, 16>; // [i][j]: row m0 + ty + 16i, column n0 + tx + 16j
    for (var k0 = 0u; k0 < p.k; k0 += TK) {
        // The weight tile: TN rows × TK values = 512 groups of 4, two per invocation.
        for (var t = 0u; t < 2u; t++) {
            let g = lid + 256u * t;
            let nn = g / 8u;
            let kk = 4u * (g % 8u);
            var v = vec4<f32>(0.0);
            if (n0 + nn < p.rows && k0 + kk < p.k) {
                v = w4(n0 + nn, k0 + kk);
            }
            ws[kk * TN + nn] = v.x;
            ws[(kk + 1u) * TN + nn] = v.y;
            ws[(kk + 2u) * TN + nn] = v.z;
            ws[(kk + 3u) * TN + nn] = v.w;
        }
        // The activation tile: TM rows × TK values, eight per invocation.
        for (var t = 0u; t < 8u; t++) {
            let i = lid + 256u * t;
            let mm = i / TK;
            let kk = i % TK;
            var v = 0.0;
            if (m0 + mm < p.n && k0 + kk < p.k) {
                v = x[(m0 + mm) * p.x_stride + k0 + kk];
            }
            xs[kk * TM + mm] = v;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < TK; kk++) {
            var a: array<f32, 4>;
            var b: array<f32, 4>;
            for (var i = 0u; i < 4u; i++) {
                a[i] = xs[kk * TM + ty + 16u * i];
                b[i] = ws[kk * TN + tx + 16u * i];
            }
            for (var i = 0u; i < 4u; i++) {
                for (var j = 0u; j < 4u; j++) {
                    acc[i * 4u + j] += a[i] * b[j];
                }
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        for (var j = 0u; j < 4u; j++) {
            let r = m0 + ty + 16u * i;
            let c = n0 + tx + 16u * j;
            if (r < p.n && c < p.rows) {
                out[r * p.out_stride + p.out_offset + c] = acc[i * 4u + j];
            }
        }
    }
}
