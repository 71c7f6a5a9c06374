// Q4_0 and Q4_1 in 32-value units (a block each) for the integer-dot kernels
// (shaders/matvec_int.wgsl, matmul_int.wgsl; struct Unit: unit.wgsl), over the stored
// layouts of shaders/quant/q4_0.wgsl and q4_1.wgsl (5 words: the scale word, then 16
// quant bytes, byte j = value j in its low nibble, value j + 16 in its high one). Q4_0:
// y = d·(q − 8); Q4_1 (Q4_1 true, prepended by shaders.rs): y = d·q + m, m the scale
// word's high half.
alias WEIGHT_WORD = u32;

fn unit(row: u32, u: u32) -> Unit {
    let b = row * p.row_words + 5u * u;
    let q = vec4<u32>(w[b + 1u], w[b + 2u], w[b + 3u], w[b + 4u]);
    let mask = vec4<u32>(0x0f0f0f0fu);
    let dm = unpack2x16float(w[b]);
    let zero = select(vec2<f32>(-8.0 * dm.x), vec2<f32>(dm.y), Q4_1);
    return Unit(q & mask, (q >> vec4<u32>(4u)) & mask, vec2<u32>(2u * u, 2u * u + 1u), vec2<f32>(dm.x), zero);
}
