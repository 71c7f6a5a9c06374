// out[r, out_offset + j] = W[j] · x[r] for activation rows r < n and weight rows
// j < rows of one weight part, reading the quantized weight directly: the type's
// quant/*.wgsl snippet (prepended) provides dq4() and dq8(), which dequantize 4 or 8
// values in registers; sums are f32. The entry points share the bindings:
//   matvec        few rows (decode): mv_rows() weight rows per workgroup, p.lanes
//                 invocations per row striding over it 8 values at a time (one row:
//                 row_dot8, shaders/weight_rows.wgsl) or 4 (several rows: one sum per
//                 activation row, n ≤ MV_MAX_B), reduced through row_sum()
//   matvec_tall, matvec_gated, matvec_multi  decode variants, below
//   matmul_tiled  batches (prefill): an output tile per workgroup, the x tile and the
//                 dequantized weight tile staged in workgroup memory; appended from
//                 shaders/matmul_tiled.wgsl (64 × 64, f32 on the shader cores) or, where the
//                 device has cooperative matrices, shaders/matmul_coop.wgsl (128 × 128, f16
//                 products on the matrix units, f32 sums, dot products split into spans
//                 where there are few tiles: matmul_split_sum, below, adds them up)
// The decode entry points have integer-dot twins in shaders/matvec_int.wgsl, which the
// host takes over weight types with 32-value units (shaders/quant_int/).
// Both can also add their result into a residual stream (res += out), so a matmul and
// the residual add after it take one dispatch. The decode entry points read their input
// through in4()/in_scale() (shaders/norm_off.wgsl, or norm_in.wgsl for the `*_normed`
// kernels that fuse the RMS norm before them) and sum a row's lanes with row_sum()
// (shaders/reduce_wg.wgsl, or reduce_sg.wgsl with subgroups).
// Params: MatmulParams.

// Params: n (activation rows), k (values per row), rows (weight rows in this part),
// row_words (u32 words per stored weight row), x_stride, out_stride, out_offset,
// res_add (1: res += out), res_stride, act, rows2, rows3, lanes (decode: invocations
// per weight row), eps.
@group(0) @binding(0) var<uniform> p: Params;
// x: [n, x_stride] f32 activations, read as vec4s: a scalar load per value made the
// input, not the weights, the busiest traffic of the decode matvecs (x1() reads one).
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
// w: [rows, row_words] one weight part, rows repacked to aligned blocks.
@group(0) @binding(2) var<storage, read> w: array<u32>;
// out: [n, out_stride] f32.
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
// res: [n, res_stride] f32, res += out where p.res_add == 1 (else a dummy, untouched).
@group(0) @binding(4) var<storage, read_write> res: array<f32>;
// w2: a second weight part of the same type and shape as w (matvec_gated: up beside
// gate), read through dq4_2 (the type's snippet again, over w2).
@group(0) @binding(5) var<storage, read> w2: array<u32>;
// matvec_multi: out2 = w2 · x, w3 (dq4_3; its type may differ from w's: the kernel
// key's ty3) and out3 = w3 · x.
@group(0) @binding(6) var<storage, read_write> out2: array<f32>;
@group(0) @binding(7) var<storage, read> w3: array<u32>;
@group(0) @binding(8) var<storage, read_write> out3: array<f32>;

// w4 of weight `s` (0: w, 1: w2, 2: w3).
fn w4_of(s: u32, row: u32, e: u32) -> vec4<f32> {
    if (s == 0u) {
        return w4(row, e);
    }
    if (s == 1u) {
        return w4_2(row, e);
    }
    return w4_3(row, e);
}

// Values e..e+3 of activation row r (zero past the row's end).
fn x4(r: u32, e: u32) -> vec4<f32> {
    let b = r * p.x_stride + e;
    if (e + 4u <= p.k && (b & 3u) == 0u) {
        return x[b >> 2u];
    }
    var v = vec4<f32>(0.0);
    for (var c = 0u; c < 4u; c++) {
        if (e + c < p.k) {
            v[c] = x1(b + c);
        }
    }
    return v;
}

// Value i of the activation buffer.
fn x1(i: u32) -> f32 {
    return x[i >> 2u][i & 3u];
}

// Decode matvecs walk a row 8 values at a time where the weight type allows: lane l of
// a row takes values 8l..8l+7, then 8 (l + p.lanes).., (consecutive lanes read
// consecutive words), dequantized by the type's dq8: one decode of a block's scales
// for all 8 where the snippet has its own (see shaders.rs). Every quantized type's
// blocks are whole 8s; float weights, and rows that are not, take the 4-value path
// (for all three weights of matvec_multi at once: w3's type may differ).
fn by8() -> bool {
    return BLOCK_ELEMS % 8u == 0u && BLOCK_ELEMS_3 % 8u == 0u && p.k % 8u == 0u;
}

