// Q4_0 and Q4_1 in 32-value units (a block each) for the integer-dot decode matvecs
// (shaders/matvec_int.wgsl), over the stored layouts of shaders/quant/q4_0.wgsl and
// q4_1.wgsl (5 words: the scale word, then 16 quant bytes, byte j = value j in its low
// nibble, value j + 16 in its high one). Q4_0: y = d·(q − 8); Q4_1 (Q4_1 true, prepended
// by shaders.rs): y = d·q + m, m the scale word's high half.
alias WEIGHT_WORD = u32;

fn unit_dot(row: u32, u: u32) -> f32 {
    let b = row * p.row_words + 5u * u;
    let q = vec4<u32>(w[b + 1u], w[b + 2u], w[b + 3u], w[b + 4u]);
    let mask = vec4<u32>(0x0f0f0f0fu);
    let dm = unpack2x16float(w[b]);
    let x0 = run_scale(2u * u);
    let x1 = run_scale(2u * u + 1u);
    let qx = x0.x * run_dot(2u * u, q & mask) + x1.x * run_dot(2u * u + 1u, (q >> vec4<u32>(4u)) & mask);
    if (Q4_1) {
        return dm.x * qx + dm.y * (x0.y + x1.y);
    }
    return dm.x * (qx - 8.0 * (x0.y + x1.y));
}
