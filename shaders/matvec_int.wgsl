// The decode matvecs (one activation row) over integer dot products, for weight types
// whose snippet has 32-value units (shaders/quant_int/*.wgsl: unit_dot): the same entry
// points, bindings and parameters as their twins in matmul.wgsl (matvec, matvec_gated,
// matvec_multi, each plain or with the RMS norm before it fused in), which the host
// takes instead where the weight type has units and the input row fits the staging
// (KernelKey::with_int_runs).
//
// Why: dequantizing each weight value to f32 (shift, mask, convert, multiply-add) made
// these kernels bound by instructions, not memory: the Q4_K gate/up matvec of
// Qwen2.5-1.5B streamed 615 GB/s on an H100. Here every workgroup first quantizes the
// input row, 16 values at a time, to 16-bit integers split into two signed bytes
// (x16 = 256·hi + lo, scale = max |x| / 32639 of the 16), and a weight unit's quants meet
// them in dot4I8Packed: four products a instruction, exact in i32. The input keeps ~15
// bits, so a dot product moves by ~1e-5 of Σ|w·x| against f32 (examples/gated_probe.rs:
// 1,224 GB/s, 2.3e-5 of the largest output; 8-bit inputs, 1,287 GB/s, 8.4e-3).
// Weight rows are read as vec4<u32> where the type's blocks are whole vec4s.
//
// Params: MatmulParams (n = 1).
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> w: array<WEIGHT_WORD>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> res: array<f32>;
@group(0) @binding(5) var<storage, read> w2: array<WEIGHT_WORD_2>;
@group(0) @binding(6) var<storage, read_write> out2: array<f32>;
@group(0) @binding(7) var<storage, read> w3: array<WEIGHT_WORD_3>;
@group(0) @binding(8) var<storage, read_write> out3: array<f32>;

const MV_WG: u32 = 256u;
var<workgroup> mv_red: array<f32, MV_WG>;

// The staged input: run r (values 16r..16r+15) as 16 high and 16 low signed bytes, and
// (scale, Σ of the run's values). QX_RUNS (prepended by the host) bounds k / 16.
var<workgroup> qx_hi: array<vec4<u32>, QX_RUNS>;
var<workgroup> qx_lo: array<vec4<u32>, QX_RUNS>;
var<workgroup> qx_d: array<vec2<f32>, QX_RUNS>;

// Σ over run r of q[i] · x[i] (q: 16 bytes the unit's snippet packed as signed bytes,
// in the run's order), in units of the run's scale.
fn run_dot(r: u32, q: vec4<u32>) -> i32 {
    let h = qx_hi[r];
    let l = qx_lo[r];
    let hi = dot4I8Packed(q.x, h.x) + dot4I8Packed(q.y, h.y) + dot4I8Packed(q.z, h.z) + dot4I8Packed(q.w, h.w);
    let lo = dot4I8Packed(q.x, l.x) + dot4I8Packed(q.y, l.y) + dot4I8Packed(q.z, l.z) + dot4I8Packed(q.w, l.w);
    return 256 * hi + lo;
}

// (scale, Σ x) of run r.
fn run_scale(r: u32) -> vec2<f32> {
    return qx_d[r];
}

// Quantizes run r of the input (values times the norm weight where normed, in_run) into
// the staging; returns the run's Σ x² for the norm.
fn stage_run(r: u32) -> f32 {
    var v: array<vec4<f32>, 4>;
    var ss = 0.0;
    var amax = 0.0;
    var sum = 0.0;
    for (var i = 0u; i < 4u; i++) {
        let raw = x[4u * r + i];
        ss += dot(raw, raw);
        let t = in_run(raw, 4u * r + i);
        v[i] = t;
        let a = abs(t);
        amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
        sum += t.x + t.y + t.z + t.w;
    }
    let d = amax / 32639.0;
    let inv = select(0.0, 1.0 / d, d > 0.0);
    var hi: vec4<u32>;
    var lo: vec4<u32>;
    for (var i = 0u; i < 4u; i++) {
        let q = vec4<i32>(round(v[i] * inv));
        let h = (q + vec4<i32>(128)) >> vec4<u32>(8u);
        hi[i] = pack4xI8(h);
        lo[i] = pack4xI8(q - 256 * h);
    }
    qx_hi[r] = hi;
    qx_lo[r] = lo;
    qx_d[r] = vec2<f32>(d, sum);
    return ss;
}

// Stages the input row and returns the scale of the sums (1 / rms where normed, else 1;
// in_finish, shaders/norm_int_*.wgsl). Called in uniform control flow: its barrier makes
// the staging visible to the workgroup.
fn stage_input(lid: u32, first: bool) -> f32 {
    var ss = 0.0;
    for (var r = lid; r < p.k / 16u; r += MV_WG) {
        ss += stage_run(r);
    }
    return in_finish(lid, first, ss);
}

// Row `row` of weight 1 · the input, this lane's share: units lane, lane + p.lanes, ...
fn row_units(row: u32, lane: u32) -> f32 {
    var a = 0.0;
    for (var u = lane; u < p.k / 32u; u += p.lanes) {
        a += unit_dot(row, u);
    }
    return a;
}

fn put(row: u32, v: f32) {
    out[p.out_offset + row] = v;
    if (p.res_add != 0u) {
        let at = p.out_offset + row;
        res[at] = res[at] + v;
    }
}

@compute @workgroup_size(256)
fn matvec(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let lane = lid % p.lanes;
    let row = wg_linear(wid, nwg) * (MV_WG / p.lanes) + lid / p.lanes;
    let sc = stage_input(lid, wg_linear(wid, nwg) == 0u);
    var a = 0.0;
    if (row < p.rows) {
        a = row_units(row, lane);
    }
    let t = row_sum(lid, lane, a);
    if (row < p.rows && lane == 0u) {
        put(row, t * sc);
    }
}

@compute @workgroup_size(256)
fn matvec_gated(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let lane = lid % p.lanes;
    let row = wg_linear(wid, nwg) * (MV_WG / p.lanes) + lid / p.lanes;
    let sc = stage_input(lid, wg_linear(wid, nwg) == 0u);
    var a = 0.0;
    var c = 0.0;
    if (row < p.rows) {
        for (var u = lane; u < p.k / 32u; u += p.lanes) {
            a += unit_dot(row, u);
            c += unit_dot_2(row, u);
        }
    }
    let ta = row_sum(lid, lane, a);
    let tc = row_sum(lid, lane, c);
    if (row < p.rows && lane == 0u) {
        out[p.out_offset + row] = gated_act(ta * sc, tc * sc, p.act);
    }
}

@compute @workgroup_size(256)
fn matvec_multi(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let lane = lid % p.lanes;
    let per = MV_WG / p.lanes;
    var g = wg_linear(wid, nwg);
    let g1 = (p.rows + per - 1u) / per;
    let g2 = (p.rows2 + per - 1u) / per;
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
    let row = g * per + lid / p.lanes;
    let sc = stage_input(lid, wg_linear(wid, nwg) == 0u);
    var a = 0.0;
    if (row < rows) {
        for (var u = lane; u < p.k / 32u; u += p.lanes) {
            if (s == 0u) {
                a += unit_dot(row, u);
            } else if (s == 1u) {
                a += unit_dot_2(row, u);
            } else {
                a += unit_dot_3(row, u);
            }
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
