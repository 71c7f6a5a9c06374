// One head's preparation for attention, shared by qk_rope (rope.wgsl) and the decode
// attention that takes it in (attention_rope, attention.wgsl): the per-head RMS norm
// (Qwen3's and Gemma 3's q/k norms) and the rotation. The including file declares
// hv (the head's values, loaded by its caller with any bias added), red (PREP_WG
// partial sums), PREP_WG (its workgroup size), cos_sin(r, i) (pair i's (cos, sin) in
// row r of its table), the norm weights qn, kn, the values v and v_bias(); its Params
// have head_dim, half, neox, norm and eps.

// The two indices (within a head) of pair i.
fn pair(i: u32) -> vec2<u32> {
    if (p.neox != 0u) {
        return vec2<u32>(i, i + p.half);
    }
    return vec2<u32>(2u * i, 2u * i + 1u);
}

// hv[0..head_dim] RMS-normalised with weight qn (kn for a k head) where p.norm == 1, as
// rms_norm.wgsl computes it (x * (1 / sqrt(mean + eps)) * weight), then rotated by
// row r of the table. Called by all PREP_WG invocations in uniform control flow; each
// invocation loaded hv[d] for d = lid, lid + PREP_WG, ...
fn prep_head(lid: u32, is_k: bool, r: u32) {
    let hd = p.head_dim;
    if (p.norm != 0u) {
        var ss = 0.0;
        for (var d = lid; d < hd; d += PREP_WG) {
            ss += hv[d] * hv[d];
        }
        red[lid] = ss;
        workgroupBarrier();
        for (var s = PREP_WG / 2u; s > 0u; s >>= 1u) {
            if (lid < s) {
                red[lid] += red[lid + s];
            }
            workgroupBarrier();
        }
        let scale = 1.0 / sqrt(red[0] / f32(hd) + p.eps);
        for (var d = lid; d < hd; d += PREP_WG) {
            var wt = 0.0;
            if (is_k) {
                wt = kn[d];
            } else {
                wt = qn[d];
            }
            hv[d] = hv[d] * scale * wt;
        }
    }
    workgroupBarrier();
    for (var i = lid; i < p.half; i += PREP_WG) {
        let cs = cos_sin(r, i);
        let ab = pair(i);
        let x0 = hv[ab.x];
        let x1 = hv[ab.y];
        hv[ab.x] = x0 * cs.x - x1 * cs.y;
        hv[ab.y] = x0 * cs.y + x1 * cs.x;
    }
    workgroupBarrier();
}

// Values d and (where `both`) d + 1 of a prepared key head in hv and of its value row
// (v from element vb + d, plus v's bias at kh + d: kh is the head's first column), as
// kv_put2 stores them: columns 0 (key) and 1 (value).
fn kv_pair(vb: u32, kh: u32, d: u32, both: bool) -> mat2x2<f32> {
    var kv = vec2<f32>(hv[d], 0.0);
    var vv = vec2<f32>(v[vb + d] + v_bias(kh + d), 0.0);
    if (both) {
        kv.y = hv[d + 1u];
        vv.y = v[vb + d + 1u] + v_bias(kh + d + 1u);
    }
    return mat2x2<f32>(kv, vv);
}
