// The k largest values of each row with their indices, in order (larger first, lower
// index on ties; NaN and -inf count as the lowest finite value, so a top-1 is the CPU's
// argmax), so a sampling step reads back k
// candidates instead of a whole vocabulary. Two entry points recorded back to back:
//   top_k_chunks  one workgroup per (row, chunk of `chunk` values): the chunk's top k
//   top_k_merge   one workgroup per row: the top k of its chunks' candidates
// Each takes k rounds; round j finds, by a workgroup reduction, the best value that
// comes after round j-1's pick in that order, so no sorting buffer is needed.
// Params: TopKParams.

// Params: n (rows), cols, k, chunk (values per chunk), chunks (per row).
@group(0) @binding(0) var<uniform> p: Params;
// x: [n, cols] (top_k_chunks).
@group(0) @binding(1) var<storage, read> x: array<f32>;
// part: [n, chunks, k] (index, value bits) per chunk; index NONE where a chunk has
// fewer than k values. Written by top_k_chunks, read by top_k_merge.
@group(0) @binding(2) var<storage, read_write> part: array<vec2<u32>>;
// out: [n, k] (index, value bits) (top_k_merge).
@group(0) @binding(3) var<storage, read_write> out: array<vec2<u32>>;

const WG: u32 = 256u;
const NONE: u32 = 0xffffffffu;
// The lowest finite value: the start of a search (with index NONE, which loses to any).
const LOWEST: f32 = -0x1.fffffep+127f;
var<workgroup> bv: array<f32, WG>;
var<workgroup> bi: array<u32, WG>;

// Whether (av, ai) comes before (cv, ci): larger value, then lower index; NONE last.
fn before(av: f32, ai: u32, cv: f32, ci: u32) -> bool {
    if (ai == NONE) {
        return false;
    }
    if (ci == NONE) {
        return true;
    }
    return av > cv || (av == cv && ai < ci);
}

// A value as ordered here: NaN and -inf as the lowest finite value (so they tie, and
// a row of nothing else gives its first index, as the CPU's argmax does). NaN is
// recognised by its bits: compilers may assume `v != v` is false.
fn key(v: f32) -> f32 {
    return select(v, LOWEST, (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u || v < LOWEST);
}

// Reduces every invocation's (v, i) to the first in order, left in bv[0], bi[0].
fn reduce_best(lid: u32, v: f32, i: u32) {
    bv[lid] = v;
    bi[lid] = i;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s && before(bv[lid + s], bi[lid + s], bv[lid], bi[lid])) {
            bv[lid] = bv[lid + s];
            bi[lid] = bi[lid + s];
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(256)
fn top_k_chunks(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg);
    if (id >= p.n * p.chunks) {
        return;
    }
    let r = id / p.chunks;
    let c0 = (id % p.chunks) * p.chunk;
    let c1 = min(c0 + p.chunk, p.cols);
    // The previous round's pick: candidates must come after it.
    var pv = 0.0;
    var pi = NONE;
    for (var j = 0u; j < p.k; j++) {
        var v = LOWEST;
        var i = NONE;
        for (var c = c0 + lid; c < c1; c += WG) {
            let cv = key(x[r * p.cols + c]);
            if ((pi == NONE || before(pv, pi, cv, c)) && before(cv, c, v, i)) {
                v = cv;
                i = c;
            }
        }
        reduce_best(lid, v, i);
        // Uniform loads: every invocation sees the pick, and may leave the loop on it.
        pv = workgroupUniformLoad(&bv[0]);
        pi = workgroupUniformLoad(&bi[0]);
        if (lid == 0u) {
            part[id * p.k + j] = vec2<u32>(pi, bitcast<u32>(pv));
        }
        if (pi == NONE) {
            // The chunk is exhausted: the remaining rounds are empty too.
            for (var rest = j + 1u + lid; rest < p.k; rest += WG) {
                part[id * p.k + rest] = vec2<u32>(NONE, 0u);
            }
            return;
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(256)
fn top_k_merge(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let r = wg_linear(wid, nwg);
    if (r >= p.n) {
        return;
    }
    let base = r * p.chunks * p.k;
    let total = p.chunks * p.k;
    var pv = 0.0;
    var pi = NONE;
    for (var j = 0u; j < p.k; j++) {
        var v = LOWEST;
        var i = NONE;
        for (var c = lid; c < total; c += WG) {
            let e = part[base + c];
            let cv = bitcast<f32>(e.y);
            if (e.x != NONE && (pi == NONE || before(pv, pi, cv, e.x)) && before(cv, e.x, v, i)) {
                v = cv;
                i = e.x;
            }
        }
        reduce_best(lid, v, i);
        pv = workgroupUniformLoad(&bv[0]);
        pi = workgroupUniformLoad(&bi[0]);
        if (lid == 0u) {
            out[r * p.k + j] = vec2<u32>(pi, bitcast<u32>(pv));
        }
        if (pi == NONE) {
            // Fewer than k candidates in the row.
            for (var rest = j + 1u + lid; rest < p.k; rest += WG) {
                out[r * p.k + rest] = vec2<u32>(NONE, 0u);
            }
            return;
        }
        workgroupBarrier();
    }
}
