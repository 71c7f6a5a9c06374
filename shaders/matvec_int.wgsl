// The decode matvecs (one activation row) over integer dot products, for weight types
// whose snippet has 32-value units (shaders/quant_int/*.wgsl: unit()): the same entry
// points, bindings and parameters as their twins in matmul.wgsl (matvec, matvec_gated,
// matvec_multi, each plain or with the RMS norm before it fused in), which the host
// takes instead where the weight type has units and the input row fits the staging
// (KernelKey::with_int_runs).
//
// Why: dequantizing each weight value to f32 (shift, mask, convert, multiply-add) made
// these kernels bound by instructions, not memory: the Q4_K gate/up matvec of
// Qwen2.5-1.5B streamed 615 GB/s on an H100. Here every workgroup first quantizes the
// input row, 16 values at a time, to 24-bit integers split into three signed bytes
// (scale = max |x| / QX_MAX of the 16), and a weight unit's quants meet them in
// dot4I8Packed: four products a instruction, exact in i32. A value is off by at most
// 6e-8 of its run's largest, so even next to an outlier (the inputs of Qwen's down
// projections have them) the dot products stay at f32's accuracy. (Two bytes, 16 bits,
// measured 2.5e-3 on Qwen2.5-0.5B's decode logits against the CPU; one byte is what
// llama.cpp's integer kernels take.)
// Weight rows are read as vec4<u32> where the type's blocks are whole vec4s.
// Where INPUT_MERGED (matvec_merged: the o projection after a decode attention split over
// its context) the input binding is the attention's split scratch, and each run is merged
// from its head's splits as it is staged (merged_run), which saves attn_combine's
// dispatch; workgroup 0 also writes the merged row to out2 (the attention's output).
//
// Params: MatmulParams (n = 1).
@group(0) @binding(0) var<uniform> p: Params;
// x: the input row as f32 bits, or where INPUT_STAGED its runs as the gate/up kernel
// before left them (qx below), or where INPUT_MERGED the attention's split scratch.
@group(0) @binding(1) var<storage, read> x: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> w: array<WEIGHT_WORD>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> res: array<f32>;
@group(0) @binding(5) var<storage, read> w2: array<WEIGHT_WORD_2>;
@group(0) @binding(6) var<storage, read_write> out2: array<f32>;
@group(0) @binding(7) var<storage, read> w3: array<WEIGHT_WORD_3>;
@group(0) @binding(8) var<storage, read_write> out3: array<f32>;
// matvec_gated where p.qx_runs > 0: its output row quantized as the staging holds it,
// for the matvec that reads it next (INPUT_STAGED): p.qx_runs runs of 16 values as
// four sections of vec4s (high, middle, low bytes; then bitcast (scale, Σ, 0, 0)).
@group(0) @binding(11) var<storage, read_write> qx: array<vec4<u32>>;

// MV_WG: written by tuning.rs.
var<workgroup> mv_red: array<f32, MV_WG>;

// The staged input: run r (values 16r..16r+15) as 24-bit integers in three signed bytes
// each, high to low, and (scale, Σ of the run's values). QX_RUNS (prepended by the host)
// bounds k / 16.
var<workgroup> qx_hi: array<vec4<u32>, QX_RUNS>;
var<workgroup> qx_mid: array<vec4<u32>, QX_RUNS>;
var<workgroup> qx_lo: array<vec4<u32>, QX_RUNS>;
var<workgroup> qx_d: array<vec2<f32>, QX_RUNS>;

// Σ over 16 values of the bytes of q times those of v (both as signed bytes).
fn dot16(q: vec4<u32>, v: vec4<u32>) -> i32 {
    return dot4I8Packed(q.x, v.x) + dot4I8Packed(q.y, v.y) + dot4I8Packed(q.z, v.z) + dot4I8Packed(q.w, v.w);
}

// Σ over run r of q[i] · x[i] (q: 16 quants the unit's snippet packed as signed bytes,
// in the run's order), in units of the run's scale. Each digit's sum is exact in i32;
// their weighted sum is not (it can pass 2^31), so it is taken in f32.
fn run_dot(r: u32, q: vec4<u32>) -> f32 {
    var hi: vec4<u32>;
    var mid: vec4<u32>;
    var lo: vec4<u32>;
    if (INPUT_STAGED) {
        let n = p.k / 16u;
        hi = x[r];
        mid = x[n + r];
        lo = x[2u * n + r];
    } else {
        hi = qx_hi[r];
        mid = qx_mid[r];
        lo = qx_lo[r];
    }
    return 65536.0 * f32(dot16(q, hi)) + f32(256 * dot16(q, mid) + dot16(q, lo));
}

