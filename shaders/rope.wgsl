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
// x2: [rows, cols2] (rope2: the second activation, heads2 heads, same table), e.g. k
// beside q, so both take one dispatch.
@group(0) @binding(3) var<storage, read_write> x2: array<f32>;

// The two indices (within a head) of pair i.
fn pair(i: u32) -> vec2<u32> {
    if (p.neox != 0u) {
        return vec2<u32>(i, i + p.half);
    }
    return vec2<u32>(2u * i, 2u * i + 1u);
}

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

// rope over x (heads) and x2 (heads2) in one dispatch: one invocation per
// (row, head of either, pair).
@compute @workgroup_size(256)
fn rope2(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg) * 256u + lid;
    let hh = p.heads + p.heads2;
    if (id >= p.n * hh * p.half) {
        return;
    }
    let i = id % p.half;
    let h = (id / p.half) % hh;
    let r = id / (p.half * hh);
    let cs = table[r * p.half + i];
    let ab = pair(i);
    if (h < p.heads) {
        let base = (p.row0 + r) * p.cols + h * p.head_dim;
        let x0 = x[base + ab.x];
        let x1 = x[base + ab.y];
        x[base + ab.x] = x0 * cs.x - x1 * cs.y;
        x[base + ab.y] = x0 * cs.y + x1 * cs.x;
    } else {
        let base = (p.row0 + r) * p.cols2 + (h - p.heads) * p.head_dim;
        let x0 = x2[base + ab.x];
        let x1 = x2[base + ab.y];
        x2[base + ab.x] = x0 * cs.x - x1 * cs.y;
        x2[base + ab.y] = x0 * cs.y + x1 * cs.x;
    }
}
