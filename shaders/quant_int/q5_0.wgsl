// Q5_0 in 32-value units (a block each) for the integer-dot kernels
// (shaders/matvec_int.wgsl, matmul_int.wgsl; struct Unit: unit.wgsl), over the stored
// layout of shaders/quant/q5_0.wgsl (6 words: d, qh, then 16 quant bytes: byte j = the
// low 4 bits of value j in its low nibble, of value j + 16 in its high one; bit e of qh
// = the 5th bit of value e). y = d·(q − 16): the dot products take q, and 16·Σx is taken
// off.
alias WEIGHT_WORD = u32;

// The 5th bits of four values (bits 0..3 of `bits`) at bit 4 of each byte.
fn q5_high(bits: u32) -> u32 {
    return ((bits & 1u) << 4u) | ((bits & 2u) << 11u) | ((bits & 4u) << 18u) | ((bits & 8u) << 25u);
}

fn unit(row: u32, u: u32) -> Unit {
    let b = row * p.row_words + 6u * u;
    let qh = w[b + 1u];
    let q = vec4<u32>(w[b + 2u], w[b + 3u], w[b + 4u], w[b + 5u]);
    let lo = (q & vec4<u32>(0x0f0f0f0fu)) | vec4<u32>(q5_high(qh), q5_high(qh >> 4u), q5_high(qh >> 8u), q5_high(qh >> 12u));
    let hi = ((q >> vec4<u32>(4u)) & vec4<u32>(0x0f0f0f0fu))
        | vec4<u32>(q5_high(qh >> 16u), q5_high(qh >> 20u), q5_high(qh >> 24u), q5_high(qh >> 28u));
    let d = unpack2x16float(w[b]).x;
    return Unit(lo, hi, vec2<u32>(2u * u, 2u * u + 1u), vec2<f32>(d), vec2<f32>(-16.0 * d));
}
