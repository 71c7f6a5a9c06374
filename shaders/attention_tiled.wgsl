// Appended to the attention family (shaders/attention.wgsl) where the device has no
// cooperative matrices (attention_coop.wgsl is the twin that runs on them).

// `attention_tiled`: a batch's attention (prefill), one workgroup per (block of TQ rows,
// head). The positions the block's rows attend to pass through workgroup memory a tile
// of TP at a time, keys then values, each tile read from the cache once for TQ rows (the
// per-row kernel of attention.wgsl reads it once per row). Each invocation has two jobs:
//   - scores: two rows of the block, i and i + TQ / 2, as one of each row's 8
//     invocations, positions sub and sub + 8 of the tile (full q·k dots, q read from the
//     batch); each key it loads serves both rows;
//   - the weighted sum: four consecutive rows (a row quad, lid / 16) × vec4s pd and
//     pd + 16 of head_dim (pd = lid % 16), so that per tile position it loads the quad's
//     four weights as one vec4 and two vec4s of the value for 32 products (the rows-by-
//     halves layout before this loaded two weights and four value vec4s for as many).
// Online softmax per row across tiles: each score invocation keeps its rows' running
// max (from the 8 invocations' maxima, through rowmax) and its share of the sum; the
// factor that rescales a row's weighted sum reaches the row quad's invocations through
// `corr`. With splits > 1 each block's positions are shared among `splits` workgroups
// (a long prompt's last blocks would otherwise walk all of it alone), whose partial
// results attn_combine merges. Needs head_dim % 4 == 0 and ≤ 128 (the host checks: two
// vec4s a row an invocation). Workgroup memory: kvt, wts, corr, rowmax and rowf, 15.4 KB.
// TQ: rows per workgroup (tuning.rs writes it).
//
// The tiles are padded against bank conflicts. For the scores, the 8 invocations of a
// row read 8 positions' keys at the same offset: at a row stride of head_dim / 4 vec4s
// (a multiple of 32 words at head_dim 128 or 64) all 8 fell on the same four banks, an
// 8-way conflict on every key read. A stride of one vec4 more (KV_PAD) spreads them over
// all 32. Likewise a warp's score invocations write weights of 8 positions × 4 rows: a
// position stride of QUADS + 1 vec4s (WTS_STRIDE) puts them in 32 banks.
const KV_PAD: u32 = 1u;
const TP: u32 = 16u;
// Row pairs per workgroup: invocation i / 8 holds rows i / 8 and i / 8 + HALF.
const HALF: u32 = TQ / 2u;
// Row quads per workgroup: invocation i / 16 sums rows 4 (i / 16) ..+3.
const QUADS: u32 = TQ / 4u;
const WTS_STRIDE: u32 = QUADS + 1u;
// A tile of TP cache rows' head slices (keys, then values), head_dim / 4 vec4s each, at a
// row stride of head_dim / 4 + KV_PAD.
var<workgroup> kvt: array<vec4<f32>, TP * (32u + KV_PAD)>;
// The tile's weights exp(score − max): position j of rows 4q..4q+3 at [j * WTS_STRIDE + q].
var<workgroup> wts: array<vec4<f32>, TP * WTS_STRIDE>;
// Per row quad: this tile's factors that rescale its rows' weighted sums so far.
var<workgroup> corr: array<vec4<f32>, QUADS>;
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

