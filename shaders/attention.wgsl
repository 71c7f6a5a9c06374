// Attention over the KV cache (f32), in two entry points recorded back to back:
//   kv_store   copies the batch's k and v rows into the cache at start..start+n
//   attention  causal grouped-query attention of each (row, head), optionally windowed:
//              row r (position start + r) attends to positions lo..=start+r (with
//              non_causal, encoders: to every position 0..start+n, `row_end`; in a
//              packed batch of several sequences, `packed`, only to its own sequence's
//              rows, `row_start`..`row_end`, through `spans`); with
//              splits > 1 (decode over a long context) each (row, head) is spread over
//              `splits` workgroups, each taking a contiguous share of the positions
//   attention_rope  decode (one row): `attention` with the q/k preparation and the KV
//              store of qk_rope (rope.wgsl) taken in, one dispatch fewer per layer
//   attn_combine  merges the splits' partial results (splits > 1 only)
//   attention_tiled  a batch's (prefill's) attention, appended from attention_tiled.wgsl
//              (f32) or attention_coop.wgsl (cooperative matrices) by shaders.rs
// `attention` walks the positions in chunks of CHUNK with an online softmax (running
// max and sum), so any context length fits in workgroup memory.
// Params: AttnParams.

// Params: n (rows), start (first position), width (kv_heads × head_dim: cache row),
// q_cols (heads × head_dim: row stride of q and out), heads, kv_heads, head_dim,
// window (0: none), scale, k_stride / v_stride (row strides of the k and v batches),
// splits (workgroups per (row, head)), softcap (> 0: scores become
// softcap * tanh(score / softcap) before the softmax, Gemma 2), non_causal (1: every
// row attends to the whole batch's positions), packed (1: the batch packs several
// sequences, `spans`); attention_rope also half, neox, norm, eps, bias (as qk_rope's).
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
@group(0) @binding(12) var<uniform> table: array<vec4<f32>, ROW_TABLE_VEC4S>;
@group(0) @binding(13) var<storage, read> vbias: array<f32>;
// spans: [n, 2] each batch row's sequence's rows, first and end (packed batches: one
// small buffer written by begin_packed_batch, read by attention and attention_tiled).
@group(0) @binding(14) var<storage, read> spans: array<u32>;

@compute @workgroup_size(ITEMS_WG)
fn kv_store(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    // One invocation per pair of a row's values (an f16 cache packs them in one word).
    let pairs = (p.width + 1u) / 2u;
    let id = wg_linear(wid, nwg) * ITEMS_WG + lid;
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
// MAX_HD: the largest head_dim (tuning.rs writes it; the host checks it).
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

// The first position a row at position `pos` attends to: its window's start, or 0.
fn window_start(pos: u32) -> u32 {
    if (p.window != 0u && pos + 1u > p.window) {
        return pos + 1u - p.window;
    }
    return 0u;
}

// Row r's sequence's batch rows, first and end (packed batches; r clamped to the batch,
// as the batch kernels ask for rows past it).
fn span(r: u32) -> vec2<u32> {
    let at = 2u * min(r, p.n - 1u);
    return vec2<u32>(spans[at], spans[at + 1u]);
}

// The first position row r attends to: its window's start, or 0; in a packed batch not
// before its sequence's first row.
fn row_start(r: u32) -> u32 {
    let lo = window_start(p.start + r);
    if (p.packed != 0u) {
        return max(lo, p.start + span(r).x);
    }
    return lo;
}

// The end (exclusive) of the positions row r attends to: its own position's next
// (causal), or with non_causal (encoders) the batch's end, every row seeing every
// position 0..start + n (the host refuses a window there), or in a packed batch its
// sequence's end. Both ends never decrease from row to row, so a block of rows
// attends to row_start(first)..row_end(last) and each row masks the rest.
fn row_end(r: u32) -> u32 {
    if (p.non_causal != 0u) {
        if (p.packed != 0u) {
            return p.start + span(r).y;
        }
        return p.start + p.n;
    }
    return p.start + r + 1u;
}

// The end (exclusive) of the positions a block of `rows` rows from r0 attends to (the
// batch kernels): its last row's.
fn block_end(r0: u32, rows: u32) -> u32 {
    return row_end(min(r0 + rows, p.n) - 1u);
}

// The split-th of p.splits shares of positions lo..end (exclusive): first..end of the
// share (may be empty). The batch kernels share a block's positions this way too.
fn split_share(lo: u32, end: u32, split: u32) -> vec2<u32> {
    let span = (end - lo + p.splits - 1u) / p.splits;
    let first = lo + split * span;
    return vec2<u32>(first, min(end, first + span));
}

// Row r's positions this workgroup takes (the split-th share): first..end (exclusive;
// may be empty).
fn share(r: u32, split: u32) -> vec2<u32> {
    return split_share(row_start(r), row_end(r), split);
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
    // One row: its positions end at its own, causal or not (and it never reads spans,
    // which its layout does not bind).
    let range = split_share(window_start(p.start), p.start + 1u, id % p.splits);
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
// MAX_SPLITS ≤ COMBINE_WG: the host's bound) into red, and its weight e^(m_s − M) computed once;
// then each output value's sum over the splits reads its partial results, which do not
// depend on each other: the loops over splits had each made a chain of loads.
@compute @workgroup_size(COMBINE_WG)
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
        red[COMBINE_WG + lid] = scratch[base + lid * e + 1u];
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
        l += red[s] * red[COMBINE_WG + s];
    }
    let qb = r * p.q_cols + h * hd;
    for (var d = lid; d < hd; d += COMBINE_WG) {
        var o = 0.0;
        for (var s = 0u; s < p.splits; s++) {
            o += red[s] * scratch[base + s * e + 2u + d];
        }
        out[qb + d] = o / l;
    }
}
