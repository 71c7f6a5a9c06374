// Q8_0 in 32-value units (a block each) for the integer-dot kernels
// (shaders/matvec_int.wgsl, matmul_int.wgsl; struct Unit: unit.wgsl), over the stored
// layout of shaders/quant/q8_0.wgsl (9 words: d, then 32 signed bytes, value e = byte
// e): the quants are the dot products' bytes as they are.
alias WEIGHT_WORD = u32;

fn unit(row: u32, u: u32) -> Unit {
    let b = row * p.row_words + 9u * u;
    let q0 = vec4<u32>(w[b + 1u], w[b + 2u], w[b + 3u], w[b + 4u]);
    let q1 = vec4<u32>(w[b + 5u], w[b + 6u], w[b + 7u], w[b + 8u]);
    let d = unpack2x16float(w[b]).x;
    return Unit(q0, q1, vec2<u32>(2u * u, 2u * u + 1u), vec2<f32>(d), vec2<f32>(0.0));
}