// dq8 of chunk c of weight row `row`.
fn w8(row: u32, c: u32) -> mat2x4<f32> {
    return dq8(chunk_block(row, c), chunk_index(c));
}

// The input values 8c..8c+7 (whole: by8() holds).
fn in8(c: u32) -> mat2x4<f32> {
    return mat2x4<f32>(in4(8u * c), in4(8u * c + 4u));
}

fn dot8(a: mat2x4<f32>, b: mat2x4<f32>) -> f32 {
    return dot(a[0], b[0]) + dot(a[1], b[1]);
}

// MV_WG, MV_MAX_B, TALL_ITERS, SUM_STEP, SUM_COLS: written by tuning.rs (the host
// dispatches by them).

// Weight rows per workgroup of the decode matvecs: p.lanes invocations share a row
// (chosen per dispatch by the host, matvec_lanes() in tuning.rs: enough rows × lanes
// to fill the GPU, from 16 lanes for tall matrices to 256 for short wide ones).
fn mv_rows() -> u32 {
    return MV_WG / p.lanes;
}
// One value per invocation for row_sum/wg_sum (reduce_*.wgsl): 1 KiB. (It was 8 KiB,
// the batch path's eight rows at once, held by every decode workgroup; 1 KiB measured
// +1 to 2% decode on the Qwen2.5 models, H100.)
var<workgroup> mv_red: array<f32, MV_WG>;

@compute @workgroup_size(MV_WG)
fn matvec(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let lane = lid % p.lanes;
    let row = wg_linear(wid, nwg) * mv_rows() + lid / p.lanes;
    if (p.n == 1u) {
        // Decode: one sum in a register (no per-row array), two groups per step.
        let sc = in_scale(lid, wg_linear(wid, nwg) == 0u);
        var a = 0.0;
        if (row < p.rows && by8()) {
            a = row_dot8(row, lane);
        } else if (row < p.rows) {
            var e = 4u * lane;
            for (; e + 4u * p.lanes < p.k; e += 8u * p.lanes) {
                let e2 = e + 4u * p.lanes;
                a += dot(w4(row, e), in4(e)) + dot(w4(row, e2), in4(e2));
            }
            if (e < p.k) {
                a += dot(w4(row, e), in4(e));
            }
        }
        let t = row_sum(lid, lane, a);
        if (row < p.rows && lane == 0u) {
            put(0u, row, t * sc);
        }
        return;
    }
    let nb = min(p.n, MV_MAX_B);
    var acc: array<f32, MV_MAX_B>;
    if (row < p.rows) {
        for (var e = 4u * lane; e < p.k; e += 4u * p.lanes) {
            let wv = w4(row, e);
            for (var b = 0u; b < nb; b++) {
                acc[b] += dot(wv, x4(b, e));
            }
        }
    }
    for (var b = 0u; b < nb; b++) {
        let t = row_sum(lid, lane, acc[b]);
        if (row < p.rows && lane == 0u) {
            put(b, row, t);
        }
    }
}

// matvec for vocabulary-sized weights (decode, one activation row, no fused norm):
// each workgroup takes TALL_ITERS × mv_rows() rows and each invocation walks the same
// columns of TALL_ITERS rows at once, so several loads are in flight per invocation
// and there are a quarter of the workgroups (one per four rows × 4 otherwise leaves
// a 262k-row output matvec latency-bound). Same per-row summation as matvec.

@compute @workgroup_size(MV_WG)
fn matvec_tall(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let lane = lid % p.lanes;
    let r0 = wg_linear(wid, nwg) * mv_rows() * TALL_ITERS + lid / p.lanes;
    // Rows past the end read the last row (a valid address) and are not written.
    let last = p.rows - 1u;
    let ra = min(r0, last);
    let rb = min(r0 + mv_rows(), last);
    let rc = min(r0 + 2u * mv_rows(), last);
    let rd = min(r0 + 3u * mv_rows(), last);
    var a = vec4<f32>(0.0);
    if (by8()) {
        for (var c = lane; c < p.k / 8u; c += p.lanes) {
            let xv = in8(c);
            a += vec4<f32>(dot8(w8(ra, c), xv), dot8(w8(rb, c), xv), dot8(w8(rc, c), xv), dot8(w8(rd, c), xv));
        }
    } else {
        for (var e = 4u * lane; e < p.k; e += 4u * p.lanes) {
            let xv = x4(0u, e);
            a += vec4<f32>(dot(w4(ra, e), xv), dot(w4(rb, e), xv), dot(w4(rc, e), xv), dot(w4(rd, e), xv));
        }
    }
    for (var j = 0u; j < TALL_ITERS; j++) {
        let t = row_sum(lid, lane, a[j]);
        let row = r0 + j * mv_rows();
        if (row < p.rows && lane == 0u) {
            put(0u, row, t);
        }
    }
}