// One score row of an invocation's pair: its running max and its share of the sum.
struct RowState {
    m: f32,
    l: f32,
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
    // The invocation's two score rows (past the batch: masked; their positions taken
    // from the last row's so that no row data past the batch is read).
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
    // The invocation's row quad and vec4s of head_dim in the weighted sum: oc_e holds
    // row 4 pq + c, vec4 pd + 16 e (named, not an array, so they stay in registers).
    let pq = lid / 16u;
    let pd = lid % 16u;
    var o0_0 = vec4<f32>(0.0);
    var o0_1 = vec4<f32>(0.0);
    var o1_0 = vec4<f32>(0.0);
    var o1_1 = vec4<f32>(0.0);
    var o2_0 = vec4<f32>(0.0);
    var o2_1 = vec4<f32>(0.0);
    var o3_0 = vec4<f32>(0.0);
    var o3_1 = vec4<f32>(0.0);
    var a = RowState(NEG_BIG, 0.0);
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
        new_weights(&a, ma, i, lid, 0u);
        new_weights(&b, mb, i + HALF, lid, WG);
        workgroupBarrier();
        let c = corr[pq];
        o0_0 *= c.x;
        o0_1 *= c.x;
        o1_0 *= c.y;
        o1_1 *= c.y;
        o2_0 *= c.z;
        o2_1 *= c.z;
        o3_0 *= c.w;
        o3_1 *= c.w;
        // Each value vec4 loaded once for the quad's four rows; the head's width tested
        // outside the loops (uniform). Past head_dim an invocation sums what kvt holds
        // there (finite: a tile's or zeros) into sums never stored, rather than testing
        // each load.
        if (hd4 > 16u) {
            for (var j = 0u; j < TP; j++) {
                let w = wts[j * WTS_STRIDE + pq];
                let vb = j * ks + pd;
                let v0 = kvt[vb];
                let v1 = kvt[vb + 16u];
                o0_0 += w.x * v0;
                o0_1 += w.x * v1;
                o1_0 += w.y * v0;
                o1_1 += w.y * v1;
                o2_0 += w.z * v0;
                o2_1 += w.z * v1;
                o3_0 += w.w * v0;
                o3_1 += w.w * v1;
            }
        } else {
            for (var j = 0u; j < TP; j++) {
                let w = wts[j * WTS_STRIDE + pq];
                let v0 = kvt[j * ks + pd];
                o0_0 += w.x * v0;
                o1_0 += w.y * v0;
                o2_0 += w.z * v0;
                o3_0 += w.w * v0;
            }
        }
        workgroupBarrier();
    }
    rowmax[lid] = a.l;
    rowmax[WG + lid] = b.l;
    workgroupBarrier();
    if (sub == 0u) {
        var la = 0.0;
        var lb = 0.0;
        for (var c = 0u; c < 8u; c++) {
            la += rowmax[i * 8u + c];
            lb += rowmax[WG + i * 8u + c];
        }
        rowf[i] = la;
        rowf[i + HALF] = lb;
        // Splits: each row's running max and sum beside its share's weighted sum, as the
        // per-row kernel's splits leave them for attn_combine.
        if (p.splits > 1u) {
            if (live_a) {
                put_split_head(ra, h, split, a.m, la);
            }
            if (live_b) {
                put_split_head(rb, h, split, b.m, lb);
            }
        }
    }
    workgroupBarrier();
    let rq = r0 + 4u * pq;
    finish_row(o0_0, o0_1, rq, 4u * pq, h, split, pd, hd4);
    finish_row(o1_0, o1_1, rq + 1u, 4u * pq + 1u, h, split, pd, hd4);
    finish_row(o2_0, o2_1, rq + 2u, 4u * pq + 2u, h, split, pd, hd4);
    finish_row(o3_0, o3_1, rq + 3u, 4u * pq + 3u, h, split, pd, hd4);
}

// A row's weights for this tile from its masked scores s (positions sub and sub + 8)
// against its new running max, from its 8 invocations' maxima at rowmax[half + 8 i..]:
// into wts (row i of the block), and the factor that rescales its weighted sum so far
// into corr; the running max and sum updated.
fn new_weights(st: ptr<function, RowState>, s: vec2<f32>, i: u32, lid: u32, half: u32) {
    var m_new = (*st).m;
    let first = half + (lid / 8u) * 8u;
    for (var c = 0u; c < 8u; c++) {
        m_new = max(m_new, rowmax[first + c]);
    }
    let f = exp((*st).m - m_new);
    let e = select(vec2<f32>(0.0), exp(s - m_new), s > vec2<f32>(NEG_BIG));
    (*st).l = (*st).l * f + e.x + e.y;
    (*st).m = m_new;
    let sub = lid % 8u;
    let quad = i / 4u;
    let row = i % 4u;
    wts[sub * WTS_STRIDE + quad][row] = e.x;
    wts[(sub + 8u) * WTS_STRIDE + quad][row] = e.y;
    if (sub == 0u) {
        corr[quad][row] = f;
    }
}

// The running max m and sum l of row r's share of positions (splits > 1), ahead of its
// weighted sum in the split scratch.
fn put_split_head(r: u32, h: u32, split: u32, m: f32, l: f32) {
    let sb = split_record(r, h, split);
    scratch[sb] = m;
    scratch[sb + 1u] = l;
}

// Row r (row i of the block) of head h, vec4s pd and pd + 16 of head_dim (v0, v1): its
// normalised output, or with splits its unnormalised weighted sum in the split scratch.
fn finish_row(v0: vec4<f32>, v1: vec4<f32>, r: u32, i: u32, h: u32, split: u32, pd: u32, hd4: u32) {
    if (r >= p.n) {
        return;
    }
    let hd = p.head_dim;
    var at = r * p.q_cols + h * hd;
    var f = select(0.0, 1.0 / rowf[i], rowf[i] > 0.0);
    if (p.splits > 1u) {
        at = split_record(r, h, split) + SPLIT_HEAD;
        f = 1.0;
    }
    put_row4(at, pd, hd4, v0 * f);
    put_row4(at, pd + 16u, hd4, v1 * f);
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
