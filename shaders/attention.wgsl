// Attention over the KV cache (f32), in two entry points recorded back to back:
//   kv_store   copies the batch's k and v rows into the cache at start..start+n
//   attention  causal grouped-query attention of each (row, head), optionally windowed:
//              row r (position start + r) attends to positions lo..=start+r; with
//              splits > 1 (decode over a long context) each (row, head) is spread over
//              `splits` workgroups, each taking a contiguous share of the positions
//   attention_rope  decode (one row): `attention` with the q/k preparation and the KV
//              store of qk_rope (rope.wgsl) taken in, one dispatch fewer per layer
//   attn_combine  merges the splits' partial results (splits > 1 only)
// `attention` walks the positions in chunks of CHUNK with an online softmax (running
// max and sum), so any context length fits in workgroup memory.
// Params: AttnParams.

// Params: n (rows), start (first position), width (kv_heads × head_dim: cache row),
// q_cols (heads × head_dim: row stride of q and out), heads, kv_heads, head_dim,
// window (0: none), scale, k_stride / v_stride (row strides of the k and v batches),
// splits (workgroups per (row, head)), softcap (> 0: scores become
// softcap * tanh(score / softcap) before the softmax, Gemma 2); attention_rope also
// half, neox, norm, eps, bias (as qk_rope's).
@group(0) @binding(0) var<uniform> p: Params;
// q: [n, q_cols] queries (attention), read as vec4s by the batch kernel (its head_dim
// is a multiple of 4) and through q1() by the others.
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
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
// attention_rope: qn, kn the q and k norm weights [head_dim] (norm == 1), or the q and
// k biases [heads × head_dim] (bias == 1); vbias v's bias (bias == 1); table the
// (cos, sin) of the row's pairs, two per vec4 (as qk_rope's, but a uniform: it counts
// toward no storage-buffer limit). Dummies where unused.
@group(0) @binding(7) var<storage, read> qn: array<f32>;
@group(0) @binding(8) var<storage, read> kn: array<f32>;
@group(0) @binding(12) var<uniform> table: array<vec4<f32>, 64>;
@group(0) @binding(13) var<storage, read> vbias: array<f32>;

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
//   1. scores: the invocations split the chunk's positions, 1 to 8 of them per position
//      (score_share: more where there are few) each taking a share of its q·k dot (q
//      scaled, in workgroup memory, read as a broadcast);
//   2. one workgroup max reduction per chunk (fold: each invocation keeps its share of
//      the sum, reduced once at the end);
//   3. the weighted sum of V: invocations over (4-value lane of head_dim) × (slice of
//      positions), each accumulating a vec4, reduced over the slices at the end.
// So a chunk of up to CHUNK positions costs a few barriers, not ~14 per 64 positions.
const WG: u32 = 256u;
const CHUNK: u32 = 1024u;
// Largest head_dim (the host checks it).
const MAX_HD: u32 = 256u;
var<workgroup> qs: array<f32, MAX_HD>;
var<workgroup> sc: array<f32, CHUNK>;
var<workgroup> red: array<f32, WG>;
var<workgroup> part: array<vec4<f32>, WG>;
// attention_rope: the head being prepared (prep_head, shaders/head_prep.wgsl).
const PREP_WG: u32 = WG;
var<workgroup> hv: array<f32, MAX_HD>;

// The max (take_max) or the sum of every invocation's v, for all: a fold of 16 values
// by every 16th invocation, then of the 16 results by all, so three barriers, not one
// per halving of a tree. Called in uniform control flow.
fn fold(lid: u32, v: f32, take_max: bool) -> f32 {
    workgroupBarrier();
    red[lid] = v;
    workgroupBarrier();
    if (lid % 16u == 0u) {
        var a = v;
        for (var j = 1u; j < 16u; j++) {
            a = select(a + red[lid + j], max(a, red[lid + j]), take_max);
        }
        red[lid] = a;
    }
    workgroupBarrier();
    var t = red[0];
    for (var j = 16u; j < WG; j += 16u) {
        t = select(t + red[j], max(t, red[j]), take_max);
    }
    return t;
}

