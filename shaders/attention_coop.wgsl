// Appended to the attention family (shaders/attention.wgsl) instead of
// attention_tiled.wgsl where the device has cooperative matrices (tensor cores: wgpu's
// experimental `wgpu_cooperative_matrix`, 16 × 16 × 16 with f16 inputs and f32 sums,
// subgroups of 32; native only, see ShaderFeatures::coop_matrix). shaders.rs prepends
// the `enable`s.
//
// `attention_tiled` on cooperative matrices: a batch's (prefill's) causal grouped-query
// attention (or, with non_causal, an encoder's over the whole batch), one workgroup of
// sixteen subgroups per (block of rows, head[, split]). The block's positions pass
// through workgroup memory a tile at a time as f16 (keys, then values); the q·k
// scores and the weights × V products are cooperative-matrix multiplies, the softmax
// is per invocation (several per row, each taking every few positions of a tile).
// Each 16 rows of the block belong to a group of subgroups (partners) that share their
// work, so that a subgroup holds at most eight query pieces and two 16 × 16 sums of V:
//   head_dim ≤ 128: blocks of 64 rows, tiles of 64 positions, four partners per 16 rows.
//     For the scores each takes 16 of the tile's positions over all of head_dim; for
//     the weighted sum, a quarter of head_dim over all the positions.
//   129..256 (Gemma): blocks of 32 rows, tiles of 32, eight partners per 16 rows. For
//     the scores each takes 16 positions over a quarter of head_dim (the four partial
//     q·k scores are added when read); for the weighted sum, an eighth of head_dim.
// The kernel is bound by latency (staging, the softmax and the multiplies wait on each
// other), so each subgroup's share of a tile is kept short. A workgroup of 512
// invocations cannot take more than 128 registers each, and this form needs 125
// (examples/pipeline_stats.rs): sixteen subgroups a multiprocessor on an H200. The
// first form (four subgroups a workgroup, each holding its rows' whole sums of V) took
// 207, two workgroups of four; halving the work a subgroup holds (eight a workgroup,
// 164 registers, one workgroup: the same eight subgroups a multiprocessor) made it 1.44×
// faster, and this form 1.49×, over a 4,096-token prefill's chunks from 1,024 on an
// H200 (op_timing, one layer's call repeated, says 1.45× and 1.65× at a chunk starting
// at 3,584; bench/results/attention-partners-h200.md).
// One pass over the positions with an online softmax whose reference max is kept
// lazily: the weighted sum of V lives on the matrices, which cannot be scaled row by
// row, so a row keeps its reference max m until a tile's scores pass it by more than
// RESCALE_MARGIN; the weights exp(score − m) are then at most e^8 (f16 holds that with
// its usual 2^-11), and only when some row's m rises do the subgroups round-trip their
// sums through workgroup memory to rescale them (rare after a row's first tiles). Until
// 2026-11 this kernel took two passes (the first for each row's max and sum, the second
// recomputing the scores): staging the keys twice and multiplying q·k twice
// (bench/results/coop-staging-h200.md has the comparison).
//
// Precision: the queries (scaled), keys and values are rounded to f16 (relative 2^-11
// each, as an f16 KV cache rounds them), products are exact and sums f32. Head sizes up
// to 256 that are multiples of 4 (the host checks); they are padded with zeros to a
// multiple of 64 (so that a quarter is whole 16-value pieces; wide ones to 256). With
// splits > 1 each block's positions are shared among `splits` workgroups, whose partial
// results attn_combine merges (as attention_tiled.wgsl's).
// Workgroup memory: 47,624 bytes (tuning::COOP_WORKGROUP_STORAGE).

// kvh: the block's queries (once, on their way to the matrices), then each tile's keys,
// then its values, as [row or position][head_dim] (64 rows of 136 halves or 32 of 264:
// head_dim's largest padded size plus 8, so that the rows of a 16 × 16 load start in
// different banks, a multiple of the 16 bytes the matrix loads need). Held as vec4s of
// f16 that the matrix loads read as f16s (indices and strides in vec4s: the halves' / 4),
// so that 8 staged values are two stores, not eight (H200, Qwen2.5-1.5B's heads: 0.6%
// faster at every chunk start, bench/results/coop-staging-h200.md; u32 elements would
// not compile on NVIDIA). ss: the scores as [partial (wide heads: one per quarter of
// head_dim)][row][position]; when sums of V are rescaled and at the end, one of each
// subgroup's 16 × 16 sums at a time as [subgroup][16 rows][OLD]. ph: the weights as [row][position]. mlx:
// each invocation's tile max, then its share of the sum; rowml: each row's (reference
// max, rescale factor) during the pass, (max, sum) at the end.
const OLD: u32 = 16u; // stride of a row of one sum in ss (f32s: 64 bytes)
var<workgroup> kvh: array<vec4<f16>, 2176>;
var<workgroup> ss: array<f32, 4608>;
var<workgroup> ph: array<f16, 4608>;
var<workgroup> mlx: array<f32, COOP_ATTN_WG>;
var<workgroup> rowml: array<vec2<f32>, 64>;
// Whether some row's reference max rose in this tile (set by its invocations), and the
// same read back uniformly (workgroupUniformLoad takes no atomics).
var<workgroup> rescale_flag: atomic<u32>;
var<workgroup> rescale_now: u32;

