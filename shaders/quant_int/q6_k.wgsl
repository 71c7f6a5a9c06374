// Q6_K in 32-value units for the integer-dot kernels (shaders/matvec_int.wgsl,
// matmul_int.wgsl; struct Unit: unit.wgsl),
// over the stored layout of shaders/quant/q6_k.wgsl (53 words a block: not whole vec4s,
// so the weight is read as u32). Unit j = 4h + s of a block is values 128h + 32s + l,
// l = 0..31: nibble s/2 of ql words 16h + 8(s%2) + l/4, bit pair s of qh words
// 32 + 8h + l/4, the 16-value groups 8h + 2s and the next (scale bytes in word 48 +
// 2h + s/2). Each value is q - 32 for a 6-bit q: the dot products take q, and 32·Σx
// is taken off per run.
alias WEIGHT_WORD = u32;

// Four 6-bit quants (bytes) from a ql word and a qh word of unit j = 4h + s.
fn q6_bytes(lo: u32, hi: u32, s: u32) -> u32 {
    return ((lo >> (4u * (s >> 1u))) & 0x0f0f0f0fu) | (((hi >> (2u * s)) & 0x03030303u) << 4u);
}

fn unit(row: u32, u: u32) -> Unit {
    let j = u & 7u;
    let hf = j >> 2u;
    let s = j & 3u;
    let b = row * p.row_words + (u >> 3u) * 53u;
    let lo = b + 16u * hf + 8u * (s & 1u);
    let hi = b + 32u + 8u * hf;
    let q0 = vec4<u32>(q6_bytes(w[lo], w[hi], s), q6_bytes(w[lo + 1u], w[hi + 1u], s),
                       q6_bytes(w[lo + 2u], w[hi + 2u], s), q6_bytes(w[lo + 3u], w[hi + 3u], s));
    let q1 = vec4<u32>(q6_bytes(w[lo + 4u], w[hi + 4u], s), q6_bytes(w[lo + 5u], w[hi + 5u], s),
                       q6_bytes(w[lo + 6u], w[hi + 6u], s), q6_bytes(w[lo + 7u], w[hi + 7u], s));
    let sw = w[b + 48u + 2u * hf + (s >> 1u)] >> (16u * (s & 1u));
    let sc = vec2<f32>(vec2<i32>(bitcast<i32>(sw << 24u) >> 24u, bitcast<i32>(sw << 16u) >> 24u));
    let d = unpack2x16float(w[b + 52u]).x;
    let r = 16u * (u >> 3u) + 8u * hf + 2u * s;
    return Unit(q0, q1, vec2<u32>(r, r + 1u), d * sc, -32.0 * d * sc);
}