// Value i of the query batch.
fn q1(i: u32) -> f32 {
    return q[i >> 2u][i & 3u];
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

// Row r's positions this workgroup takes (the split-th share): first..end (exclusive;
// may be empty).
fn share(r: u32, split: u32) -> vec2<u32> {
    let pos = p.start + r;
    var lo = 0u;
    if (p.window != 0u && pos + 1u > p.window) {
        lo = pos + 1u - p.window;
    }
    let span = (pos + 1u - lo + p.splits - 1u) / p.splits;
    let first = lo + split * span;
    return vec2<u32>(first, min(pos + 1u, first + span));
}

@compute @workgroup_size(256)
fn attention(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg);
    if (id >= p.n * p.heads * p.splits) {
        return;
    }
    let rh = id / p.splits;
    let r = rh / p.heads;
    let h = rh % p.heads;
    let qb = r * p.q_cols + h * p.head_dim;
    for (var d = lid; d < p.head_dim; d += WG) {
        qs[d] = q1(qb + d) * p.scale;
    }
    workgroupBarrier();
    attend(id, lid, r, h, share(r, id % p.splits));
}

// Pair i's (cos, sin) (for prep_head; one row: r is 0).
fn cos_sin(r: u32, i: u32) -> vec2<f32> {
    let two = table[i >> 1u];
    if ((i & 1u) == 0u) {
        return two.xy;
    }
    return two.zw;
}

// v's bias (attention_rope; zero without).
fn v_bias(i: u32) -> f32 {
    if (p.bias != 0u) {
        return vbias[i];
    }
    return 0.0;
}

// `attention_rope`: the one row of a decode step, its query, key and value as the
// projections left them (q/k/v widths: heads and kv_heads × head_dim). Each workgroup
// prepares its head of q (bias, norm, rotation: prep_head) into qs; a workgroup whose
// share of the positions holds the new one also prepares the row's key for its KV head
// and adds v's bias, and stores both into the cache before it reads the cache (the
// other workgroups of its KV group that hold it store the same values). q, k and v
// are left as they were. The cache is bound writable here and read through that
// binding (shaders.rs assembles k_at/v_at over kw/vw for this kernel).
@compute @workgroup_size(256)
fn attention_rope(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg);
    if (id >= p.heads * p.splits) {
        return;
    }
    let h = id / p.splits;
    let range = share(0u, id % p.splits);
    let hd = p.head_dim;
    for (var d = lid; d < hd; d += WG) {
        var e = q1(h * hd + d);
        if (p.bias != 0u) {
            e += qn[h * hd + d];
        }
        hv[d] = e;
    }
    prep_head(lid, false, 0u);
    for (var d = lid; d < hd; d += WG) {
        qs[d] = hv[d] * p.scale;
    }
    if (range.x <= p.start && p.start < range.y) {
        workgroupBarrier();
        let kh = (h / (p.heads / p.kv_heads)) * hd;
        for (var d = lid; d < hd; d += WG) {
            var e = k[kh + d];
            if (p.bias != 0u) {
                e += kn[kh + d];
            }
            hv[d] = e;
        }
        prep_head(lid, true, 0u);
        // By pairs (an f16 cache packs two values per word; the host keeps heads even).
        let at = p.start * p.width + kh;
        for (var d = 2u * lid; d < hd; d += 2u * WG) {
            let both = d + 1u < hd;
            let kv = kv_pair(kh, kh, d, both);
            kv_put2(at + d, kv[0], kv[1], both);
        }
        storageBarrier();
    }
    workgroupBarrier();
    attend(id, lid, 0u, h, range);
}

// The scores of `attend`: up to 8 invocations per position where a chunk has few
// positions (score_share), each a share of the q·k dot (every share-th vec4 of
// head_dim, so a position's invocations read consecutive words), summed through
// workgroup memory: a short context's few positions would otherwise leave one
// invocation each to walk all of head_dim, load after load, while the rest wait.
fn score_share(cnt: u32) -> u32 {
    var t = 8u;
    while (t > 1u && cnt * t > WG) {
        t >>= 1u;
    }
    return t;
}