// How far a tile's scores may pass a row's reference max before the row's sums are
// rescaled (a weight exp(score − max) is then at most e^8 ≈ 2981: f16 holds it with its
// usual 2^-11).
const RESCALE_MARGIN: f32 = 8.0;

// The block geometry for a (padded) head size: whether it is wide (> 128), the rows per
// workgroup (tuning.rs coop_attention_rows, which writes these sizes), the positions per
// tile, the stride of kvh's rows (halves), of the scores' rows (f32s: the tile plus 4)
// and of the weights' rows (halves: the tile plus 8).
struct Geometry {
    wide: bool,
    rows: u32,
    tile: u32,
    kld: u32,
    sld: u32,
    pld: u32,
    // Subgroups per 16 rows, and the partial scores each score is the sum of (the
    // parts head_dim is cut into for them).
    parts: u32,
    partials: u32,
}

fn geometry(hdp: u32) -> Geometry {
    let wide = hdp > COOP_ATTN_NARROW_HD;
    let t = select(COOP_ATTN_ROWS, COOP_ATTN_ROWS_WIDE, wide);
    let parts = COOP_ATTN_WG / 2u / t;
    return Geometry(wide, t, t, select(136u, 264u, wide), t + 4u, t + 8u, parts, parts * 16u / t);
}

// Eight values (two vec4s of head_dim from `d`) of query row r (source 0, scaled) or
// of the key (1) or value (2) cache row at position r; zero past head_dim.
fn coop_load8(source: u32, r: u32, h: u32, d: u32, kvb: u32) -> mat2x4<f32> {
    var v = mat2x4<f32>();
    for (var c = 0u; c < 2u; c++) {
        let dc = d + 4u * c;
        if (dc >= p.head_dim) {
            break;
        }
        if (source == 0u) {
            v[c] = q[(r * p.q_cols + h * p.head_dim + dc) / 4u] * p.scale;
        } else {
            let at = r * p.width + kvb + dc;
            if (source == 1u) {
                v[c] = k4_at(at);
            } else {
                v[c] = v4_at(at);
            }
        }
    }
    return v;
}

// Stages `rows` rows into kvh as f16, the first padded head size (hdp) values of
// each: rows base.. of source 0 (queries), 1 (keys) or 2 (values), zero from row `end`
// on. Eight values per invocation and step, as two vec4 stores.
fn coop_stage(source: u32, base: u32, end: u32, rows: u32, h: u32, kvb: u32, hdp: u32, kld: u32, lid: u32) {
    let per = hdp / 8u;
    let big = vec4<f32>(65504.0);
    for (var t = lid; t < rows * per; t += COOP_ATTN_WG) {
        let j = t / per;
        let d = 8u * (t % per);
        var v = mat2x4<f32>();
        if (base + j < end) {
            v = coop_load8(source, base + j, h, d, kvb);
        }
        let h0 = vec4<f16>(clamp(v[0], -big, big));
        let h1 = vec4<f16>(clamp(v[1], -big, big));
        let at = j * kld + d;
        kvh[at / 4u] = h0;
        kvh[at / 4u + 1u] = h1;
    }
}

// The score of tile position j of workgroup row `row` (from ss: the sum of the partners'
// partial scores where the head is wide): soft-capped, or NEG_BIG outside the row's
// positions lo..stop (stop: exclusive, within this workgroup's share) or for a row past
// the batch.
fn coop_score(g: Geometry, row: u32, j: u32, t0: u32, live: bool, lo: u32, stop: u32) -> f32 {
    if (!live || t0 + j < lo || t0 + j >= stop) {
        return NEG_BIG;
    }
    var v = ss[row * g.sld + j];
    for (var x = 1u; x < g.partials; x++) {
        v += ss[(x * g.rows + row) * g.sld + j];
    }
    if (p.softcap > 0.0) {
        return p.softcap * tanh_safe(v / p.softcap);
    }
    return v;
}

