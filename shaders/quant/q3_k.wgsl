// Q3_K, 256 values, repacked from 110 to 112 bytes (28 words; 2 bytes padding at the end):
//   words 0..7    hmask[32]: bit (4h + j) of hmask[l] is the high bit of value 128h + 32j + l
//   words 8..23   qs[64]: low 2 bits of value 128h + 32j + l are (qs[32h + l] >> 2j) & 3
//   words 24..26  scales[12]: sixteen packed 6-bit scales, minus 32 (see q3_k_scale)
//   word 27       d (f16, low half)
// y = (d * scale_g) * (low2 - (high bit ? 0 : 4)),  g = value / 16
const BLOCK_ELEMS: u32 = 256u;
const BLOCK_WORDS: u32 = 28u;

fn q3_k_scale(b: u32, g: u32) -> i32 {
    let s0 = 96u + (g & 7u);        // block byte of scale byte g % 8
    let s1 = 104u + (g & 3u);       // block byte of scale byte 8 + g % 4
    let lo = (byte_of(w[b + (s0 >> 2u)], s0 & 3u) >> (4u * (g >> 3u))) & 0xfu;
    let hi = (byte_of(w[b + (s1 >> 2u)], s1 & 3u) >> (2u * (g >> 2u))) & 3u;
    return i32(lo | (hi << 4u)) - 32;
}

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let e = 4u * i;
    let h = e >> 7u;
    let j = (e >> 5u) & 3u;
    let l = e & 31u;
    let lo = bytes4(w[b + 8u + ((32u * h + l) >> 2u)] >> (2u * j)) & vec4<u32>(3u);
    let hi = bytes4(w[b + (l >> 2u)] >> (4u * h + j)) & vec4<u32>(1u);
    let q = vec4<f32>(lo) - select(vec4<f32>(4.0), vec4<f32>(0.0), hi == vec4<u32>(1u));
    let d = unpack2x16float(w[b + 27u]).x;
    return (d * f32(q3_k_scale(b, e >> 4u))) * q;
}