// Invocation t's share (of `share`) of the (scaled) query · the key at cache position
// `pos`, head columns from kvb.
fn part_dot(pos: u32, t: u32, share: u32, kvb: u32) -> f32 {
    let hd = p.head_dim;
    let hd4 = hd & ~3u;
    let kb = pos * p.width + kvb;
    var s4 = vec4<f32>(0.0);
    var d = 4u * t;
    // Two vec4s a step, for loads in flight (head_dim 128 over 8: all of a share at once).
    for (; d + 4u * share < hd4; d += 8u * share) {
        let d2 = d + 4u * share;
        let k0 = vec4<f32>(k_at(kb + d), k_at(kb + d + 1u), k_at(kb + d + 2u), k_at(kb + d + 3u));
        let k1 = vec4<f32>(k_at(kb + d2), k_at(kb + d2 + 1u), k_at(kb + d2 + 2u), k_at(kb + d2 + 3u));
        s4 += k0 * q4(d) + k1 * q4(d2);
    }
    if (d < hd4) {
        s4 += vec4<f32>(k_at(kb + d), k_at(kb + d + 1u), k_at(kb + d + 2u), k_at(kb + d + 3u)) * q4(d);
    }
    var s = s4.x + s4.y + s4.z + s4.w;
    if (t == 0u) {
        for (var e = hd4; e < hd; e++) {
            s += k_at(kb + e) * qs[e];
        }
    }
    return s;
}

