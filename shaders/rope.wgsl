// Rotary position embedding, in place. The (cos, sin) of every (row, pair) are computed
// on the host in f64 exactly as the CPU backend does (long positions stay exact) and
// travel in the per-submission parameter blob. Two entry points:
//   rope     one activation, one invocation per (row, head, pair)
//   qk_rope  q and k together, one workgroup per (row, head of either): optionally the
//            projection biases first (Qwen2; v's too, in place, by the k heads'
//            workgroups), optionally a per-head RMS norm (Qwen3's and Gemma 3's q/k
//            norms) and the rotation (both in prep_head, shaders/head_prep.wgsl),
//            then optionally the k row and the v row stored into the layer's KV
//            cache, so everything between the projections and attention is one
//            dispatch (in decode, attention_rope in attention.wgsl takes it all in)
// Params: RopeParams.

// Params: n (rows in this dispatch), row0 (first row of x), cols (row stride of x),
// heads, head_dim, half (= n_rot / 2), neox (1: pairs (i, i + half); 0: (2i, 2i + 1));
// qk_rope also: heads2 / cols2 (k's heads and row stride), norm (1: RMS-normalise each
// head first, weights qn / kn, epsilon eps), store (1: write k and v rows to the cache
// at position start + row0 + r), width (cache row), v_stride, bias (1: add the biases:
// qn / kn hold the q and k biases [heads × head_dim] then, and v_bias() reads v's,
// declared by the host only in the bias variant).
@group(0) @binding(0) var<uniform> p: Params;
// x: [rows, cols]; the first heads × head_dim columns of each row are rotated.
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
// table: [n, half] (cos, sin) of row row0 + r, pair i.
@group(0) @binding(2) var<storage, read> table: array<vec2<f32>>;
// qk_rope: x holds q; x2: [rows, cols2] k (heads2 heads, same table).
@group(0) @binding(3) var<storage, read_write> x2: array<f32>;
// v: [rows, v_stride] the batch's values (biased in place with bias == 1, stored with
// store == 1).
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
// The layer's cache [capacity, width], written with store == 1 through kv_put2()
// (bindings 9, 10, and 3, 4 unused here: shaders/kv_f32.wgsl or kv_f16.wgsl, prepended;
// dummies without a store).
// qn, kn: [head_dim] the q and k norm weights (norm == 1), or [heads × head_dim] the q
// and k biases (bias == 1); else dummies.
@group(0) @binding(7) var<storage, read> qn: array<f32>;
@group(0) @binding(8) var<storage, read> kn: array<f32>;

@compute @workgroup_size(ITEMS_WG)
fn rope(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg) * ITEMS_WG + lid;
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

// Pair i's (cos, sin) in row r of the table (for prep_head).
fn cos_sin(r: u32, i: u32) -> vec2<f32> {
    return table[r * p.half + i];
}

const QK_WG: u32 = 64u;
// One head (head_dim ≤ MAX_HD, checked by the host) and the norm's partial sums, for
// prep_head (shaders/head_prep.wgsl, appended).
const PREP_WG: u32 = QK_WG;
var<workgroup> hv: array<f32, MAX_HD>;
var<workgroup> red: array<f32, QK_WG>;

@compute @workgroup_size(64)
fn qk_rope(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg);
    let hh = p.heads + p.heads2;
    if (id >= p.n * hh) {
        return;
    }
    let r = id / hh;
    let h = id % hh;
    let is_k = h >= p.heads;
    let hd = p.head_dim;
    var base = (p.row0 + r) * p.cols + h * hd;
    if (is_k) {
        base = (p.row0 + r) * p.cols2 + (h - p.heads) * hd;
    }
    for (var d = lid; d < hd; d += QK_WG) {
        var e = 0.0;
        if (is_k) {
            e = x2[base + d];
            if (p.bias != 0u) {
                e += kn[(h - p.heads) * hd + d];
            }
        } else {
            e = x[base + d];
            if (p.bias != 0u) {
                e += qn[h * hd + d];
            }
        }
        hv[d] = e;
    }
    prep_head(lid, is_k, r);
    if (!is_k) {
        for (var d = lid; d < hd; d += QK_WG) {
            x[base + d] = hv[d];
        }
        return;
    }
    let kh = (h - p.heads) * hd;
    let at = (p.start + p.row0 + r) * p.width + kh;
    let vb = (p.row0 + r) * p.v_stride + kh;
    for (var d = lid; d < hd; d += QK_WG) {
        x2[base + d] = hv[d];
    }
    if (p.store != 0u || p.bias != 0u) {
        // By pairs (an f16 cache packs two values per word; the host keeps heads even).
        for (var d = 2u * lid; d < hd; d += 2u * QK_WG) {
            let both = d + 1u < hd;
            let kv = kv_pair(vb, kh, d, both);
            if (p.bias != 0u) {
                v[vb + d] = kv[1].x;
                if (both) {
                    v[vb + d + 1u] = kv[1].y;
                }
            }
            if (p.store != 0u) {
                kv_put2(at + d, kv[0], kv[1], both);
            }
        }
    }
}
