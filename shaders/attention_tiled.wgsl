// Appended to the attention family (shaders/attention.wgsl) where the device has no
// cooperative matrices (attention_coop.wgsl is the twin that runs on them).

// `attention_tiled`: a batch's attention (prefill), one workgroup per (block of TQ rows,
// head). The positions the block's rows attend to pass through workgroup memory a tile
// at a time, keys then values, each tile read from the cache once for TQ rows (the
// per-row kernel of attention.wgsl reads it once per row). A row is 8 invocations: for
// the scores each takes every 8th position of the tile (a full q·k dot, q read from the
// batch), for the weighted sum each takes every 8th vec4 of head_dim. Online softmax per
// row across tiles: each invocation keeps the row's running max (from the 8 invocations'
// maxima, through rowmax) and its share of the sum. With splits > 1 each block's
// positions are shared among `splits` workgroups (a long prompt's last blocks would
// otherwise walk all of it alone), whose partial results attn_combine merges. Needs
// head_dim % 4 == 0 (the host checks, and takes it only where it measured faster than
// the per-row kernel). Workgroup memory: wts, kvt, rowmax and rowf, 14 KB. TQ: rows per
// workgroup (tuning.rs writes it).
//
// Both tiles are padded against bank conflicts. For the scores, the 8 invocations of a
// row read 8 positions' keys at the same offset: at a row stride of head_dim / 4 vec4s
// (a multiple of 32 words at head_dim 128 or 64) all 8 fell on the same four banks, an
// 8-way conflict on every key read. A stride of one vec4 more (KV_PAD) spreads them over
// all 32. Likewise a warp's 4 rows read their weights at one tile position: a row stride
// of 33 words (WTS_STRIDE), not 32.
const KV_PAD: u32 = 1u;
const WTS_STRIDE: u32 = 33u;
// A tile of tile_positions() cache rows' head slices (keys, then values), head_dim / 4
// vec4s each, at a row stride of head_dim / 4 + KV_PAD: at most 32 × 16 + 32 vec4s, as
// tile_positions() keeps positions × head_dim ≤ 2,048 and positions ≤ 32.
var<workgroup> kvt: array<vec4<f32>, 544>;
// The tile's weights exp(score − max): row i's position j at [i * WTS_STRIDE + j].
var<workgroup> wts: array<f32, TQ * WTS_STRIDE>;
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
        let g = t % hd4;
        let at = (t0 + j) * p.width + kvb + 4u * g;
        var v = vec4<f32>(0.0);
        if (t0 + j < end) {
            if (which == 0u) {
                v = k4_at(at);
            } else {
                v = v4_at(at);
            }
        }
        kvt[j * (hd4 + KV_PAD) + g] = v;
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
    // This row's positions lo..row_end(r) (lo..=its own where causal); this workgroup's
    // share of the block's positions first..end (exclusive; splits > 1: the attention
    // of a long prompt, spread over more workgroups; attn_combine merges).
    let lo = row_start(r);
    let positions = split_share(row_start(r0), block_end(r0, TQ), split);
    let first = positions.x;
    let end = positions.y;
    let qb = r * p.q_cols + h * hd;
    let ks = hd4 + KV_PAD;
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
                s += vec4<f32>(dot(qv, kvt[j0 * ks + g]), dot(qv, kvt[j1 * ks + g]), dot(qv, kvt[j2 * ks + g]), dot(qv, kvt[j3 * ks + g]));
            }
        } else if (live) {
            // Tiles of at most 16 positions (head_dim 128): each invocation has two, and
            // the other two dots would only be masked.
            for (var g = 0u; g < hd4; g++) {
                let qv = q[(qb >> 2u) + g];
                s += vec4<f32>(dot(qv, kvt[j0 * ks + g]), dot(qv, kvt[j1 * ks + g]), 0.0, 0.0);
            }
        }
        // Masked scores (NEG_BIG past the tile or this share, or outside the row's
        // positions), this invocation's max among them, then the row's max from its 8
        // invocations.
        let stop = min(row_end(r), end);
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
        // The weighted sum: the accumulators rescaled, then each weight of the tile,
        // read once, times the values of this invocation's vec4s of head_dim.
        a0 *= corr;
        a1 *= corr;
        a2 *= corr;
        a3 *= corr;
        a4 *= corr;
        a5 *= corr;
        a6 *= corr;
        a7 *= corr;
        // Branches on the head's width outside the loop (uniform): inside it, they cost
        // head_dim 128 10% (H200); without them, vec4s past a narrower head cost 64 5%.
        if (hd4 > 16u) {
            for (var j = 0u; j < tp; j++) {
                let w = wts[i * WTS_STRIDE + j];
                let vb = j * ks;
                a0 = weigh(a0, w, vb, sub, hd4);
                a1 = weigh(a1, w, vb, sub + 8u, hd4);
                a2 = weigh(a2, w, vb, sub + 16u, hd4);
                a3 = weigh(a3, w, vb, sub + 24u, hd4);
                if (hd4 > 32u) {
                    a4 = weigh(a4, w, vb, sub + 32u, hd4);
                    a5 = weigh(a5, w, vb, sub + 40u, hd4);
                    a6 = weigh(a6, w, vb, sub + 48u, hd4);
                    a7 = weigh(a7, w, vb, sub + 56u, hd4);
                }
            }
        } else {
            for (var j = 0u; j < tp; j++) {
                let w = wts[i * WTS_STRIDE + j];
                let vb = j * ks;
                a0 = weigh(a0, w, vb, sub, hd4);
                a1 = weigh(a1, w, vb, sub + 8u, hd4);
            }
        }
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
        wts[i * WTS_STRIDE + j] = e;
    }
}

// vec4 g of a row's weighted sum, a, plus weight w times vec4 g of the value tile's row
// at vb. Unchanged past head_dim.
fn weigh(a: vec4<f32>, w: f32, vb: u32, g: u32, hd4: u32) -> vec4<f32> {
    if (g >= hd4) {
        return a;
    }
    return a + w * kvt[vb + g];
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