// Row r, head h of attention over the positions `range` (first..end), the scaled query
// in qs: into `out`, or with splits > 1 into the scratch slot of workgroup `id`.
fn attend(id: u32, lid: u32, r: u32, h: u32, range: vec2<u32>) {
    let first = range.x;
    let end = range.y;
    let hd = p.head_dim;
    let hd4 = hd & ~3u;
    let qb = r * p.q_cols + h * hd;
    let kvb = (h / (p.heads / p.kv_heads)) * hd;
    let lanes = (hd + 3u) / 4u;
    let slices = WG / lanes;
    let lane = lid % lanes;
    let slice = lid / lanes;

    var m = NEG_BIG;
    var l = 0.0;
    var acc = vec4<f32>(0.0);
    for (var c0 = first; c0 < end; c0 += CHUNK) {
        let cnt = min(CHUNK, end - c0);
        let share = score_share(cnt);
        let per_step = WG / share;
        for (var i0 = 0u; i0 < cnt; i0 += per_step) {
            let i = i0 + lid / share;
            if (i < cnt) {
                red[lid] = part_dot(c0 + i, lid % share, share, kvb);
            }
            workgroupBarrier();
            if (lid < per_step && i0 + lid < cnt) {
                var s = 0.0;
                for (var t = 0u; t < share; t++) {
                    s += red[lid * share + t];
                }
                if (p.softcap > 0.0) {
                    s = p.softcap * tanh_safe(s / p.softcap);
                }
                sc[i0 + lid] = s;
            }
            workgroupBarrier();
        }
        var lmax = NEG_BIG;
        for (var i = lid; i < cnt; i += WG) {
            lmax = max(lmax, sc[i]);
        }
        let m_new = max(m, fold(lid, lmax, true));
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
    l = fold(lid, l, false);
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
// Each split's max and sum are loaded at once (an invocation per split, at most
// MAX_SPLITS ≤ 64: the host's bound) into red, and its weight e^(m_s − M) computed once;
// then each output value's sum over the splits reads its partial results, which do not
// depend on each other: the loops over splits had each made a chain of loads.
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
    if (lid < p.splits) {
        red[lid] = scratch[base + lid * e];
        red[64u + lid] = scratch[base + lid * e + 1u];
    }
    workgroupBarrier();
    var mx = NEG_BIG;
    for (var s = 0u; s < p.splits; s++) {
        mx = max(mx, red[s]);
    }
    workgroupBarrier();
    if (lid < p.splits) {
        red[lid] = exp(red[lid] - mx);
    }
    workgroupBarrier();
    var l = 0.0;
    for (var s = 0u; s < p.splits; s++) {
        l += red[s] * red[64u + s];
    }
    let qb = r * p.q_cols + h * hd;
    for (var d = lid; d < hd; d += 64u) {
        var o = 0.0;
        for (var s = 0u; s < p.splits; s++) {
            o += red[s] * scratch[base + s * e + 2u + d];
        }
        out[qb + d] = o / l;
    }
}

// `attention_tiled`: a batch's attention (prefill), one workgroup per (block of TQ rows,
// head). The positions the block's rows attend to pass through workgroup memory a tile
// at a time, keys then values, each tile read from the cache once for TQ rows (the
// per-row kernel above reads it once per row). A row is 8 invocations: for the scores
// each takes every 8th position of the tile (a full q·k dot, q read from the batch),
// for the weighted sum each takes every 8th vec4 of head_dim. Online softmax per row
// across tiles: each invocation keeps the row's running max (from the 8 invocations'
// maxima, through rowmax) and its share of the sum. With splits > 1 each block's
// positions are shared among `splits` workgroups (a long prompt's last blocks would
// otherwise walk all of it alone), whose partial results attn_combine merges. Needs
// head_dim % 4 == 0 (the host checks, and takes it only where it measured faster than
// the per-row kernel: head_dim ≤ 128). Workgroup memory: sc (as [TQ][32] weights), kvt,
// rowmax and rowf, 13.1 KB.
const TQ: u32 = 32u;
// A tile of tile_positions() cache rows' head slices (keys, then values), head_dim / 4
// vec4s each.
var<workgroup> kvt: array<vec4<f32>, 512>;
// Per invocation: the max of its scores in a tile, at the end its share of the sum.
var<workgroup> rowmax: array<f32, WG>;
// Per row: the sum of its weights.
var<workgroup> rowf: array<f32, TQ>;

// Positions per tile: as many as 2,048 values of head_dim allow, a multiple of 8, at
// most 32 (the scores' row of sc).
fn tile_positions(hd: u32) -> u32 {
    return min(32u, (2048u / hd) & ~7u);
}

// Loads positions t0..t0 + tp (those below `end`) of the head slice at kvb of the k
// (which == 0) or v cache into kvt; zeros elsewhere.
fn load_tile(which: u32, t0: u32, tp: u32, end: u32, kvb: u32, hd4: u32, lid: u32) {
    for (var t = lid; t < tp * hd4; t += WG) {
        let j = t / hd4;
        let at = (t0 + j) * p.width + kvb + 4u * (t % hd4);
        var v = vec4<f32>(0.0);
        if (t0 + j < end) {
            if (which == 0u) {
                v = vec4<f32>(k_at(at), k_at(at + 1u), k_at(at + 2u), k_at(at + 3u));
            } else {
                v = vec4<f32>(v_at(at), v_at(at + 1u), v_at(at + 2u), v_at(at + 3u));
            }
        }
        kvt[t] = v;
    }
}

@compute @workgroup_size(256)
fn attention_tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
    let id = wg_linear(wid, nwg);
    if (id >= ((p.n + TQ - 1u) / TQ) * p.heads * p.splits) {
        return;
    }
    let split = id % p.splits;
    let h = (id / p.splits) % p.heads;
    let r0 = (id / (p.splits * p.heads)) * TQ;
    let hd = p.head_dim;
    let hd4 = hd / 4u;
    let tp = tile_positions(hd);
    let i = lid / 8u;
    let sub = lid % 8u;
    let r = r0 + i;
    let live = r < p.n;
    let pos = p.start + r;
    // This row's positions lo..=pos; the block's first..end (exclusive).
    var lo = 0u;
    if (p.window != 0u && pos + 1u > p.window) {
        lo = pos + 1u - p.window;
    }
    // The block's positions, and this workgroup's share of them (splits > 1: the
    // attention of a long prompt, spread over more workgroups; attn_combine merges).
    var block_first = 0u;
    if (p.window != 0u && p.start + r0 + 1u > p.window) {
        block_first = p.start + r0 + 1u - p.window;
    }
    let block_end = p.start + min(r0 + TQ, p.n);
    let span = (block_end - block_first + p.splits - 1u) / p.splits;
    let first = block_first + split * span;
    let end = min(block_end, first + span);
    let qb = r * p.q_cols + h * hd;
    let kvb = (h / (p.heads / p.kv_heads)) * hd;
    // Running max and sum (the row's first invocation), and this invocation's share
    // of the weighted sum: vec4s sub, sub + 8, .. of head_dim (a0..a7: named, not an
    // array, so they stay in registers).
    var m = NEG_BIG;
    var l = 0.0;
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    var a4 = vec4<f32>(0.0);
    var a5 = vec4<f32>(0.0);
    var a6 = vec4<f32>(0.0);
    var a7 = vec4<f32>(0.0);
    // This invocation's positions within a tile (those past the tile read a real row
    // and are masked).
    let j0 = sub;
    let j1 = min(sub + 8u, tp - 1u);
    let j2 = min(sub + 16u, tp - 1u);
    let j3 = min(sub + 24u, tp - 1u);
    for (var t0 = first; t0 < end; t0 += tp) {
        load_tile(0u, t0, tp, end, kvb, hd4, lid);
        workgroupBarrier();
        var s = vec4<f32>(0.0);
        if (live && tp > 16u) {
            for (var g = 0u; g < hd4; g++) {
                let qv = q[(qb >> 2u) + g];
                s += vec4<f32>(dot(qv, kvt[j0 * hd4 + g]), dot(qv, kvt[j1 * hd4 + g]), dot(qv, kvt[j2 * hd4 + g]), dot(qv, kvt[j3 * hd4 + g]));
            }
        } else if (live) {
            // Tiles of at most 16 positions (head_dim 128): each invocation has two, and
            // the other two dots would only be masked.
            for (var g = 0u; g < hd4; g++) {
                let qv = q[(qb >> 2u) + g];
                s += vec4<f32>(dot(qv, kvt[j0 * hd4 + g]), dot(qv, kvt[j1 * hd4 + g]), 0.0, 0.0);
            }
        }
        // Masked scores (NEG_BIG past the tile or this share, or outside the row's
        // positions), this invocation's max among them, then the row's max from its 8
        // invocations.
        let stop = min(pos + 1u, end);
        let sm = vec4<f32>(score(sub, t0, tp, s.x, live, lo, stop), score(sub + 8u, t0, tp, s.y, live, lo, stop),
                           score(sub + 16u, t0, tp, s.z, live, lo, stop), score(sub + 24u, t0, tp, s.w, live, lo, stop));
        rowmax[lid] = max(max(sm.x, sm.y), max(sm.z, sm.w));
        workgroupBarrier();
        // The values replace the keys while each invocation turns its scores into
        // weights against the row's new running max (every invocation of a row keeps
        // the same max, and its own share of the sum).
        load_tile(1u, t0, tp, end, kvb, hd4, lid);
        var m_new = m;
        for (var c = 0u; c < 8u; c++) {
            m_new = max(m_new, rowmax[i * 8u + c]);
        }
        let corr = exp(m - m_new);
        let e = select(vec4<f32>(0.0), exp(sm - m_new), sm > vec4<f32>(NEG_BIG));
        l = l * corr + e.x + e.y + e.z + e.w;
        m = m_new;
        put_weight(i, sub, tp, e.x);
        put_weight(i, sub + 8u, tp, e.y);
        put_weight(i, sub + 16u, tp, e.z);
        put_weight(i, sub + 24u, tp, e.w);
        workgroupBarrier();
        a0 = weigh(a0, corr, i, sub, tp, hd4);
        a1 = weigh(a1, corr, i, sub + 8u, tp, hd4);
        a2 = weigh(a2, corr, i, sub + 16u, tp, hd4);
        a3 = weigh(a3, corr, i, sub + 24u, tp, hd4);
        a4 = weigh(a4, corr, i, sub + 32u, tp, hd4);
        a5 = weigh(a5, corr, i, sub + 40u, tp, hd4);
        a6 = weigh(a6, corr, i, sub + 48u, tp, hd4);
        a7 = weigh(a7, corr, i, sub + 56u, tp, hd4);
        workgroupBarrier();
    }
    rowmax[lid] = l;
    workgroupBarrier();
    if (sub == 0u) {
        var sum = 0.0;
        for (var c = 0u; c < 8u; c++) {
            sum += rowmax[i * 8u + c];
        }
        rowf[i] = sum;
    }
    workgroupBarrier();
    if (!live) {
        return;
    }
    // One workgroup per block: the row's normalised output. Splits: this share's
    // running max, sum and unnormalised weighted sum, as the per-row kernel's splits
    // leave them for attn_combine.
    let sb = ((r * p.heads + h) * p.splits + split) * (hd + 2u);
    var at = qb;
    var f = select(0.0, 1.0 / rowf[i], rowf[i] > 0.0);
    if (p.splits > 1u) {
        if (sub == 0u) {
            scratch[sb] = m;
            scratch[sb + 1u] = rowf[i];
        }
        at = sb + 2u;
        f = 1.0;
    }
    put_row4(at, sub, hd4, a0 * f);
    put_row4(at, sub + 8u, hd4, a1 * f);
    put_row4(at, sub + 16u, hd4, a2 * f);
    put_row4(at, sub + 24u, hd4, a3 * f);
    put_row4(at, sub + 32u, hd4, a4 * f);
    put_row4(at, sub + 40u, hd4, a5 * f);
    put_row4(at, sub + 48u, hd4, a6 * f);
    put_row4(at, sub + 56u, hd4, a7 * f);
}