// One activation row (decode) through two weights at once: out[out_offset + j] =
// act(w[j] · x) * (w2[j] · x), the gate and up projections and the gated activation
// of a feed-forward in one dispatch. Same work split and summation order as matvec.
@compute @workgroup_size(MV_WG)
fn matvec_gated(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let lane = lid % p.lanes;
    let row = wg_linear(wid, nwg) * mv_rows() + lid / p.lanes;
    let sc = in_scale(lid, wg_linear(wid, nwg) == 0u);
    var a = 0.0;
    var c = 0.0;
    if (row < p.rows && by8()) {
        // Two chunks of each weight a step, loads first (as row_dot8 does with four).
        let n8 = p.k / 8u;
        var i = lane;
        for (; i + p.lanes < n8; i += 2u * p.lanes) {
            let i2 = i + p.lanes;
            let g0 = w8(row, i);
            let u0 = dq8_2(chunk_block_2(row, i), chunk_index_2(i));
            let g1 = w8(row, i2);
            let u1 = dq8_2(chunk_block_2(row, i2), chunk_index_2(i2));
            let xa = in8(i);
            let xb = in8(i2);
            a += dot8(g0, xa) + dot8(g1, xb);
            c += dot8(u0, xa) + dot8(u1, xb);
        }
        if (i < n8) {
            let xa = in8(i);
            a += dot8(w8(row, i), xa);
            c += dot8(dq8_2(chunk_block_2(row, i), chunk_index_2(i)), xa);
        }
    } else if (row < p.rows) {
        var e = 4u * lane;
        for (; e + 4u * p.lanes < p.k; e += 8u * p.lanes) {
            let e2 = e + 4u * p.lanes;
            let xa = in4(e);
            let xb = in4(e2);
            a += dot(w4(row, e), xa) + dot(w4(row, e2), xb);
            c += dot(w4_2(row, e), xa) + dot(w4_2(row, e2), xb);
        }
        if (e < p.k) {
            let xa = in4(e);
            a += dot(w4(row, e), xa);
            c += dot(w4_2(row, e), xa);
        }
    }
    let ta = row_sum(lid, lane, a);
    let tc = row_sum(lid, lane, c);
    if (row < p.rows && lane == 0u) {
        out[p.out_offset + row] = gated_act(ta * sc, tc * sc, p.act);
    }
}

// One activation row (decode) through up to three weights of one type and width
// (q, k, v projections): out = w · x (p.rows rows), out2 = w2 · x (rows2), out3 = w3 · x
// (rows3), each weight's rows in their own workgroups (mv_rows() each), in one dispatch.
// Same work split and summation order as matvec.
@compute @workgroup_size(MV_WG)
fn matvec_multi(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let lane = lid % p.lanes;
    var g = wg_linear(wid, nwg);
    let g1 = (p.rows + mv_rows() - 1u) / mv_rows();
    let g2 = (p.rows2 + mv_rows() - 1u) / mv_rows();
    var s = 0u;
    var rows = p.rows;
    if (g >= g1) {
        g -= g1;
        s = 1u;
        rows = p.rows2;
        if (g >= g2) {
            g -= g2;
            s = 2u;
            rows = p.rows3;
        }
    }
    let row = g * mv_rows() + lid / p.lanes;
    let sc = in_scale(lid, wg_linear(wid, nwg) == 0u);
    var a = 0.0;
    if (row < rows && by8()) {
        if (s == 0u) {
            a = row_dot8(row, lane);
        } else if (s == 1u) {
            a = row_dot8_2(row, lane);
        } else {
            a = row_dot8_3(row, lane);
        }
    } else if (row < rows) {
        var e = 4u * lane;
        for (; e + 4u * p.lanes < p.k; e += 8u * p.lanes) {
            let e2 = e + 4u * p.lanes;
            a += dot(w4_of(s, row, e), in4(e)) + dot(w4_of(s, row, e2), in4(e2));
        }
        if (e < p.k) {
            a += dot(w4_of(s, row, e), in4(e));
        }
    }
    let t = row_sum(lid, lane, a);
    if (row < rows && lane == 0u) {
        let v = t * sc;
        if (s == 0u) {
            out[row] = v;
        } else if (s == 1u) {
            out2[row] = v;
        } else {
            out3[row] = v;
        }
    }
}

// Span `s0 + u`'s partial sum of output i of out2 ([p.splits][n][rows]), or 0 past the
// last span. The index is clamped rather than the load skipped, so that a loop of
// SUM_STEP of these issues its loads together (a loop to p.splits waited for each
// load in turn; the clamped repeats hit the cache).
fn span_value(s0: u32, u: u32, i: u32) -> f32 {
    let s = min(s0 + u, p.splits - 1u);
    return select(0.0, out2[s * p.n * p.rows + i], s0 + u < p.splits);
}

