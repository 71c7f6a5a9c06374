// Appended to the attention family (shaders/attention.wgsl) where the device has no
// cooperative matrices (attention_coop.wgsl is the twin that runs on them).

// `attention_tiled`: a batch's attention (prefill), one workgroup per (block of TQ rows,
// head). The positions the block's rows attend to pass through workgroup memory a tile
// of TP at a time, keys then values, each tile read from the cache once for TQ rows (the
// per-row kernel of attention.wgsl reads it once per row). An invocation serves two rows
// of the block, i and i + TQ / 2, as one of each row's 8 invocations: for the scores it
// takes positions sub and sub + 8 of the tile (full q·k dots, q read from the batch),
// for the weighted sum every 8th vec4 of head_dim from sub. Each key and value it loads
// serves both rows: per workgroup-memory load, twice the products of one row an
// invocation. Online softmax per row across tiles: each invocation keeps each row's
// running max (from the 8 invocations' maxima, through rowmax) and its share of the sum.
// With splits > 1 each block's positions are shared among `splits` workgroups (a long
// prompt's last blocks would otherwise walk all of it alone), whose partial results
// attn_combine merges. Needs head_dim % 4 == 0 and ≤ 128 (the host checks: 4 vec4s a
// row an invocation). Workgroup memory: kvt, wts, rowmax and rowf, 15.1 KB. TQ: rows per
// workgroup (tuning.rs writes it).
//
// Both tiles are padded against bank conflicts. For the scores, the 8 invocations of a
// row read 8 positions' keys at the same offset: at a row stride of head_dim / 4 vec4s
// (a multiple of 32 words at head_dim 128 or 64) all 8 fell on the same four banks, an
// 8-way conflict on every key read. A stride of one vec4 more (KV_PAD) spreads them over
// all 32. Likewise a warp's 4 rows read their weights at one tile position: an odd row
// stride (WTS_STRIDE) puts them in 4 banks.
const KV_PAD: u32 = 1u;
const TP: u32 = 16u;
const WTS_STRIDE: u32 = TP + 1u;
// Row pairs per workgroup: invocation i / 8 holds rows i / 8 and i / 8 + HALF.
const HALF: u32 = TQ / 2u;
// A tile of TP cache rows' head slices (keys, then values), head_dim / 4 vec4s each, at a
// row stride of head_dim / 4 + KV_PAD.
var<workgroup> kvt: array<vec4<f32>, TP * (32u + KV_PAD)>;
// The tile's weights exp(score − max): row i's position j at [i * WTS_STRIDE + j].
var<workgroup> wts: array<f32, TQ * WTS_STRIDE>;
// Per invocation and row (the first rows, then the second): the max of its scores in a
// tile, at the end its share of the sum.
var<workgroup> rowmax: array<f32, 2u * WG>;
// Per row: the sum of its weights.
var<workgroup> rowf: array<f32, TQ>;