// (scale, Σ x) of run r.
fn run_scale(r: u32) -> vec2<f32> {
    if (INPUT_STAGED) {
        return bitcast<vec2<f32>>(x[3u * (p.k / 16u) + r].xy);
    }
    return qx_d[r];
}

// The largest |x24| staged. The digits are balanced: hi = (x24 + 32896) >> 16 leaves
// rest = x24 − 65536·hi in [−32896, 32639], so mid = (rest + 128) >> 8 is in
// [−128, 127] and lo = rest − 256·mid in [−128, 127]; hi stays within 127 up to here.
const QX_MAX: f32 = 8355711.0;

// 16 values as a staged run: the digits and (scale, Σ).
struct Run {
    hi: vec4<u32>,
    mid: vec4<u32>,
    lo: vec4<u32>,
    d: vec2<f32>,
}

fn quantize_run(v: array<vec4<f32>, 4>) -> Run {
    let stats = run_max_sum(v);
    let sum = stats.y;
    let d = stats.x / QX_MAX;
    let inv = select(0.0, 1.0 / d, d > 0.0);
    var run: Run;
    for (var i = 0u; i < 4u; i++) {
        let q = clamp(vec4<i32>(round(v[i] * inv)), vec4<i32>(-8355711), vec4<i32>(8355711));
        let h = (q + vec4<i32>(32896)) >> vec4<u32>(16u);
        let rest = q - 65536 * h;
        let m = (rest + vec4<i32>(128)) >> vec4<u32>(8u);
        run.hi[i] = pack4xI8(h);
        run.mid[i] = pack4xI8(m);
        run.lo[i] = pack4xI8(rest - 256 * m);
    }
    run.d = vec2<f32>(d, sum);
    return run;
}

// Run r of the attention's output (INPUT_MERGED), merged from the records its head's
// p.merge_splits splits left in the scratch (x): SPLIT_HEAD values (max m_s, sum l_s),
// then the unnormalised weighted sum acc_s of head_dim values, each record starting on a
// vec4. As attn_combine: Σ_s e^(m_s − M) acc_s / Σ_s e^(m_s − M) l_s, M the largest m_s,
// but in one pass with a running max (the sums rescaled as it grows): one chain of loads
// over the splits' records, not two (natively 0.93× against 0.89× of attn_combine's speed
// after 4,096 tokens, bench/results/merge-splits-h200.md).
// The host merges only heads of whole runs (head_dim a multiple of 16). The loop counts
// to a constant, so a browser's compiler sees that it ends.
fn merged_run(r: u32) -> array<vec4<f32>, 4> {
    let hd = p.merge_head_dim;
    let record = (SPLIT_HEAD + hd) / 4u;
    let first = (16u * r / hd) * p.merge_splits * record;
    let d = (SPLIT_HEAD + 16u * r % hd) / 4u;
    var m = NEG_BIG;
    var l = 0.0;
    var v: array<vec4<f32>, 4>;
    for (var s = 0u; s < MAX_SPLITS; s++) {
        if (s >= p.merge_splits) {
            break;
        }
        let at = first + s * record;
        let ml = bitcast<vec2<f32>>(x[at].xy);
        let m_new = max(m, ml.x);
        let old = exp(m - m_new);
        let e = exp(ml.x - m_new);
        l = l * old + e * ml.y;
        for (var i = 0u; i < 4u; i++) {
            v[i] = v[i] * old + e * bitcast<vec4<f32>>(x[at + d + i]);
        }
        m = m_new;
    }
    for (var i = 0u; i < 4u; i++) {
        v[i] /= l;
    }
    return v;
}

// Quantizes run r of the input (values times the norm weight where normed, in_run; or
// merged from the attention's splits, INPUT_MERGED, the first workgroup writing them out:
// put_merged, shaders.rs) into the staging; returns the run's Σ x² for the norm.
fn stage_run(r: u32, first: bool) -> f32 {
    var v: array<vec4<f32>, 4>;
    var ss = 0.0;
    if (INPUT_MERGED) {
        v = merged_run(r);
        if (first) {
            for (var i = 0u; i < 4u; i++) {
                for (var c = 0u; c < 4u; c++) {
                    put_merged(16u * r + 4u * i + c, v[i][c]);
                }
            }
        }
    } else {
        for (var i = 0u; i < 4u; i++) {
            let raw = bitcast<vec4<f32>>(x[4u * r + i]);
            ss += dot(raw, raw);
            v[i] = in_run(raw, 4u * r + i);
        }
    }
    let run = quantize_run(v);
    qx_hi[r] = run.hi;
    qx_mid[r] = run.mid;
    qx_lo[r] = run.lo;
    qx_d[r] = run.d;
    return ss;
}

