// Q4_K, 256 values, 144 bytes (36 words, stored as in GGUF):
//   word 0        d (f16, low half) | dmin (f16, high half)
//   words 1..3    scales[12]: eight packed 6-bit scales and mins (see k4_scale_min)
//   words 4..35   qs[128]: chunk c (64 values) uses qs[32c..32c+32]:
//                 value 64c + l = low nibble (group 2c), 64c + 32 + l = high (group 2c+1)
// y = (d * scale_g) * q - dmin * min_g,  g = value / 32
const BLOCK_ELEMS: u32 = 256u;
const BLOCK_WORDS: u32 = 36u;

// Byte n of the 12 packed scale bytes, which start at word `first` of the block.
fn k_scale_byte(b: u32, first: u32, n: u32) -> u32 {
    return byte_of(w[b + first + (n >> 2u)], n & 3u);
}

// (scale, min) of 32-value group g (ggml's get_scale_min_k4).
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
    let q = bytes4(w[b + 4u + ((32u * c + l) >> 2u)] >> (4u * (g & 1u))) & vec4<u32>(0xfu);
    let dm = unpack2x16float(w[b]);
    let sm = k4_scale_min(b, g);
    return (dm.x * f32(sm.x)) * vec4<f32>(q) - dm.y * f32(sm.y);
}
