// Appended to the attention family (shaders/attention.wgsl) instead of
// attention_tiled.wgsl where the device has cooperative matrices (tensor cores: wgpu's
// experimental `wgpu_cooperative_matrix`, 16 × 16 × 16 with f16 inputs and f32 sums,
// subgroups of 32; native only, see ShaderFeatures::coop_matrix). shaders.rs prepends
// the `enable`s.
//
// `attention_tiled` on cooperative matrices: a batch's (prefill's) causal grouped-query
// attention, one workgroup of four subgroups per (block of QR rows, head[, split]),
// each subgroup owning 16 of the rows. The block's positions pass through workgroup
// memory KT at a time as f16 (keys, then values); the q·k scores and the weights × V
// products are cooperative-matrix multiplies, the softmax is per invocation (two per
// row, each taking every other position of a tile).
//
// Two passes over the positions, so that the weighted sum of V, which lives on the
// matrices, never needs rescaling by a row's new running max (a cooperative matrix
// cannot be scaled row by row; round trips through workgroup memory would cost more):
// the first finds each row's max score and softmax sum, the second recomputes the
// scores, turns them into weights exp(score − max) (at most 1: exact enough as f16)
// and accumulates weights × V. The scores are computed twice; on tensor cores that is
// the cheap part.
//
// Precision: the queries (scaled), keys and values are rounded to f16 (relative 2^-11
// each, as an f16 KV cache rounds them), products are exact and sums f32. Head sizes up
// to 128 that are multiples of 4 (the host checks); they are padded with zeros to a
// multiple of 32. With splits > 1 each block's positions are shared among `splits`
// workgroups, whose partial results attn_combine merges (as attention_tiled.wgsl's).
// Workgroup memory: 44 KB (kernels::COOP_WORKGROUP_STORAGE).

const QR: u32 = 64u; // rows per workgroup: 16 per subgroup (lib.rs ATTN_COOP_ROWS)
const KT: u32 = 64u; // positions per tile
const KLD: u32 = 136u; // stride of a staged row in halves: the largest head (128) plus 8,
                       // so that the rows of a 16 × 16 load start in different banks
                       // (272 bytes, a multiple of the 16 the matrix loads need)
const SLD: u32 = 68u; // stride of a score row in f32s (KT plus 4: 272 bytes)
const PLD: u32 = 72u; // stride of a weight row in halves (KT plus 8: 144 bytes)
// kvh: the block's queries (once, on their way to the matrices), then each tile's keys,
// then its values, as [row or position][head_dim]. ss: the scores as [row][position];
// at the end the output, 64 values of head_dim at a time. ph: the weights as
// [row][position]. mlx: each invocation's max and sum at the end of the first pass.
var<workgroup> kvh: array<f16, QR * KLD>;
var<workgroup> ss: array<f32, QR * SLD>;
var<workgroup> ph: array<f16, QR * PLD>;
var<workgroup> mlx: array<f32, 256>;

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
                v[c] = vec4<f32>(k_at(at), k_at(at + 1u), k_at(at + 2u), k_at(at + 3u));
            } else {
                v[c] = vec4<f32>(v_at(at), v_at(at + 1u), v_at(at + 2u), v_at(at + 3u));
            }
        }
    }
    return v;
}

// Stages 64 rows into kvh as f16, the first padded head size (hdp) values of each: rows
// base.. of source 0 (queries), 1 (keys) or 2 (values), zero from row `end` on. Eight
// values per invocation and step, written out (a loop over the vectors' lanes is
// slower, as in matmul_coop.wgsl).
fn coop_stage(source: u32, base: u32, end: u32, h: u32, kvb: u32, hdp: u32, lid: u32) {
    let per = hdp / 8u;
    let big = vec4<f32>(65504.0);
    for (var t = lid; t < 64u * per; t += 128u) {
        let j = t / per;
        let d = 8u * (t % per);
        var v = mat2x4<f32>();
        if (base + j < end) {
            v = coop_load8(source, base + j, h, d, kvb);
        }
        let h0 = vec4<f16>(clamp(v[0], -big, big));
        let h1 = vec4<f16>(clamp(v[1], -big, big));
        let at = j * KLD + d;
        kvh[at] = h0.x;
        kvh[at + 1u] = h0.y;
        kvh[at + 2u] = h0.z;
        kvh[at + 3u] = h0.w;
        kvh[at + 4u] = h1.x;
        kvh[at + 5u] = h1.y;
        kvh[at + 6u] = h1.z;
        kvh[at + 7u] = h1.w;
    }
}

// The score of tile position j of workgroup row `row` (from ss): soft-capped, or
// NEG_BIG outside the row's positions lo..stop (stop: exclusive, within this
// workgroup's share) or for a row past the batch.
fn coop_score(row: u32, j: u32, t0: u32, live: bool, lo: u32, stop: u32) -> f32 {
    if (!live || t0 + j < lo || t0 + j >= stop) {
        return NEG_BIG;
    }
    let v = ss[row * SLD + j];
    if (p.softcap > 0.0) {
        return p.softcap * tanh_safe(v / p.softcap);
    }
    return v;
}

