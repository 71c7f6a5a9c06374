// Q5_K, 256 values, 176 bytes (44 words, stored as in GGUF):
//   word 0         d (f16, low half) | dmin (f16, high half)
//   words 1..3     scales[12]: as Q4_K
//   words 4..11    qh[32]: bit g of qh[l] is the 5th bit of value 32g + l
//   words 12..43   qs[128]: low 4 bits, as Q4_K
// y = (d * scale_g) * q - dmin * min_g,  g = value / 32
const BLOCK_ELEMS: u32 = 256u;
const BLOCK_WORDS: u32 = 44u;

fn k_scale_byte(b: u32, first: u32, n: u32) -> u32 {
    return byte_of(w[b + first + (n >> 2u)], n & 3u);
}

fn k4_scale_min(b: u32, g: u32) -> vec2<u32> {
    if (g < 4u) {
        return vec2<u32>(k_scale_byte(b, 1u, g) & 63u, k_scale_byte(b, 1u, g + 4u) & 63u);
    }
    let s = k_scale_byte(b, 1u, g + 4u);
    let sc = (s & 0xfu) | ((k_scale_byte(b, 1u, g - 4u) >> 6u) << 4u);
    let m = (s >> 4u) | ((k_scale_byte(b, 1u, g) >> 6u) << 4u);
    return vec2<u32>(sc, m);
}

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let e = 4u * i;
    let c = e >> 6u;
    let g = e >> 5u;
    let l = e & 31u;
    let lo = bytes4(w[b + 12u + ((32u * c + l) >> 2u)] >> (4u * (g & 1u))) & vec4<u32>(0xfu);
    let hi = bytes4(w[b + 4u + (l >> 2u)] >> g) & vec4<u32>(1u);
    let q = lo | (hi << vec4<u32>(4u));
    let dm = unpack2x16float(w[b]);
    let sm = k4_scale_min(b, g);
    return (dm.x * f32(sm.x)) * vec4<f32>(q) - dm.y * f32(sm.y);
}
