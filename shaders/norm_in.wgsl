// Prepended to the matmul family for its `*_normed` kernels: a decode matvec whose
// input row is RMS-normalised on the fly, so the norm before a block joins the
// projections after it. x holds the raw residual row; sums are taken over x * nw and
// scaled by 1 / rms(x) at the end; workgroup 0 also writes the normalised row to h, so
// the norm's output exists as if the norm had run on its own.
// (shaders/norm_off.wgsl has the same functions for the plain kernels.)

// nw: [k] f32 the norm weight, read as vec4s (as x).
@group(0) @binding(9) var<storage, read> nw: array<vec4<f32>>;
// h: [k] f32 the normalised row (written by workgroup 0).
@group(0) @binding(10) var<storage, read_write> h: array<f32>;

// Where staged() (shaders/norm_stage.wgsl, prepended for the gate/up kernel; else
// never), in_scale leaves the input row times the norm weight in workgroup memory for
// in4 (xn_put / xn_get).

// Values e..e+3 of the input row times the norm weight (zero past the row's end).
fn in4(e: u32) -> vec4<f32> {
    if (e + 4u <= p.k && (e & 3u) == 0u) {
        if (staged()) {
            return xn_get(e >> 2u);
        }
        return x4(0u, e) * nw[e >> 2u];
    }
    var wv = vec4<f32>(0.0);
    for (var c = 0u; c < 4u; c++) {
        if (e + c < p.k) {
            wv[c] = nw[(e + c) >> 2u][(e + c) & 3u];
        }
    }
    return x4(0u, e) * wv;
}

// 1 / rms of the input row, as rms_norm.wgsl computes it; stages the row for in4 where
// staged(); workgroup `first` also writes h. Called in uniform control flow (it has
// barriers, which also make the staged row visible to the whole workgroup).
fn in_scale(lid: u32, first: bool) -> f32 {
    var ss = 0.0;
    if (staged()) {
        for (var i = lid; i < p.k / 4u; i += MV_WG) {
            let v = x[i];
            ss += dot(v, v);
            xn_put(i, v * nw[i]);
        }
    } else {
        for (var e = lid; e < p.k; e += MV_WG) {
            let v = x1(e);
            ss += v * v;
        }
    }
    let scale = 1.0 / sqrt(wg_sum(lid, ss) / f32(p.k) + p.eps);
    if (first) {
        for (var e = lid; e < p.k; e += MV_WG) {
            h[e] = x1(e) * scale * nw[e >> 2u][e & 3u];
        }
    }
    return scale;
}