// The sum over the spans of output i (in span order).
fn spans_sum(i: u32) -> f32 {
    var v = 0.0;
    for (var s0 = 0u; s0 < p.splits; s0 += SUM_STEP) {
        for (var u = 0u; u < SUM_STEP; u++) {
            v += span_value(s0, u, i);
        }
    }
    return v;
}

// The sums of matmul_tiled's partial results over the spans of a split dot product
// (out2: [p.splits][n][rows]), into the output: one invocation per output value.
@compute @workgroup_size(ITEMS_WG)
fn matmul_split_sum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let i = wg_linear(wid, nwg) * ITEMS_WG + lid;
    if (i >= p.n * p.rows) {
        return;
    }
    put(i / p.rows, i % p.rows, spans_sum(i));
}

// matmul_split_sum of a matmul over several weights (p.multi: a layer's q, k and v,
// every tile's sums in out2, split or not): each column's sum into its weight's output,
// out (w's rows, p.out_stride a row), res (w2's, rows2 a row: not a residual stream
// here) or out3 (w3's, rows3 a row). One invocation per output value.
@compute @workgroup_size(ITEMS_WG)
fn matmul_split_sum_multi(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) lid: u32) {
    let i = wg_linear(wid, nwg) * ITEMS_WG + lid;
    if (i >= p.n * p.rows) {
        return;
    }
    let r = i / p.rows;
    let at = multi_row(i % p.rows);
    let v = spans_sum(i);
    if (at.x == 0u) {
        out[r * p.out_stride + at.y] = v;
    } else if (at.x == 1u) {
        res[r * p.rows2 + at.y] = v;
    } else {
        out3[r * p.rows3 + at.y] = v;
    }
}

// matmul_split_sum fused with the RMS norm of the residual stream it adds into (a
// prefill's norm after its attention output and down projections): one workgroup per
// activation row sums the spans into out, adds them into res (as put() does), then
// writes out3 = res · (1 / rms(res)) · weight, the norm's weight read from w's slot as
// f32 bits. The part is the whole row (out_offset 0, rows = res_stride, which the norm's
// output shares). The norm's own dispatch, which read the row back, is saved.
// An invocation takes columns lid, lid + MV_WG, ..., SUM_COLS of them at a time with
// all their spans' loads issued together (indices clamped, as span_value's): a row is
// a few rounds of loads, not one per column and span.
@compute @workgroup_size(MV_WG)
fn matmul_split_sum_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
    let r = wg_linear(wid, nwg);
    // No early return past the last row (wg_sum needs every invocation): such a
    // workgroup reads the last row and writes nothing.
    let live = r < p.n;
    let rr = min(r, p.n - 1u);
    var ss = 0.0;
    for (var j0 = 0u; j0 * MV_WG < p.rows; j0 += SUM_COLS) {
        var t: array<f32, SUM_COLS>;
        for (var s0 = 0u; s0 < p.splits; s0 += SUM_STEP) {
            for (var j = 0u; j < SUM_COLS; j++) {
                let c = min(lid + (j0 + j) * MV_WG, p.rows - 1u);
                for (var u = 0u; u < SUM_STEP; u++) {
                    t[j] += span_value(s0, u, rr * p.rows + c);
                }
            }
        }
        for (var j = 0u; j < SUM_COLS; j++) {
            let c = lid + (j0 + j) * MV_WG;
            if (live && c < p.rows) {
                out[r * p.out_stride + c] = t[j];
                let at = r * p.res_stride + c;
                let y = res[at] + t[j];
                res[at] = y;
                ss += y * y;
            }
        }
    }
    let scale = 1.0 / sqrt(wg_sum(lid, ss) / f32(p.rows) + p.eps);
    // (The values an invocation stores are those it wrote above; its clamped reads past
    // the row's end are dropped.)
    for (var j0 = 0u; j0 * MV_WG < p.rows; j0 += SUM_COLS) {
        var y: array<f32, SUM_COLS>;
        var nw: array<f32, SUM_COLS>;
        for (var j = 0u; j < SUM_COLS; j++) {
            let c = min(lid + (j0 + j) * MV_WG, p.rows - 1u);
            y[j] = res[rr * p.res_stride + c];
            nw[j] = bitcast<f32>(w[c]);
        }
        for (var j = 0u; j < SUM_COLS; j++) {
            let c = lid + (j0 + j) * MV_WG;
            if (live && c < p.rows) {
                out3[r * p.res_stride + c] = y[j] * scale * nw[j];
            }
        }
    }
}
