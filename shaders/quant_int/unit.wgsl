// What every 32-value unit snippet (shaders/quant_int/<type>.wgsl: `unit(row, u)`) gives
// back: unit u of a weight row as two runs of 16 quants, packed as signed bytes in the
// order of the input's 16-value runs, and the factors that turn the runs' integer dot
// products into the unit's share of the row's dot product:
//   Σ over i = 0, 1:  a[i] · scale(r[i]) · (q_i · x24 of run r[i])  +  b[i] · Σx of run r[i]
// (scale, Σx: the run's quantization scale and sum; b takes off a type's zero point, or
// adds Q4_1's minimum). Both the decode matvecs (shaders/matvec_int.wgsl) and the batch
// kernel (shaders/matmul_int.wgsl) read units only through this, so a type's unpacking
// is written once. The runs of units 2s and 2s + 1 are runs 4s..4s+3 in every type.
struct Unit {
    q0: vec4<u32>,
    q1: vec4<u32>,
    r: vec2<u32>,
    a: vec2<f32>,
    b: vec2<f32>,
}

// The largest |value| and the sum of a 16-value input run, in a fixed order: where both
// kernels' run quantization starts (matvec_int.wgsl's quantize_run, matmul_int.wgsl's
// stage_x_run), so decode and prefill scale a run alike.
fn run_max_sum(v: array<vec4<f32>, 4>) -> vec2<f32> {
    var amax = 0.0;
    var sum = 0.0;
    for (var i = 0u; i < 4u; i++) {
        let a = abs(v[i]);
        amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
        sum += v[i].x + v[i].y + v[i].z + v[i].w;
    }
    return vec2<f32>(amax, sum);
}
