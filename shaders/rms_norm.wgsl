// RMS norm over consecutive groups of `group` columns (a whole row, or one head):
// y = x * (1 / sqrt(mean(x²) + eps)) * weight. One workgroup per (row, group).
// `rms_norm_add` also adds y into a residual stream (Gemma 3's post-norms: x += norm(o)).
// `layer_norm` / `layer_norm_in_place` (encoders): the group centred on its mean first,
// then a bias added: y = (x - mean) / sqrt(var + eps) * weight + bias, the variance
// summed over the centred values (a second pass: with BERT's eps of 1e-12 a one-pass
// E[x²] - mean² would lose the small variances to cancellation). The sums are taken
// relative to the group's first value (`pivot`), so a row far from zero (a residual
// stream's large offset) keeps its precision: `mean` is the mean of x - pivot.
// Params: NormParams.

// Params: n (rows), cols (row stride), group, eps.
@group(0) @binding(0) var<uniform> p: Params;
// x: [n, cols] input (entry `rms_norm`).
@group(0) @binding(1) var<storage, read> x: array<f32>;
// out: [n, cols] output (entry `rms_norm`).
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
// xo: [n, cols] input and output (entry `rms_norm_in_place`).
@group(0) @binding(3) var<storage, read_write> xo: array<f32>;
// weight: [group] f32.
@group(0) @binding(4) var<storage, read> weight: array<f32>;
// res: [n, cols] a residual stream, res += out (entry `rms_norm_add`).
@group(0) @binding(5) var<storage, read_write> res: array<f32>;
// bias: [group] f32 (entries `layer_norm*`).
@group(0) @binding(6) var<storage, read> bias: array<f32>;

const WG: u32 = 128u;
var<workgroup> partial: array<f32, WG>;

// Sums `partial` into partial[0]; leaves every invocation after a barrier.
fn reduce_sum(lid: u32) {
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            partial[lid] += partial[lid + s];
        }
        workgroupBarrier();
    }
}

// First element of workgroup `id`'s group, or `NONE` past the last group.
const NONE: u32 = 0xffffffffu;
fn group_base(id: u32) -> u32 {
    let groups = p.cols / p.group;
    if (id >= p.n * groups) {
        return NONE;
    }
    return (id / groups) * p.cols + (id % groups) * p.group;
}

// The sum over the workgroup of each invocation's `v`, in every invocation; partial
// may be reused after it (a barrier follows the read).
fn group_sum(v: f32, lid: u32) -> f32 {
    partial[lid] = v;
    reduce_sum(lid);
    let t = partial[0];
    workgroupBarrier();
    return t;
}

// 1 / rms of the group, from each invocation's partial sum of squares (of the centred
// values for layer norm: then 1 / sqrt(var + eps)).
fn inv_rms(ss: f32, lid: u32) -> f32 {
    partial[lid] = ss;
    reduce_sum(lid);
    return 1.0 / sqrt(partial[0] / f32(p.group) + p.eps);
}

// 1 / rms of the group of `x` at `base` (entries reading `x`).
fn x_scale(base: u32, lid: u32) -> f32 {
    var ss = 0.0;
    for (var i = lid; i < p.group; i += WG) {
        let v = x[base + i];
        ss += v * v;
    }
    return inv_rms(ss, lid);
}

// The two entry points differ only in their buffers (`x` → `out`, or `xo` in place):
// WGSL cannot pass a storage buffer to a function portably.
@compute @workgroup_size(128)
fn rms_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    let base = group_base(wg_linear(wid, nwg));
    if (base == NONE) {
        return;
    }
    let scale = x_scale(base, lid);
    for (var i = lid; i < p.group; i += WG) {
        out[base + i] = x[base + i] * scale * weight[i];
    }
}

@compute @workgroup_size(128)
fn rms_norm_in_place(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
    let base = group_base(wg_linear(wid, nwg));
    if (base == NONE) {
        return;
    }
    var ss = 0.0;
    for (var i = lid; i < p.group; i += WG) {
        let v = xo[base + i];
        ss += v * v;
    }
    let scale = inv_rms(ss, lid);
    for (var i = lid; i < p.group; i += WG) {
        xo[base + i] = xo[base + i] * scale * weight[i];
    }
}

@compute @workgroup_size(128)
fn rms_norm_add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let base = group_base(wg_linear(wid, nwg));
    if (base == NONE) {
        return;
    }
    let scale = x_scale(base, lid);
    for (var i = lid; i < p.group; i += WG) {
        let y = x[base + i] * scale * weight[i];
        out[base + i] = y;
        res[base + i] = res[base + i] + y;
    }
}

// Layer norm, x → out (`layer_norm_in_place` is its twin over `xo`, as above).
@compute @workgroup_size(128)
fn layer_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let base = group_base(wg_linear(wid, nwg));
    if (base == NONE) {
        return;
    }
    let pivot = x[base];
    var s = 0.0;
    for (var i = lid; i < p.group; i += WG) {
        s += x[base + i] - pivot;
    }
    let mean = group_sum(s, lid) / f32(p.group);
    var ss = 0.0;
    for (var i = lid; i < p.group; i += WG) {
        let d = x[base + i] - pivot - mean;
        ss += d * d;
    }
    let scale = inv_rms(ss, lid);
    for (var i = lid; i < p.group; i += WG) {
        out[base + i] = (x[base + i] - pivot - mean) * scale * weight[i] + bias[i];
    }
}

// Layer norm in place (`xo`): every value is read into the sums before any is written.
@compute @workgroup_size(128)
fn layer_norm_in_place(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    let base = group_base(wg_linear(wid, nwg));
    if (base == NONE) {
        return;
    }
    let pivot = xo[base];
    var s = 0.0;
    for (var i = lid; i < p.group; i += WG) {
        s += xo[base + i] - pivot;
    }
    let mean = group_sum(s, lid) / f32(p.group);
    var ss = 0.0;
    for (var i = lid; i < p.group; i += WG) {
        let d = xo[base + i] - pivot - mean;
        ss += d * d;
    }
    let scale = inv_rms(ss, lid);
    for (var i = lid; i < p.group; i += WG) {
        xo[base + i] = (xo[base + i] - pivot - mean) * scale * weight[i] + bias[i];
    }
}