// Every other value (from `at`) of a 16-value row of ss times f: one invocation's half
// of a row when a subgroup rescales one of its sums of V.
fn scale_row_half(at: u32, f: f32) {
    for (var c = 0u; c < 8u; c++) {
        ss[at + 2u * c] *= f;
    }
}

// One of a subgroup's 16 × 16 sums of V, staged in ss at `at` (its row's, [16 rows][OLD]):
// w of its 16 values of head_dim from d0 on, each invocation taking every other value
// of one row (`orow`), normalised into the output or, with splits, unnormalised into the
// scratch (osb, oqb: the row's bases in each).
fn coop_emit(live: bool, orow: u32, at: u32, d0: u32, w: u32, osb: u32, oqb: u32, lid: u32) {
    if (!live) {
        return;
    }
    let ml = rowml[orow];
    let f = select(0.0, 1.0 / ml.y, ml.y > 0.0);
    for (var c = 0u; c < 8u; c++) {
        let j = 2u * c + lid % 2u;
        let d = d0 + j;
        if (j < w && d < p.head_dim) {
            let o = ss[at + j];
            if (p.splits > 1u) {
                scratch[osb + SPLIT_HEAD + d] = o;
            } else {
                out[oqb + d] = o * f;
            }
        }
    }
}

@compute @workgroup_size(COOP_ATTN_WG)
fn attention_tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
    // head_dim padded with zeros to a multiple of 64, or where it is wide to 256 (the
    // matrix operations' branches below depend on the workgroup's head size only).
    let hd = p.head_dim;
    let hdp = select((hd + 63u) & ~63u, 256u, hd > 128u);
    let g = geometry(hdp);
    // A workgroup past the last block (a folded grid rounds up) walks no positions and
    // writes nothing: no early return, which would leave the matrix operations below
    // in non-uniform control flow.
    let id = wg_linear(wid, nwg);
    let dead = id >= ((p.n + g.rows - 1u) / g.rows) * p.heads * p.splits;
    let split = id % p.splits;
    let h = (id / p.splits) % p.heads;
    let r0 = block_row0(id, p.splits * p.heads, g.rows);
    let kvb = (h / (p.heads / p.kv_heads)) * hd;
    // This subgroup's 16 rows (from rb) and which of their partners it is (pt). Its
    // scores: the tile's 16 positions from sp0 over qw values of head_dim from qd0
    // (narrow heads: all of it; wide: a quarter, whose partial scores go to ss's
    // `partial`). Its weighted sum: ow values of head_dim from od0 (narrow: a quarter,
    // 16 or 32; wide: an eighth, 32), one or two 16-wide sums.
    let sg = lid / 32u;
    let rb = (sg / g.parts) * 16u;
    let pt = sg % g.parts;
    let blocks = g.tile / 16u;
    let sp0 = 16u * (pt % blocks);
    let partial = pt / blocks;
    // (qw and ow from hdp directly: naga takes a value read from the geometry struct as
    // non-uniform, and the matrix operations' branches on them need uniform ones.)
    let qw = select(hdp, 64u, hdp > COOP_ATTN_NARROW_HD);
    let qd0 = partial * qw;
    let ow = select(hdp / 4u, 32u, hdp > COOP_ATTN_NARROW_HD);
    let od0 = pt * ow;
    // The strides as plain values: naga 30's SPIR-V writer fails on a cooperative load
    // whose stride is a struct member read in the call itself.
    let kld = g.kld;
    let sld = g.sld;
    let pld = g.pld;
    // For the softmax, this invocation's row of the block and its share of a tile's
    // positions: every ipr-th one from `part`.
    let ipr = COOP_ATTN_WG / g.rows;
    let row = lid / ipr;
    let part = lid % ipr;
    let r = r0 + row;
    let live = !dead && r < p.n;
    let lo = row_start(r);
    // This workgroup's share of the block's positions.
    let positions = split_share(row_start(r0), block_end(r0, g.rows), split);
    let first = positions.x;
    let end = select(positions.y, first, dead);
    let stop = min(row_end(r), end);

    // The subgroup's queries, 16 rows × qw, as up to eight A matrices held throughout
    // (named, not an array: they stay in registers).
    coop_stage(0u, r0, p.n, g.rows, h, kvb, hdp, kld, lid);
    workgroupBarrier();
    let qa = rb * kld + qd0;
    let q0 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[(qa) / 4u], kld / 4u);
    let q1 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[(qa + 16u) / 4u], kld / 4u);
    var q2 = coop_mat16x16<f16, A>();
    var q3 = coop_mat16x16<f16, A>();
    var q4 = coop_mat16x16<f16, A>();
    var q5 = coop_mat16x16<f16, A>();
    var q6 = coop_mat16x16<f16, A>();
    var q7 = coop_mat16x16<f16, A>();
    // (Always taken: qw is 64 or 128, head_dim padded to 64. Without this branch, the one
    // in the scores and coop_emit's width, the 1.5B's 4,096-token prefill ran 1.2% slower
    // on an H200: bench/results/attention-inputs-h200.md.)
    if (qw > 32u) {
        q2 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[(qa + 32u) / 4u], kld / 4u);
        q3 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[(qa + 48u) / 4u], kld / 4u);
    }
    if (qw > 64u) {
        q4 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[(qa + 64u) / 4u], kld / 4u);
        q5 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[(qa + 80u) / 4u], kld / 4u);
    }
    if (qw > 96u) {
        q6 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[(qa + 96u) / 4u], kld / 4u);
        q7 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[(qa + 112u) / 4u], kld / 4u);
    }
    workgroupBarrier();

    // The subgroup's weighted sum of V: 16 rows × one or two 16-value pieces of its
    // part of head_dim.
    var o0 = coop_mat16x16<f32, C>();
    var o1 = coop_mat16x16<f32, C>();
    // The row's reference max m (the same in its ipr invocations) and this invocation's
    // share of the row's sum of weights exp(score − m), kept lazily (header).
    var m = NEG_BIG;
    var l = 0.0;
    let share = g.tile / ipr;
    // Where this subgroup's scores go in ss, and where its sums pass through it.
    let sa = (partial * g.rows + rb) * sld;
    let oa = sg * 16u * OLD;
    let srow = (lid % 32u) / 2u;
    for (var t0 = first; t0 < end; t0 += g.tile) {
        if (lid == 0u) {
            atomicStore(&rescale_flag, 0u);
        }
        // Scores: the subgroup's queries times 16 of the tile's keys (B: the keys read
        // column-major are kᵀ), into ss.
        coop_stage(1u, t0, end, g.tile, h, kvb, hdp, kld, lid);
        workgroupBarrier();
        let kb = sp0 * kld + qd0;
        var s = coop_mat16x16<f32, C>();
        s = coopMultiplyAdd(q0, coopLoad<coop_mat16x16<f16, B>>(&kvh[(kb) / 4u], kld / 4u), s);
        s = coopMultiplyAdd(q1, coopLoad<coop_mat16x16<f16, B>>(&kvh[(kb + 16u) / 4u], kld / 4u), s);
        if (qw > 32u) {
            s = coopMultiplyAdd(q2, coopLoad<coop_mat16x16<f16, B>>(&kvh[(kb + 32u) / 4u], kld / 4u), s);
            s = coopMultiplyAdd(q3, coopLoad<coop_mat16x16<f16, B>>(&kvh[(kb + 48u) / 4u], kld / 4u), s);
        }
        if (qw > 64u) {
            s = coopMultiplyAdd(q4, coopLoad<coop_mat16x16<f16, B>>(&kvh[(kb + 64u) / 4u], kld / 4u), s);
            s = coopMultiplyAdd(q5, coopLoad<coop_mat16x16<f16, B>>(&kvh[(kb + 80u) / 4u], kld / 4u), s);
        }
        if (qw > 96u) {
            s = coopMultiplyAdd(q6, coopLoad<coop_mat16x16<f16, B>>(&kvh[(kb + 96u) / 4u], kld / 4u), s);
            s = coopMultiplyAdd(q7, coopLoad<coop_mat16x16<f16, B>>(&kvh[(kb + 112u) / 4u], kld / 4u), s);
        }
        // (The index a plain value too: naga 30's SPIR-V writer does not emit an
        // index computed inside a cooperative store's pointer argument.)
        let at = sa + sp0;
        coopStoreT(s, &ss[at], sld);
        workgroupBarrier();
        // The row's max over the tile, from its ipr invocations' (neighbours in lid).
        var mt = NEG_BIG;
        for (var c = 0u; c < share; c++) {
            mt = max(mt, coop_score(g, row, ipr * c + part, t0, live, lo, stop));
        }
        mlx[lid] = mt;
        workgroupBarrier();
        var tile_max = NEG_BIG;
        for (var q = 0u; q < ipr; q++) {
            tile_max = max(tile_max, mlx[lid - part + q]);
        }
        // A new reference only where the tile's max passes it by more than the margin
        // (or sets the first one): then the row's sums so far are rescaled by `factor`.
        let m_new = select(m, tile_max, tile_max > m + RESCALE_MARGIN);
        let factor = exp(m - m_new);
        if (m > NEG_BIG && m_new > m) {
            atomicOr(&rescale_flag, 1u);
        }
        l *= factor;
        m = m_new;
        if (part == 0u) {
            rowml[row] = vec2<f32>(m, factor);
        }
        // The weights against m (at most e^RESCALE_MARGIN: exact enough as f16).
        for (var c = 0u; c < share; c++) {
            let j = ipr * c + part;
            let s = coop_score(g, row, j, t0, live, lo, stop);
            let w = select(0.0, exp(s - m), s > NEG_BIG);
            l += w;
            ph[row * pld + j] = f16(w);
        }
        if (lid == 0u) {
            rescale_now = atomicLoad(&rescale_flag);
        }
        // (A barrier: the weights, factors and flag are written, the scores read.)
        if (workgroupUniformLoad(&rescale_now) != 0u) {
            // Some row's reference rose: every subgroup scales its sums of V row by row
            // through ss, one at a time (factor 1 for the rows whose reference stayed).
            // (Written out, not a loop over the two: naga takes a branch on a loop
            // counter as non-uniform, and matrix loads need uniform control flow.)
            let f = rowml[rb + srow].y;
            let at = oa + srow * OLD + lid % 2u;
            coopStoreT(o0, &ss[oa], OLD);
            workgroupBarrier();
            scale_row_half(at, f);
            workgroupBarrier();
            o0 = coopLoadT<coop_mat16x16<f32, C>>(&ss[oa], OLD);
            workgroupBarrier();
            if (ow > 16u) {
                coopStoreT(o1, &ss[oa], OLD);
                workgroupBarrier();
                scale_row_half(at, f);
                workgroupBarrier();
                o1 = coopLoadT<coop_mat16x16<f32, C>>(&ss[oa], OLD);
                workgroupBarrier();
            }
        }
        // The values replace the keys and each subgroup adds its rows' weights × its
        // part of the values.
        coop_stage(2u, t0, end, g.tile, h, kvb, hdp, kld, lid);
        workgroupBarrier();
        for (var jb = 0u; jb < g.tile; jb += 16u) {
            let w = coopLoadT<coop_mat16x16<f16, A>>(&ph[rb * pld + jb], pld);
            let vb = jb * kld + od0;
            o0 = coopMultiplyAdd(w, coopLoadT<coop_mat16x16<f16, B>>(&kvh[(vb) / 4u], kld / 4u), o0);
            if (ow > 16u) {
                o1 = coopMultiplyAdd(w, coopLoadT<coop_mat16x16<f16, B>>(&kvh[(vb + 16u) / 4u], kld / 4u), o1);
            }
        }
        workgroupBarrier();
    }
    // The row's sum from its ipr invocations' shares (all against the row's m).
    mlx[lid] = l;
    workgroupBarrier();
    var lr = 0.0;
    for (var q = 0u; q < ipr; q++) {
        lr += mlx[lid - part + q];
    }
    if (part == 0u) {
        rowml[row] = vec2<f32>(m, lr);
    }
    // With splits, this share's max and sum for attn_combine (as attention_tiled.wgsl
    // leaves them).
    if (live && p.splits > 1u && part == 0u) {
        let sb = split_record(r, h, split);
        scratch[sb] = m;
        scratch[sb + 1u] = lr;
    }
    // The subgroup's sums, one at a time through ss: normalised into the output, or
    // with splits unnormalised into the scratch.
    let orow = rb + srow;
    let olive = !dead && r0 + orow < p.n;
    let osb = split_record(r0 + orow, h, split);
    let oqb = (r0 + orow) * p.q_cols + h * hd;
    let at = oa + srow * OLD;
    workgroupBarrier();
    coopStoreT(o0, &ss[oa], OLD);
    workgroupBarrier();
    coop_emit(olive, orow, at, od0, min(ow, 16u), osb, oqb, lid);
    if (ow > 16u) {
        workgroupBarrier();
        coopStoreT(o1, &ss[oa], OLD);
        workgroupBarrier();
        coop_emit(olive, orow, at, od0 + 16u, ow - 16u, osb, oqb, lid);
    }
}
