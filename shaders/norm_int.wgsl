// Prepended to shaders/matvec_int.wgsl for its `*_normed` kernels: the input row is
// RMS-normalised on the fly (as norm_in.wgsl does for matmul.wgsl): the staged values
// are x · nw, the sums are scaled by 1 / rms(x) at the end, and workgroup 0 writes the
// normalised row to h. (shaders.rs has the plain twins: INT_NORM_OFF.)

@group(0) @binding(9) var<storage, read> nw: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> h: array<vec4<f32>>;

// Values 4i..4i+3 of the row as staged.
fn in_run(raw: vec4<f32>, i: u32) -> vec4<f32> {
    return raw * nw[i];
}

// 1 / rms from this invocation's Σ x² (a barrier first: the staging is then visible).
fn in_finish(lid: u32, first: bool, ss: f32) -> f32 {
    let scale = 1.0 / sqrt(wg_sum(lid, ss) / f32(p.k) + p.eps);
    if (first) {
        for (var i = lid; i < p.k / 4u; i += MV_WG) {
            h[i] = bitcast<vec4<f32>>(x[i]) * scale * nw[i];
        }
    }
    return scale;
}
