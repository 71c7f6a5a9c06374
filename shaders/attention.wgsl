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
// scratch: [n, heads, splits, SPLIT_HEAD + head_dim] per split of a row's positions: its
// running max, its sum, two unused values (so that the rest starts on a vec4, as the o
// projection's matvec reads it where it takes the merge in: matvec_int.wgsl's
// INPUT_MERGED), then its unnormalised weighted sum of V (attention when splits > 1,
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
//   1. scores (`scores`): SHARE invocations per position, each a share of its q·k dot
//      (q scaled, in workgroup memory, read as a broadcast), four positions each per
//      round of SCORE_ROUND;
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
    // Counting by one to a constant: a loop a browser's compiler sees bounded.
    for (var j = 1u; j < WG / 16u; j++) {
        t = select(t + red[16u * j], max(t, red[16u * j]), take_max);
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

// The first row of the block of `rows` rows that workgroup `id` of a batch kernel takes,
// `per_block` workgroups a block (heads × splits): the last block first. Under a causal
// mask a block's positions grow with its rows, and the device starts workgroups roughly
// in order of their index: the longest then start first and the short ones fill in
// behind them, instead of the longest running last and ending the dispatch alone. A
// workgroup past the last block (a folded grid) gets the first block's row (it does no
// work).
fn block_row0(id: u32, per_block: u32, rows: u32) -> u32 {
    let blocks = (p.n + rows - 1u) / rows;
    let b = min(id / per_block, blocks - 1u);
    return (blocks - 1u - b) * rows;
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

// Where split `split` of row r, head h keeps its record in the split scratch (its max,
// its sum, then its weighted sum from SPLIT_HEAD on), for attn_combine.
fn split_record(r: u32, h: u32, split: u32) -> u32 {
    return ((r * p.heads + h) * p.splits + split) * (SPLIT_HEAD + p.head_dim);
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

// The scores of `attend`: SHARE invocations per position, each a share of the q·k dot
// (every SHARE-th vec4 of head_dim, so a position's invocations read consecutive words:
// one cache line per position and load, where one invocation per position made every
// load of a warp touch as many lines as it has invocations), and each invocation four
// positions a round (`dots4`: their loads all in flight at once). The shares meet in
// `part` (a vec4 per invocation: its four positions), summed once per round of
// SCORE_ROUND positions: one load latency and two barriers a round, where walking
// head_dim load after load had cost a latency per step.
const SHARE: u32 = 8u;
const SCORE_ROUND: u32 = 4u * (WG / SHARE);

// Whether head_dim is a multiple of 4: then every head's slice of a cache row starts at
// a multiple of 4 and the kernels read four values a load (k4_at, v4_at). They branch
// on it outside their loops, so no branch stands between a loop's loads and they can
// all be in flight together.
fn whole_vec4s() -> bool {
    return (p.head_dim & 3u) == 0u;
}

// Invocation t's share of the (scaled) query · the keys at cache positions pos (four of
// them), head columns from kvb: every SHARE-th vec4 of head_dim from the t-th, two a
// step (for head_dim 128, all of a share's loads at once).
fn dots4(pos: vec4<u32>, t: u32, kvb: u32) -> vec4<f32> {
    let hd = p.head_dim;
    let hd4 = hd & ~3u;
    let kb = pos * p.width + vec4<u32>(kvb);
    var s = vec4<f32>(0.0);
    if (whole_vec4s()) {
        var d = 4u * t;
        for (; d + 4u * SHARE < hd; d += 8u * SHARE) { // bounded in browsers
            let e = d + 4u * SHARE;
            s += key_dots(kb + vec4<u32>(d), q4(d)) + key_dots(kb + vec4<u32>(e), q4(e));
        }
        if (d < hd) {
            s += key_dots(kb + vec4<u32>(d), q4(d));
        }
        return s;
    }
    // Rows not on vec4 boundaries: value by value, and the tail past the last whole
    // vec4 by t == 0.
    for (var d = 4u * t; d < hd4; d += 4u * SHARE) { // bounded in browsers
        let qv = q4(d);
        s += vec4<f32>(dot(k4(kb.x + d), qv), dot(k4(kb.y + d), qv), dot(k4(kb.z + d), qv), dot(k4(kb.w + d), qv));
    }
    if (t == 0u) {
        for (var e = hd4; e < hd; e++) {
            s += vec4<f32>(k_at(kb.x + e), k_at(kb.y + e), k_at(kb.z + e), k_at(kb.w + e)) * qs[e];
        }
    }
    return s;
}

// qv · the four values of K from each of at's four elements (multiples of 4): one load each.
fn key_dots(at: vec4<u32>, qv: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(dot(k4_at(at.x), qv), dot(k4_at(at.y), qv), dot(k4_at(at.z), qv), dot(k4_at(at.w), qv));
}

// Cache values at..at+3 of K, one by one.
fn k4(at: u32) -> vec4<f32> {
    return vec4<f32>(k_at(at), k_at(at + 1u), k_at(at + 2u), k_at(at + 3u));
}

// The scores of positions c0..c0 + cnt into sc[0..cnt] (soft-capped where asked), the
// scaled query in qs. Called in uniform control flow.
fn scores(lid: u32, c0: u32, cnt: u32, kvb: u32) {
    let t = lid % SHARE;
    let g = lid / SHARE;
    let per = WG / SHARE;
    for (var r0 = 0u; r0 < cnt; r0 += SCORE_ROUND) { // bounded in browsers
        // Positions past cnt read the round's last one again (no branch around loads).
        let i = min(vec4<u32>(r0 + g) + vec4<u32>(0u, per, 2u * per, 3u * per), vec4<u32>(cnt - 1u));
        // Share-major, so the sums below read consecutive vec4s (invocation-major, each
        // summing invocation's reads fell in one memory bank).
        part[t * per + g] = dots4(vec4<u32>(c0) + i, t, kvb);
        workgroupBarrier();
        let j = r0 + lid;
        if (lid < SCORE_ROUND && j < cnt) {
            let gi = lid % per;
            let k = lid / per;
            var s = 0.0;
            for (var u = 0u; u < SHARE; u++) {
                s += part[u * per + gi][k];
            }
            if (p.softcap > 0.0) {
                s = p.softcap * tanh_safe(s / p.softcap);
            }
            sc[j] = s;
        }
        workgroupBarrier();
    }
}

// Row r, head h of attention over the positions `range` (first..end), the scaled query
// in qs: into `out`, or with splits > 1 into the scratch slot of workgroup `id`.
fn attend(id: u32, lid: u32, r: u32, h: u32, range: vec2<u32>) {
    let first = range.x;
    let end = range.y;
    let hd = p.head_dim;
    let qb = r * p.q_cols + h * hd;
    let kvb = (h / (p.heads / p.kv_heads)) * hd;
    let lanes = (hd + 3u) / 4u;
    let slices = WG / lanes;
    let lane = lid % lanes;
    let slice = lid / lanes;

    var m = NEG_BIG;
    var l = 0.0;
    var acc = vec4<f32>(0.0);
    for (var c0 = first; c0 < end; c0 += CHUNK) { // bounded in browsers
        let cnt = min(CHUNK, end - c0);
        scores(lid, c0, cnt, kvb);
        var lmax = NEG_BIG;
        for (var i = lid; i < cnt; i += WG) { // bounded in browsers
            lmax = max(lmax, sc[i]);
        }
        let m_new = max(m, fold(lid, lmax, true));
        // Each invocation keeps its own share of the sum (all scaled by the common
        // running max); one reduction at the end.
        let corr = exp(m - m_new);
        l *= corr;
        for (var i = lid; i < cnt; i += WG) { // bounded in browsers
            let e = exp(sc[i] - m_new);
            sc[i] = e;
            l += e;
        }
        workgroupBarrier();
        m = m_new;
        acc *= corr;
        if (slice < slices) {
            let d = 4u * lane;
            let at = c0 * p.width + kvb + d;
            // Four positions per step, for loads in flight.
            var i = slice;
            if (whole_vec4s()) {
                for (; i + 3u * slices < cnt; i += 4u * slices) { // bounded in browsers
                    let a0 = v4_at(at + i * p.width);
                    let a1 = v4_at(at + (i + slices) * p.width);
                    let a2 = v4_at(at + (i + 2u * slices) * p.width);
                    let a3 = v4_at(at + (i + 3u * slices) * p.width);
                    acc += sc[i] * a0 + sc[i + slices] * a1 + sc[i + 2u * slices] * a2 + sc[i + 3u * slices] * a3;
                }
                for (; i < cnt; i += slices) { // bounded in browsers
                    acc += sc[i] * v4_at(at + i * p.width);
                }
            } else {
                for (; i + 3u * slices < cnt; i += 4u * slices) { // bounded in browsers
                    let a0 = v4(at + i * p.width, d, hd);
                    let a1 = v4(at + (i + slices) * p.width, d, hd);
                    let a2 = v4(at + (i + 2u * slices) * p.width, d, hd);
                    let a3 = v4(at + (i + 3u * slices) * p.width, d, hd);
                    acc += sc[i] * a0 + sc[i + slices] * a1 + sc[i + 2u * slices] * a2 + sc[i + 3u * slices] * a3;
                }
                for (; i < cnt; i += slices) { // bounded in browsers
                    acc += sc[i] * v4(at + i * p.width, d, hd);
                }
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
            let sb = id * (SPLIT_HEAD + hd);
            if (lid == 0u) {
                scratch[sb] = m;
                scratch[sb + 1u] = l;
            }
            for (var c = 0u; c < 4u; c++) {
                if (d + c < hd) {
                    scratch[sb + SPLIT_HEAD + d + c] = o[c];
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
    let e = SPLIT_HEAD + hd;
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
            o += red[s] * scratch[base + s * e + SPLIT_HEAD + d];
        }
        out[qb + d] = o / l;
    }
}
