// Attention over the KV cache (f32), in two entry points recorded back to back:
//   kv_store   copies the batch's k and v rows into the cache at start..start+n
//   attention  causal grouped-query attention of each (row, head), optionally windowed:
//              row r (position start + r) attends to positions lo..=start+r; with
//              splits > 1 (decode over a long context) each (row, head) is spread over
//              `splits` workgroups, each taking a contiguous share of the positions
//   attn_combine  merges the splits' partial results (splits > 1 only)
// `attention` walks the positions in chunks of CHUNK with an online softmax (running
// max and sum), so any context length fits in workgroup memory.
// Params: AttnParams.

// Params: n (rows), start (first position), width (kv_heads × head_dim: cache row),
// q_cols (heads × head_dim: row stride of q and out), heads, kv_heads, head_dim,
// window (0: none), scale, k_stride / v_stride (row strides of the k and v batches),
// splits (workgroups per (row, head)), softcap (> 0: scores become
// softcap * tanh(score / softcap) before the softmax, Gemma 2).
@group(0) @binding(0) var<uniform> p: Params;
// q: [n, q_cols] queries (attention).
@group(0) @binding(1) var<storage, read> q: array<f32>;
// out: [n, q_cols] (attention).
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
// The layer's cache [capacity, width], read by attention through k_at()/v_at() and
// written by kv_store through kv_put2() (bindings 3, 4, 9, 10: shaders/kv_f32.wgsl or
// kv_f16.wgsl, prepended).
// k, v: [n, k_stride] / [n, v_stride] this batch's keys and values (kv_store).
@group(0) @binding(5) var<storage, read> k: array<f32>;
@group(0) @binding(6) var<storage, read> v: array<f32>;
// scratch: [n, heads, splits, head_dim + 2] per split of a row's positions: its running
// max, its sum, then its unnormalised weighted sum of V (attention when splits > 1,
// read by attn_combine).
@group(0) @binding(11) var<storage, read_write> scratch: array<f32>;

@compute @workgroup_size(256)
fn kv_store(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    // One invocation per pair of a row's values (an f16 cache packs them in one word).
    let pairs = (p.width + 1u) / 2u;
    let id = wg_linear(wid, nwg) * 256u + lid;
    if (id >= p.n * pairs) {
        return;
    }
    let r = id / pairs;
    let c = 2u * (id % pairs);
    let both = c + 1u < p.width;
    let kb = r * p.k_stride + c;
    let vb = r * p.v_stride + c;
    var kv = vec2<f32>(k[kb], 0.0);
    var vv = vec2<f32>(v[vb], 0.0);
    if (both) {
        kv.y = k[kb + 1u];
        vv.y = v[vb + 1u];
    }
    kv_put2((p.start + r) * p.width + c, kv, vv, both);
}

// `attention`: one workgroup of WG invocations per (row, head). The row's positions are
// taken CHUNK at a time (online softmax across chunks: running max and sum):
//   1. scores: the invocations split the chunk's positions, each computing the full
//      q·k dot of its positions (q scaled, in workgroup memory, read as a broadcast);
//   2. one workgroup max reduction per chunk (each invocation keeps its share of the
//      sum, reduced once at the end);
//   3. the weighted sum of V: invocations over (4-value lane of head_dim) × (slice of
//      positions), each accumulating a vec4, reduced over the slices at the end.
// So a chunk of up to CHUNK positions costs ~12 barriers, not ~14 per 64 positions.
const WG: u32 = 256u;
const CHUNK: u32 = 1024u;
// Largest head_dim (the host checks it).
const MAX_HD: u32 = 256u;
var<workgroup> qs: array<f32, MAX_HD>;
var<workgroup> sc: array<f32, CHUNK>;
var<workgroup> red: array<f32, WG>;
var<workgroup> part: array<vec4<f32>, WG>;

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

// Values d..d+3 of the (scaled) query.
fn q4(d: u32) -> vec4<f32> {
    return vec4<f32>(qs[d], qs[d + 1u], qs[d + 2u], qs[d + 3u]);
}

// Values d..d+3 of cache row `at` (from element `at`), zero past head_dim.
fn v4(at: u32, d: u32, hd: u32) -> vec4<f32> {
    if (d + 4u <= hd) {
        return vec4<f32>(v_at(at), v_at(at + 1u), v_at(at + 2u), v_at(at + 3u));
    }
    var r = vec4<f32>(0.0);
    for (var c = 0u; c < 4u; c++) {
        if (d + c < hd) {
            r[c] = v_at(at + c);
        }
    }
    return r;
}

