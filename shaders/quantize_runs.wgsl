// quantize_runs: a batch's activations as the integer-dot batch matmul
// (shaders/matmul_int.wgsl) reads them. Each 16-value run of each row is quantized here
// once, where the matmul had quantized it again in every output tile across the weight
// (Qwen2.5-1.5B's gate: 140 tiles), half its staging arithmetic. One invocation per run:
// the scale max |x| / qx_max, p.digits signed-byte digits per value, and the run's sum.
// The run's largest and sum come from run_max_sum (shaders/quant_int/unit.wgsl,
// prepended), as in the decode kernels.
//
// The digits: q = round(v / scale) with |q| ≤ qx_max, split into balanced digits in
// [-128, 127], high to low (each digit's bias makes the rest below it fit the lower
// digits, as matvec_int.wgsl's). Those are the base-256 digits of q + B less 128 each,
// B = 128 · (1 + 256 + ...) over all the digits: q + B = Σ (digit + 128) · 256^k with
// every digit + 128 in [0, 255], a base-256 expansion and so the only one. So each digit
// word is the bytes of (q + B) >> 8k, packed and with every byte's top bit flipped
// (b - 128 as a signed byte is b ^ 0x80): a shift, a pack and an xor instead of a carry
// chain per digit.
// Params: QuantParams.
@group(0) @binding(0) var<uniform> p: Params;
// x: [n, x_stride] f32 (x_stride a multiple of 4 and k of 16: the host checks).
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
// qx: [n, k / 16, digits + 1] vec4s: run (row, r)'s digit vectors for digit d = 0 ..
// digits - 1 (high first; component i holds values 4i..4i+3 as packed bytes), then
// (scale, Σx) as f32 bits in .x and .y.
@group(0) @binding(2) var<storage, read_write> qx: array<vec4<u32>>;

@compute @workgroup_size(ITEMS_WG)
fn quantize_runs(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
    let runs = p.k / 16u;
    let id = wg_linear(wid, nwg) * ITEMS_WG + lid;
    if (id >= p.n * runs) {
        return;
    }
    let b = (id / runs) * (p.x_stride / 4u) + 4u * (id % runs);
    let v = array<vec4<f32>, 4>(x[b], x[b + 1u], x[b + 2u], x[b + 3u]);
    let stats = run_max_sum(v);
    // (256^digits − 1) / 255 = 1 + 256 + ...: qx_max is 127 times it (127, 32639,
    // 8355711), the bias B of matmul_int.wgsl 128 times it.
    let ones = ((1u << (8u * p.digits)) - 1u) / 255u;
    let qx_max = 127.0 * f32(ones);
    let d = stats.x / qx_max;
    let inv = select(0.0, 1.0 / d, d > 0.0);
    let lim = vec4<i32>(i32(127u * ones));
    let bias = vec4<i32>(i32(128u * ones));
    let at = id * (p.digits + 1u);
    var digits: array<vec4<u32>, 3>;
    for (var i = 0u; i < 4u; i++) {
        let u = bitcast<vec4<u32>>(clamp(vec4<i32>(round(v[i] * inv)), -lim, lim) + bias);
        for (var k = 0u; k < p.digits; k++) {
            let low = vec4<u32>(8u * (p.digits - 1u - k));
            digits[k][i] = pack4xU8((u >> low) & vec4<u32>(255u)) ^ 0x80808080u;
        }
    }
    for (var k = 0u; k < p.digits; k++) {
        qx[at + k] = digits[k];
    }
    qx[at + p.digits] = vec4<u32>(bitcast<u32>(d), bitcast<u32>(stats.y), 0u, 0u);
}