// Score of tile position j of a row: scaled, soft-capped, or NEG_BIG (masked) past the
// tile or outside lo..stop (the row's positions within this workgroup's share).
fn score(j: u32, t0: u32, tp: u32, dot_qk: f32, live: bool, lo: u32, stop: u32) -> f32 {
    if (j >= tp || !live || t0 + j < lo || t0 + j >= stop) {
        return NEG_BIG;
    }
    let v = dot_qk * p.scale;
    if (p.softcap > 0.0) {
        return p.softcap * tanh_safe(v / p.softcap);
    }
    return v;
}

// Weight of tile position j of row i (if within the tile), for weigh().
fn put_weight(i: u32, j: u32, tp: u32, e: f32) {
    if (j < tp) {
        sc[i * 32u + j] = e;
    }
}

// vec4 g of row i's weighted sum after this tile: a rescaled by corr, plus the tile's weights
// (sc) times its values (kvt). Unchanged past head_dim.
fn weigh(a: vec4<f32>, corr: f32, i: u32, g: u32, tp: u32, hd4: u32) -> vec4<f32> {
    if (g >= hd4) {
        return a;
    }
    var r = a * corr;
    for (var j = 0u; j < tp; j++) {
        r += sc[i * 32u + j] * kvt[j * hd4 + g];
    }
    return r;
}

// vec4 g (within head_dim) of a row's result at `at`: of the output, or with splits of
// the split scratch (which one is the same for the whole dispatch).
fn put_row4(at: u32, g: u32, hd4: u32, v: vec4<f32>) {
    if (g >= hd4) {
        return;
    }
    let e = at + 4u * g;
    if (p.splits > 1u) {
        scratch[e] = v.x;
        scratch[e + 1u] = v.y;
        scratch[e + 2u] = v.z;
        scratch[e + 3u] = v.w;
    } else {
        out[e] = v.x;
        out[e + 1u] = v.y;
        out[e + 2u] = v.z;
        out[e + 3u] = v.w;
    }
}
