// Q5_K, 256 values, 176 bytes (44 words, stored as in GGUF):
//   word 0         d (f16, low half) | dmin (f16, high half)
//   words 1..3     scales[12]: as Q4_K
//   words 4..11    qh[32]: bit g of qh[l] is the 5th bit of value 32g + l
//   words 12..43   qs[128]: low 4 bits, as Q4_K
// y = (d * scale_g) * q - dmin * min_g,  g = value / 32 (k4_scale_min: k4_scales.wgsl)
const BLOCK_ELEMS: u32 = 256u;
const BLOCK_WORDS: u32 = 44u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let e = 4u * i;
    let c = e >> 6u;
    let g = e >> 5u;
    let l = e & 31u;
    let lo = bytes4(w[b + 12u + ((32u * c + l) >> 2u)] >> (4u * (g & 1u))) & vec4<u32>(0xfu);
    let hi = bytes4(w[b + 4u + (l >> 2u)] >> g) & vec4<u32>(1u);
    let q = lo | (hi << vec4<u32>(4u));
    let dm = unpack2x16float(w[b]);
    let sm = k4_scale_min(w[b + 1u], w[b + 2u], w[b + 3u], g);
    return (dm.x * f32(sm.x)) * vec4<f32>(q) - dm.y * f32(sm.y);
}