@compute @workgroup_size(256)
fn attention(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg);
    if (id >= p.n * p.heads * p.splits) {
        return;
    }
    let split = id % p.splits;
    let rh = id / p.splits;
    let r = rh / p.heads;
    let h = rh % p.heads;
    let pos = p.start + r;
    var lo = 0u;
    if (p.window != 0u && pos + 1u > p.window) {
        lo = pos + 1u - p.window;
    }
    // This workgroup's share of the positions: first..end (exclusive; may be empty).
    let span = (pos + 1u - lo + p.splits - 1u) / p.splits;
    let first = lo + split * span;
    let end = min(pos + 1u, first + span);
    let hd = p.head_dim;
    let hd4 = hd & ~3u;
    let qb = r * p.q_cols + h * hd;
    let kvb = (h / (p.heads / p.kv_heads)) * hd;
    for (var d = lid; d < hd; d += WG) {
        qs[d] = q[qb + d] * p.scale;
    }
    workgroupBarrier();
    let lanes = (hd + 3u) / 4u;
    let slices = WG / lanes;
    let lane = lid % lanes;
    let slice = lid / lanes;

    var m = NEG_BIG;
    var l = 0.0;
    var acc = vec4<f32>(0.0);
    for (var c0 = first; c0 < end; c0 += CHUNK) {
        let cnt = min(CHUNK, end - c0);
        var lmax = NEG_BIG;
        for (var i = lid; i < cnt; i += WG) {
            let kb = (c0 + i) * p.width + kvb;
            // 16 values per step: many loads in flight per invocation (the dot is
            // latency-bound, not bandwidth-bound).
            var s4 = vec4<f32>(0.0);
            var d = 0u;
            for (; d + 16u <= hd4; d += 16u) {
                let k0 = vec4<f32>(k_at(kb + d), k_at(kb + d + 1u), k_at(kb + d + 2u), k_at(kb + d + 3u));
                let k1 = vec4<f32>(k_at(kb + d + 4u), k_at(kb + d + 5u), k_at(kb + d + 6u), k_at(kb + d + 7u));
                let k2 = vec4<f32>(k_at(kb + d + 8u), k_at(kb + d + 9u), k_at(kb + d + 10u), k_at(kb + d + 11u));
                let k3 = vec4<f32>(k_at(kb + d + 12u), k_at(kb + d + 13u), k_at(kb + d + 14u), k_at(kb + d + 15u));
                s4 += k0 * q4(d) + k1 * q4(d + 4u) + k2 * q4(d + 8u) + k3 * q4(d + 12u);
            }
            for (; d < hd4; d += 4u) {
                let kv = vec4<f32>(k_at(kb + d), k_at(kb + d + 1u), k_at(kb + d + 2u), k_at(kb + d + 3u));
                s4 += kv * q4(d);
            }
            var s = s4.x + s4.y + s4.z + s4.w;
            for (var d = hd4; d < hd; d++) {
                s += k_at(kb + d) * qs[d];
            }
            if (p.softcap > 0.0) {
                s = p.softcap * tanh_safe(s / p.softcap);
            }
            sc[i] = s;
            lmax = max(lmax, s);
        }
        red[lid] = lmax;
        reduce_max(lid);
        let m_new = max(m, red[0]);
        // Each invocation keeps its own share of the sum (all scaled by the common
        // running max); one reduction at the end.
        let corr = exp(m - m_new);
        l *= corr;
        for (var i = lid; i < cnt; i += WG) {
            let e = exp(sc[i] - m_new);
            sc[i] = e;
            l += e;
        }
        workgroupBarrier();
        m = m_new;
        acc *= corr;
        if (slice < slices) {
            let d = 4u * lane;
            // Four positions per step, for loads in flight.
            var i = slice;
            for (; i + 3u * slices < cnt; i += 4u * slices) {
                let a0 = v4((c0 + i) * p.width + kvb + d, d, hd);
                let a1 = v4((c0 + i + slices) * p.width + kvb + d, d, hd);
                let a2 = v4((c0 + i + 2u * slices) * p.width + kvb + d, d, hd);
                let a3 = v4((c0 + i + 3u * slices) * p.width + kvb + d, d, hd);
                acc += sc[i] * a0 + sc[i + slices] * a1 + sc[i + 2u * slices] * a2 + sc[i + 3u * slices] * a3;
            }
            for (; i < cnt; i += slices) {
                acc += sc[i] * v4((c0 + i) * p.width + kvb + d, d, hd);
            }
        }
        workgroupBarrier();
    }
    red[lid] = l;
    reduce_sum(lid);
    l = red[0];
    part[lid] = acc;
    workgroupBarrier();
    if (lid < lanes) {
        var o = vec4<f32>(0.0);
        for (var s = 0u; s < slices; s++) {
            o += part[s * lanes + lid];
        }
        let d = 4u * lid;
        if (p.splits == 1u) {
            o /= l;
            for (var c = 0u; c < 4u; c++) {
                if (d + c < hd) {
                    out[qb + d + c] = o[c];
                }
            }
        } else {
            let sb = id * (hd + 2u);
            if (lid == 0u) {
                scratch[sb] = m;
                scratch[sb + 1u] = l;
            }
            for (var c = 0u; c < 4u; c++) {
                if (d + c < hd) {
                    scratch[sb + 2u + d + c] = o[c];
                }
            }
        }
    }
}

// One workgroup per (row, head): out = Σ_s e^(m_s − M) acc_s / Σ_s e^(m_s − M) l_s.
@compute @workgroup_size(64)
fn attn_combine(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let rh = wg_linear(wid, nwg);
    if (rh >= p.n * p.heads) {
        return;
    }
    let r = rh / p.heads;
    let h = rh % p.heads;
    let hd = p.head_dim;
    let e = hd + 2u;
    let base = rh * p.splits * e;
    var mx = NEG_BIG;
    for (var s = 0u; s < p.splits; s++) {
        mx = max(mx, scratch[base + s * e]);
    }
    var l = 0.0;
    for (var s = 0u; s < p.splits; s++) {
        l += exp(scratch[base + s * e] - mx) * scratch[base + s * e + 1u];
    }
    let qb = r * p.q_cols + h * hd;
    for (var d = lid; d < hd; d += 64u) {
        var o = 0.0;
        for (var s = 0u; s < p.splits; s++) {
            o += exp(scratch[base + s * e] - mx) * scratch[base + s * e + 2u + d];
        }
        out[qb + d] = o / l;
    }
}