// Loads positions t0..t0 + TP (those below `end`) of the head slice at kvb of the k
// (which == 0) or v cache into kvt; zeros elsewhere.
fn load_tile(which: u32, t0: u32, end: u32, kvb: u32, hd4: u32, lid: u32) {
    for (var t = lid; t < TP * hd4; t += WG) {
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

// One row of an invocation's pair: its running max and sum, and its weighted sum's
// vec4s sub, sub + 8, sub + 16, sub + 24 of head_dim (named, not an array, so they stay
// in registers).
struct Acc {
    m: f32,
    l: f32,
    a0: vec4<f32>,
    a1: vec4<f32>,
    a2: vec4<f32>,
    a3: vec4<f32>,
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
    let r0 = block_row0(id, p.splits * p.heads, TQ);
    let hd = p.head_dim;
    let hd4 = hd / 4u;
    let ks = hd4 + KV_PAD;
    let i = lid / 8u;
    let sub = lid % 8u;
    // The invocation's two rows (past the batch: masked; their positions taken from
    // the last row's so that no row data past the batch is read).
    let ra = r0 + i;
    let rb = r0 + i + HALF;
    let live_a = ra < p.n;
    let live_b = rb < p.n;
    let lo_a = row_start(min(ra, p.n - 1u));
    let lo_b = row_start(min(rb, p.n - 1u));
    let end_a = row_end(min(ra, p.n - 1u));
    let end_b = row_end(min(rb, p.n - 1u));
    // This workgroup's share of the block's positions first..end (exclusive; splits > 1:
    // the attention of a long prompt, spread over more workgroups; attn_combine merges).
    let positions = split_share(row_start(r0), block_end(r0, TQ), split);
    let first = positions.x;
    let end = positions.y;
    let qa = (ra * p.q_cols + h * hd) >> 2u;
    let qb = (rb * p.q_cols + h * hd) >> 2u;
    let kvb = (h / (p.heads / p.kv_heads)) * hd;
    var a = Acc(NEG_BIG, 0.0, vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    var b = a;
    let j0 = sub;
    let j1 = sub + 8u;
    for (var t0 = first; t0 < end; t0 += TP) {
        load_tile(0u, t0, end, kvb, hd4, lid);
        workgroupBarrier();
        // Each key pair loaded once for both rows (a live second row has a live first).
        var sa = vec2<f32>(0.0);
        var sb = vec2<f32>(0.0);
        if (live_b) {
            for (var g = 0u; g < hd4; g++) {
                let k0 = kvt[j0 * ks + g];
                let k1 = kvt[j1 * ks + g];
                let x = q[qa + g];
                let y = q[qb + g];
                sa += vec2<f32>(dot(x, k0), dot(x, k1));
                sb += vec2<f32>(dot(y, k0), dot(y, k1));
            }
        } else if (live_a) {
            for (var g = 0u; g < hd4; g++) {
                let x = q[qa + g];
                sa += vec2<f32>(dot(x, kvt[j0 * ks + g]), dot(x, kvt[j1 * ks + g]));
            }
        }
        // Masked scores (NEG_BIG outside this share or the row's positions), this
        // invocation's max among them, then each row's max from its 8 invocations.
        let stop_a = min(end_a, end);
        let stop_b = min(end_b, end);
        let ma = vec2<f32>(score(j0, t0, sa.x, live_a, lo_a, stop_a), score(j1, t0, sa.y, live_a, lo_a, stop_a));
        let mb = vec2<f32>(score(j0, t0, sb.x, live_b, lo_b, stop_b), score(j1, t0, sb.y, live_b, lo_b, stop_b));
        rowmax[lid] = max(ma.x, ma.y);
        rowmax[WG + lid] = max(mb.x, mb.y);
        workgroupBarrier();
        // The values replace the keys while each invocation turns its scores into
        // weights against each row's new running max.
        load_tile(1u, t0, end, kvb, hd4, lid);
        let ca = new_weights(&a, ma, i, lid, 0u);
        let cb = new_weights(&b, mb, i + HALF, lid, WG);
        workgroupBarrier();
        a.a0 *= ca;
        a.a1 *= ca;
        a.a2 *= ca;
        a.a3 *= ca;
        b.a0 *= cb;
        b.a1 *= cb;
        b.a2 *= cb;
        b.a3 *= cb;
        // Each value loaded once for both rows; the head's width tested outside the
        // loops (uniform), where inside them the tests cost head_dim 128 10% (H200).
        if (hd4 > 16u) {
            for (var j = 0u; j < TP; j++) {
                let wa = wts[i * WTS_STRIDE + j];
                let wb = wts[(i + HALF) * WTS_STRIDE + j];
                let vb = j * ks;
                let v0 = value(vb, sub, hd4);
                let v1 = value(vb, sub + 8u, hd4);
                let v2 = value(vb, sub + 16u, hd4);
                let v3 = value(vb, sub + 24u, hd4);
                a.a0 += wa * v0;
                a.a1 += wa * v1;
                a.a2 += wa * v2;
                a.a3 += wa * v3;
                b.a0 += wb * v0;
                b.a1 += wb * v1;
                b.a2 += wb * v2;
                b.a3 += wb * v3;
            }
        } else {
            for (var j = 0u; j < TP; j++) {
                let wa = wts[i * WTS_STRIDE + j];
                let wb = wts[(i + HALF) * WTS_STRIDE + j];
                let vb = j * ks;
                let v0 = value(vb, sub, hd4);
                let v1 = value(vb, sub + 8u, hd4);
                a.a0 += wa * v0;
                a.a1 += wa * v1;
                b.a0 += wb * v0;
                b.a1 += wb * v1;
            }
        }
        workgroupBarrier();
    }
    rowmax[lid] = a.l;
    rowmax[WG + lid] = b.l;
    workgroupBarrier();
    if (sub == 0u) {
        var sa = 0.0;
        var sb = 0.0;
        for (var c = 0u; c < 8u; c++) {
            sa += rowmax[i * 8u + c];
            sb += rowmax[WG + i * 8u + c];
        }
        rowf[i] = sa;
        rowf[i + HALF] = sb;
    }
    workgroupBarrier();
    if (live_a) {
        finish_row(a, ra, i, h, split, sub, hd4);
    }
    if (live_b) {
        finish_row(b, rb, i + HALF, h, split, sub, hd4);
    }
}

// A row's weights for this tile from its masked scores s (positions sub and sub + 8)
// against its new running max, from its 8 invocations' maxima at rowmax[half + 8 i..]:
// into wts (row i of the block), the running max and sum updated; returns the factor
// that rescales the weighted sum so far.
fn new_weights(acc: ptr<function, Acc>, s: vec2<f32>, i: u32, lid: u32, half: u32) -> f32 {
    var m_new = (*acc).m;
    let first = half + (lid / 8u) * 8u;
    for (var c = 0u; c < 8u; c++) {
        m_new = max(m_new, rowmax[first + c]);
    }
    let corr = exp((*acc).m - m_new);
    let e = select(vec2<f32>(0.0), exp(s - m_new), s > vec2<f32>(NEG_BIG));
    (*acc).l = (*acc).l * corr + e.x + e.y;
    (*acc).m = m_new;
    let sub = lid % 8u;
    wts[i * WTS_STRIDE + sub] = e.x;
    wts[i * WTS_STRIDE + sub + 8u] = e.y;
    return corr;
}

// vec4 g of the value tile's row at vb; zero past head_dim.
fn value(vb: u32, g: u32, hd4: u32) -> vec4<f32> {
    if (g >= hd4) {
        return vec4<f32>(0.0);
    }
    return kvt[vb + g];
}

// Row r (row i of the block) of head h: its normalised output. Splits: this share's
// running max, sum and unnormalised weighted sum, as the per-row kernel's splits leave
// them for attn_combine.
fn finish_row(acc: Acc, r: u32, i: u32, h: u32, split: u32, sub: u32, hd4: u32) {
    let hd = p.head_dim;
    let sb = ((r * p.heads + h) * p.splits + split) * (SPLIT_HEAD + hd);
    var at = r * p.q_cols + h * hd;
    var f = select(0.0, 1.0 / rowf[i], rowf[i] > 0.0);
    if (p.splits > 1u) {
        if (sub == 0u) {
            scratch[sb] = acc.m;
            scratch[sb + 1u] = rowf[i];
        }
        at = sb + SPLIT_HEAD;
        f = 1.0;
    }
    put_row4(at, sub, hd4, acc.a0 * f);
    put_row4(at, sub + 8u, hd4, acc.a1 * f);
    put_row4(at, sub + 16u, hd4, acc.a2 * f);
    put_row4(at, sub + 24u, hd4, acc.a3 * f);
}

// Score of tile position j of a row: scaled, soft-capped, or NEG_BIG (masked) outside
// lo..stop (the row's positions within this workgroup's share).
fn score(j: u32, t0: u32, dot_qk: f32, live: bool, lo: u32, stop: u32) -> f32 {
    if (!live || t0 + j < lo || t0 + j >= stop) {
        return NEG_BIG;
    }
    let v = dot_qk * p.scale;
    if (p.softcap > 0.0) {
        return p.softcap * tanh_safe(v / p.softcap);
    }
    return v;
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
