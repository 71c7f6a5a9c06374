// Q8_0 in 32-value units (a block each) for the integer-dot decode matvecs
// (shaders/matvec_int.wgsl), over the stored layout of shaders/quant/q8_0.wgsl (9 words:
// d, then 32 signed bytes, value e = byte e): the quants are the dot products' bytes
// as they are.
alias WEIGHT_WORD = u32;

fn unit_dot(row: u32, u: u32) -> f32 {
    let b = row * p.row_words + 9u * u;
    let q0 = vec4<u32>(w[b + 1u], w[b + 2u], w[b + 3u], w[b + 4u]);
    let q1 = vec4<u32>(w[b + 5u], w[b + 6u], w[b + 7u], w[b + 8u]);
    let d = unpack2x16float(w[b]).x;
    let x0 = run_scale(2u * u);
    let x1 = run_scale(2u * u + 1u);
    return d * (x0.x * run_dot(2u * u, q0) + x1.x * run_dot(2u * u + 1u, q1));
}