// Stages the input row and returns the scale of the sums (1 / rms where normed, else 1;
// in_finish: shaders/norm_int.wgsl, or INT_NORM_OFF in shaders.rs). Called in uniform
// control flow: its barrier makes the staging visible to the workgroup. Where
// INPUT_STAGED the runs are already in the input binding.
fn stage_input(lid: u32, first: bool) -> f32 {
    if (INPUT_STAGED) {
        return 1.0;
    }
    var ss = 0.0;
    for (var r = lid; r < p.k / 16u; r += MV_WG) {
        ss += stage_run(r, first);
    }
    return in_finish(lid, first, ss);
}

// A weight unit (shaders/quant_int/unit.wgsl) · the staged input.
fn unit_sum(t: Unit) -> f32 {
    let x0 = run_scale(t.r.x);
    let x1 = run_scale(t.r.y);
    return t.a.x * x0.x * run_dot(t.r.x, t.q0) + t.b.x * x0.y + t.a.y * x1.x * run_dot(t.r.y, t.q1) + t.b.y * x1.y;
}

// Unit u of row `row` of weight 1, 2 or 3 (the type snippets' unit(), unit_2(), unit_3())
// · the staged input.
fn unit_dot(row: u32, u: u32) -> f32 {
    return unit_sum(unit(row, u));
}

fn unit_dot_2(row: u32, u: u32) -> f32 {
    return unit_sum(unit_2(row, u));
}

fn unit_dot_3(row: u32, u: u32) -> f32 {
    return unit_sum(unit_3(row, u));
}

// Row `row` of weight 1 · the input, this lane's share: units lane, lane + p.lanes, ...
fn row_units(row: u32, lane: u32) -> f32 {
    var a = 0.0;
    for (var u = lane; u < p.k / 32u; u += p.lanes) { // bounded in browsers
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

@compute @workgroup_size(MV_WG)
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

@compute @workgroup_size(MV_WG)
fn matvec_gated(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let lane = lid % p.lanes;
    let row = wg_linear(wid, nwg) * (MV_WG / p.lanes) + lid / p.lanes;
    let sc = stage_input(lid, wg_linear(wid, nwg) == 0u);
    var a = 0.0;
    var c = 0.0;
    if (row < p.rows) {
        for (var u = lane; u < p.k / 32u; u += p.lanes) { // bounded in browsers
            a += unit_dot(row, u);
            c += unit_dot_2(row, u);
        }
    }
    let ta = row_sum(lid, lane, a);
    let tc = row_sum(lid, lane, c);
    let v = gated_act(ta * sc, tc * sc, p.act);
    if (row < p.rows && lane == 0u) {
        out[p.out_offset + row] = v;
    }
    if (p.qx_runs > 0u) {
        put_run(lid, lane, select(0.0, v, row < p.rows), wg_linear(wid, nwg));
    }
}

// The workgroup's 16 outputs (16 lanes a row: the host asks for p.qx_runs only then) as
// run out_offset / 16 + g of qx (matvec_gated's quantized output).
fn put_run(lid: u32, lane: u32, v: f32, g: u32) {
    workgroupBarrier();
    if (lane == 0u) {
        mv_red[lid / 16u] = v;
    }
    workgroupBarrier();
    if (lid == 0u) {
        var vs: array<vec4<f32>, 4>;
        for (var i = 0u; i < 4u; i++) {
            vs[i] = vec4<f32>(mv_red[4u * i], mv_red[4u * i + 1u], mv_red[4u * i + 2u], mv_red[4u * i + 3u]);
        }
        let run = quantize_run(vs);
        let r = p.out_offset / 16u + g;
        qx[r] = run.hi;
        qx[p.qx_runs + r] = run.mid;
        qx[2u * p.qx_runs + r] = run.lo;
        qx[3u * p.qx_runs + r] = vec4<u32>(bitcast<vec2<u32>>(run.d), 0u, 0u);
    }
}

@compute @workgroup_size(MV_WG)
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
        for (var u = lane; u < p.k / 32u; u += p.lanes) { // bounded in browsers
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
