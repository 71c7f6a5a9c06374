// Attention over the KV cache (f32), in two entry points recorded back to back:
//   kv_store   copies the batch's k and v rows into the cache at start..start+n
//   attention  causal grouped-query attention of each (row, head), optionally windowed:
//              row r (position start + r) attends to positions lo..=start+r.
// `attention` walks the positions in chunks of 64 with an online softmax (running max
// and sum), so any context length fits in workgroup memory.
// Params: AttnParams.

// Params: n (rows), start (first position), width (kv_heads × head_dim: cache row),
// q_cols (heads × head_dim: row stride of q and out), heads, kv_heads, head_dim,
// window (0: none), scale, k_stride / v_stride (row strides of the k and v batches).
@group(0) @binding(0) var<uniform> p: Params;
// q: [n, q_cols] queries (attention).
@group(0) @binding(1) var<storage, read> q: array<f32>;
// out: [n, q_cols] (attention).
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
// kc, vc: [capacity, width] the layer's cache, read by attention.
@group(0) @binding(3) var<storage, read> kc: array<f32>;
@group(0) @binding(4) var<storage, read> vc: array<f32>;
// k, v: [n, k_stride] / [n, v_stride] this batch's keys and values (kv_store).
@group(0) @binding(5) var<storage, read> k: array<f32>;
@group(0) @binding(6) var<storage, read> v: array<f32>;
// kw, vw: the cache again, written by kv_store.
@group(0) @binding(7) var<storage, read_write> kw: array<f32>;
@group(0) @binding(8) var<storage, read_write> vw: array<f32>;

@compute @workgroup_size(256)
fn kv_store(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg) * 256u + lid;
    if (id >= p.n * p.width) {
        return;
    }
    let r = id / p.width;
    let c = id % p.width;
    let at = (p.start + r) * p.width + c;
    kw[at] = k[r * p.k_stride + c];
    vw[at] = v[r * p.v_stride + c];
}

const WG: u32 = 64u;
// Most head dims one invocation accumulates (head_dim ≤ WG × MAX_D).
const MAX_D: u32 = 4u;
var<workgroup> probs: array<f32, WG>;
var<workgroup> red: array<f32, WG>;

fn reduce_max(lid: u32) {
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            red[lid] = max(red[lid], red[lid + s]);
        }
        workgroupBarrier();
    }
}

fn reduce_sum(lid: u32) {
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            red[lid] += red[lid + s];
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(64)
fn attention(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg);
    if (id >= p.n * p.heads) {
        return;
    }
    let r = id / p.heads;
    let h = id % p.heads;
    let pos = p.start + r;
    var lo = 0u;
    if (p.window != 0u && pos + 1u > p.window) {
        lo = pos + 1u - p.window;
    }
    let hd = p.head_dim;
    let qb = r * p.q_cols + h * hd;
    let kvb = (h / (p.heads / p.kv_heads)) * hd;

    var m = NEG_BIG;
    var sum = 0.0;
    var acc: array<f32, MAX_D>;
    for (var t0 = lo; t0 <= pos; t0 += WG) {
        let t = t0 + lid;
        var score = NEG_BIG;
        if (t <= pos) {
            var dot = 0.0;
            let kb = t * p.width + kvb;
            for (var d = 0u; d < hd; d++) {
                dot += q[qb + d] * kc[kb + d];
            }
            score = p.scale * dot;
        }
        red[lid] = score;
        reduce_max(lid);
        let m_new = max(m, red[0]);
        var e = 0.0;
        if (t <= pos) {
            e = exp(score - m_new);
        }
        workgroupBarrier();
        probs[lid] = e;
        red[lid] = e;
        reduce_sum(lid);
        let corr = exp(m - m_new);
        sum = sum * corr + red[0];
        m = m_new;
        let count = min(WG, pos + 1u - t0);
        for (var j = 0u; j < MAX_D; j++) {
            let d = lid + j * WG;
            if (d < hd) {
                var a = acc[j] * corr;
                for (var u = 0u; u < count; u++) {
                    a += probs[u] * vc[(t0 + u) * p.width + kvb + d];
                }
                acc[j] = a;
            }
        }
        workgroupBarrier();
    }
    for (var j = 0u; j < MAX_D; j++) {
        let d = lid + j * WG;
        if (d < hd) {
            out[qb + d] = acc[j] / sum;
        }
    }
}
