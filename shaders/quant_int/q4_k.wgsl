// Q4_K in 32-value units for the integer-dot kernels (shaders/matvec_int.wgsl,
// matmul_int.wgsl; struct Unit: unit.wgsl).
// The weight is read as vec4<u32>: a block (144 bytes) is 9 vec4s, the header (d|dmin and
// the twelve scale bytes, k4_scales.wgsl) and 8 units of 16 quant bytes. Unit j of a
// block: its low nibbles are values 64(j/2) + 16(j%2) + 0..15 (group 2(j/2)), its high
// nibbles the same places + 32 (group 2(j/2) + 1), both in the order of the input's
// 16-value runs.
alias WEIGHT_WORD = vec4<u32>;

// Unit u of weight row `row` (struct Unit: shaders/quant_int/unit.wgsl).
fn unit(row: u32, u: u32) -> Unit {
    let j = u & 7u;
    let at = row * (p.row_words / 4u) + (u >> 3u) * 9u;
    let h = w[at];
    let q = w[at + 1u + j];
    // The run of the low nibbles; the high ones are two runs on.
    let r = 16u * (u >> 3u) + 4u * (j >> 1u) + (j & 1u);
    let mask = vec4<u32>(0x0f0f0f0fu);
    let dm = unpack2x16float(h.x);
    let g = 2u * (j >> 1u);
    let s0 = vec2<f32>(k4_scale_min(h.y, h.z, h.w, g));
    let s1 = vec2<f32>(k4_scale_min(h.y, h.z, h.w, g + 1u));
    // y = d·scale·q − dmin·min over each 32-value group.
    return Unit(q & mask, (q >> vec4<u32>(4u)) & mask, vec2<u32>(r, r + 2u), dm.x * vec2<f32>(s0.x, s1.x),
                -dm.y * vec2<f32>(s0.y, s1.y));
}
