// Index of the largest value of each row (lowest index on ties; NaN never wins), so a
// greedy step reads back 4 bytes. One workgroup per row. Params: ArgmaxParams.

// Params: n (rows), cols.
@group(0) @binding(0) var<uniform> p: Params;
// x: [n, cols].
@group(0) @binding(1) var<storage, read> x: array<f32>;
// out: [n] u32.
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

const WG: u32 = 256u;
const NONE: u32 = 0xffffffffu;
const F32_MAX: f32 = 0x1.fffffep+127f;
var<workgroup> best_v: array<f32, WG>;
var<workgroup> best_i: array<u32, WG>;

@compute @workgroup_size(256)
fn argmax(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let r = wg_linear(wid, nwg);
    if (r >= p.n) {
        return;
    }
    let base = r * p.cols;
    // As the CPU's scan from -inf: the first value above -inf (not NaN) starts the
    // running best; a row of -inf or NaN gives index 0 below.
    var bv = -F32_MAX;
    var bi = NONE;
    for (var c = lid; c < p.cols; c += WG) {
        let v = x[base + c];
        if (v > bv || (bi == NONE && v >= -F32_MAX)) {
            bv = v;
            bi = c;
        }
    }
    best_v[lid] = bv;
    best_i[lid] = bi;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            let ov = best_v[lid + s];
            let oi = best_i[lid + s];
            let mine = best_i[lid];
            if (oi != NONE && (mine == NONE || ov > best_v[lid] || (ov == best_v[lid] && oi < mine))) {
                best_v[lid] = ov;
                best_i[lid] = oi;
            }
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        out[r] = select(best_i[0], 0u, best_i[0] == NONE);
    }
}
