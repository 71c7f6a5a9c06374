// Rotary position embedding, in place. The (cos, sin) of every (row, pair) are computed
// on the host in f64 exactly as the CPU backend does (long positions stay exact) and
// travel in the per-submission parameter blob. One invocation per (row, head, pair).
// Params: RopeParams.

// Params: n (rows in this dispatch), row0 (first row of x), cols (row stride of x),
// heads, head_dim, half (= n_rot / 2), neox (1: pairs (i, i + half); 0: (2i, 2i + 1)).
@group(0) @binding(0) var<uniform> p: Params;
// x: [rows, cols]; the first heads × head_dim columns of each row are rotated.
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
// table: [n, half] (cos, sin) of row row0 + r, pair i.
@group(0) @binding(2) var<storage, read> table: array<vec2<f32>>;

@compute @workgroup_size(256)
fn rope(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg) * 256u + lid;
    if (id >= p.n * p.heads * p.half) {
        return;
    }
    let i = id % p.half;
    let h = (id / p.half) % p.heads;
    let r = id / (p.half * p.heads);
    let cs = table[r * p.half + i];
    let base = (p.row0 + r) * p.cols + h * p.head_dim;
    var a = 2u * i;
    var b = 2u * i + 1u;
    if (p.neox != 0u) {
        a = i;
        b = i + p.half;
    }
    let x0 = x[base + a];
    let x1 = x[base + b];
    x[base + a] = x0 * cs.x - x1 * cs.y;
    x[base + b] = x0 * cs.y + x1 * cs.x;
}