@compute @workgroup_size(128)
fn attention_tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
    // A workgroup past the last block (a folded grid rounds up) walks no positions and
    // writes nothing: no early return, which would leave the matrix operations below
    // in non-uniform control flow.
    let id = wg_linear(wid, nwg);
    let dead = id >= ((p.n + QR - 1u) / QR) * p.heads * p.splits;
    let split = id % p.splits;
    let h = (id / p.splits) % p.heads;
    let r0 = (id / (p.splits * p.heads)) * QR;
    let hd = p.head_dim;
    let hdp = (hd + 31u) & ~31u;
    let kvb = (h / (p.heads / p.kv_heads)) * hd;
    let sg = lid / 32u;
    // This invocation's row of the block (its subgroup's 16 rows, two invocations each)
    // and its half of a tile's positions: every other one from `half`.
    let row = sg * 16u + (lid % 32u) / 2u;
    let half = lid % 2u;
    let r = r0 + row;
    let live = !dead && r < p.n;
    let pos = p.start + r;
    var lo = 0u;
    if (p.window != 0u && pos + 1u > p.window) {
        lo = pos + 1u - p.window;
    }
    // The block's positions, and this workgroup's share of them.
    var block_first = 0u;
    if (p.window != 0u && p.start + r0 + 1u > p.window) {
        block_first = p.start + r0 + 1u - p.window;
    }
    let block_end = p.start + min(r0 + QR, p.n);
    let span = (block_end - block_first + p.splits - 1u) / p.splits;
    let first = block_first + split * span;
    let end = select(min(block_end, first + span), first, dead);
    let stop = min(pos + 1u, end);

    // The subgroup's queries, 16 rows × hdp, as up to eight A matrices held throughout
    // (named, not an array: they stay in registers).
    coop_stage(0u, r0, p.n, h, kvb, hdp, lid);
    workgroupBarrier();
    let qa = sg * 16u * KLD;
    let q0 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[qa], KLD);
    let q1 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[qa + 16u], KLD);
    var q2 = coop_mat16x16<f16, A>();
    var q3 = coop_mat16x16<f16, A>();
    var q4 = coop_mat16x16<f16, A>();
    var q5 = coop_mat16x16<f16, A>();
    var q6 = coop_mat16x16<f16, A>();
    var q7 = coop_mat16x16<f16, A>();
    if (hdp > 32u) {
        q2 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[qa + 32u], KLD);
        q3 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[qa + 48u], KLD);
    }
    if (hdp > 64u) {
        q4 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[qa + 64u], KLD);
        q5 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[qa + 80u], KLD);
    }
    if (hdp > 96u) {
        q6 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[qa + 96u], KLD);
        q7 = coopLoadT<coop_mat16x16<f16, A>>(&kvh[qa + 112u], KLD);
    }
    workgroupBarrier();

    // The subgroup's weighted sum of V: 16 rows × up to eight 16-value pieces of head_dim.
    var o0 = coop_mat16x16<f32, C>();
    var o1 = coop_mat16x16<f32, C>();
    var o2 = coop_mat16x16<f32, C>();
    var o3 = coop_mat16x16<f32, C>();
    var o4 = coop_mat16x16<f32, C>();
    var o5 = coop_mat16x16<f32, C>();
    var o6 = coop_mat16x16<f32, C>();
    var o7 = coop_mat16x16<f32, C>();
    // This invocation's max and sum over its positions; after the first pass, the row's.
    var m = NEG_BIG;
    var l = 0.0;
    for (var sweep = 0u; sweep < 2u; sweep++) {
        for (var t0 = first; t0 < end; t0 += KT) {
            // Scores: the subgroup's queries times the tile's keys (B: the keys read
            // column-major are kᵀ), 16 positions per matrix, into ss.
            coop_stage(1u, t0, end, h, kvb, hdp, lid);
            workgroupBarrier();
            for (var jb = 0u; jb < KT; jb += 16u) {
                let kb = jb * KLD;
                var s = coop_mat16x16<f32, C>();
                s = coopMultiplyAdd(q0, coopLoad<coop_mat16x16<f16, B>>(&kvh[kb], KLD), s);
                s = coopMultiplyAdd(q1, coopLoad<coop_mat16x16<f16, B>>(&kvh[kb + 16u], KLD), s);
                if (hdp > 32u) {
                    s = coopMultiplyAdd(q2, coopLoad<coop_mat16x16<f16, B>>(&kvh[kb + 32u], KLD), s);
                    s = coopMultiplyAdd(q3, coopLoad<coop_mat16x16<f16, B>>(&kvh[kb + 48u], KLD), s);
                }
                if (hdp > 64u) {
                    s = coopMultiplyAdd(q4, coopLoad<coop_mat16x16<f16, B>>(&kvh[kb + 64u], KLD), s);
                    s = coopMultiplyAdd(q5, coopLoad<coop_mat16x16<f16, B>>(&kvh[kb + 80u], KLD), s);
                }
                if (hdp > 96u) {
                    s = coopMultiplyAdd(q6, coopLoad<coop_mat16x16<f16, B>>(&kvh[kb + 96u], KLD), s);
                    s = coopMultiplyAdd(q7, coopLoad<coop_mat16x16<f16, B>>(&kvh[kb + 112u], KLD), s);
                }
                coopStoreT(s, &ss[sg * 16u * SLD + jb], SLD);
            }
            workgroupBarrier();
            if (sweep == 0u) {
                // First pass: the running max and sum of this invocation's positions.
                var mt = m;
                for (var c = 0u; c < KT / 2u; c++) {
                    mt = max(mt, coop_score(row, 2u * c + half, t0, live, lo, stop));
                }
                var sum = 0.0;
                for (var c = 0u; c < KT / 2u; c++) {
                    let s = coop_score(row, 2u * c + half, t0, live, lo, stop);
                    sum += select(0.0, exp(s - mt), s > NEG_BIG);
                }
                l = l * exp(m - mt) + sum;
                m = mt;
                continue;
            }
            // Second pass: the weights against the row's max, then the values replace the
            // keys and the subgroup adds weights × values to its sums.
            for (var c = 0u; c < KT / 2u; c++) {
                let j = 2u * c + half;
                let s = coop_score(row, j, t0, live, lo, stop);
                ph[row * PLD + j] = f16(select(0.0, exp(s - m), s > NEG_BIG));
            }
            coop_stage(2u, t0, end, h, kvb, hdp, lid);
            workgroupBarrier();
            for (var jb = 0u; jb < KT; jb += 16u) {
                let w = coopLoadT<coop_mat16x16<f16, A>>(&ph[sg * 16u * PLD + jb], PLD);
                let vb = jb * KLD;
                o0 = coopMultiplyAdd(w, coopLoadT<coop_mat16x16<f16, B>>(&kvh[vb], KLD), o0);
                o1 = coopMultiplyAdd(w, coopLoadT<coop_mat16x16<f16, B>>(&kvh[vb + 16u], KLD), o1);
                if (hdp > 32u) {
                    o2 = coopMultiplyAdd(w, coopLoadT<coop_mat16x16<f16, B>>(&kvh[vb + 32u], KLD), o2);
                    o3 = coopMultiplyAdd(w, coopLoadT<coop_mat16x16<f16, B>>(&kvh[vb + 48u], KLD), o3);
                }
                if (hdp > 64u) {
                    o4 = coopMultiplyAdd(w, coopLoadT<coop_mat16x16<f16, B>>(&kvh[vb + 64u], KLD), o4);
                    o5 = coopMultiplyAdd(w, coopLoadT<coop_mat16x16<f16, B>>(&kvh[vb + 80u], KLD), o5);
                }
                if (hdp > 96u) {
                    o6 = coopMultiplyAdd(w, coopLoadT<coop_mat16x16<f16, B>>(&kvh[vb + 96u], KLD), o6);
                    o7 = coopMultiplyAdd(w, coopLoadT<coop_mat16x16<f16, B>>(&kvh[vb + 112u], KLD), o7);
                }
            }
            workgroupBarrier();
        }
        if (sweep == 0u) {
            // The row's max and sum from its two invocations' (neighbours: lid ^ 1).
            mlx[2u * lid] = m;
            mlx[2u * lid + 1u] = l;
            workgroupBarrier();
            let mo = mlx[2u * (lid ^ 1u)];
            let lo_other = mlx[2u * (lid ^ 1u) + 1u];
            let mr = max(m, mo);
            l = l * exp(m - mr) + lo_other * exp(mo - mr);
            m = mr;
        }
    }

    // The rows' results, 64 values of head_dim at a time through ss: normalised into
    // the output, or with splits this share's max, sum and unnormalised sums into the
    // scratch that attn_combine reads (as attention_tiled.wgsl leaves them).
    let sb = ((r * p.heads + h) * p.splits + split) * (hd + 2u);
    let qb = r * p.q_cols + h * hd;
    let f = select(0.0, 1.0 / l, l > 0.0);
    if (live && p.splits > 1u && half == 0u) {
        scratch[sb] = m;
        scratch[sb + 1u] = l;
    }
    let sa = sg * 16u * SLD;
    for (var cb = 0u; cb < hdp; cb += 64u) {
        workgroupBarrier();
        if (cb == 0u) {
            coopStoreT(o0, &ss[sa], SLD);
            coopStoreT(o1, &ss[sa + 16u], SLD);
            coopStoreT(o2, &ss[sa + 32u], SLD);
            coopStoreT(o3, &ss[sa + 48u], SLD);
        } else {
            coopStoreT(o4, &ss[sa], SLD);
            coopStoreT(o5, &ss[sa + 16u], SLD);
            coopStoreT(o6, &ss[sa + 32u], SLD);
            coopStoreT(o7, &ss[sa + 48u], SLD);
        }
        workgroupBarrier();
        if (live) {
            for (var c = 0u; c < 32u; c++) {
                let j = 2u * c + half;
                let d = cb + j;
                if (d < hd) {
                    let o = ss[row * SLD + j];
                    if (p.splits > 1u) {
                        scratch[sb + 2u + d] = o;
                    } else {
                        out[qb + d] = o * f;
                    }
                }
            }
        }
    }
}
