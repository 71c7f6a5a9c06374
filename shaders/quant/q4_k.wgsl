// Q4_K, 256 values, 144 bytes (36 words, stored as in GGUF):
//   word 0        d (f16, low half) | dmin (f16, high half)
//   words 1..3    scales[12]: eight packed 6-bit scales and mins (see k4_scale_min)
//   words 4..35   qs[128]: chunk c (64 values) uses qs[32c..32c+32]:
//                 value 64c + l = low nibble (group 2c), 64c + 32 + l = high (group 2c+1)
// y = (d * scale_g) * q - dmin * min_g,  g = value / 32 (k4_scale_min: k4_scales.wgsl)
const BLOCK_ELEMS: u32 = 256u;
const BLOCK_WORDS: u32 = 36u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let e = 4u * i;
    let c = e >> 6u;
    let g = e >> 5u;
    let l = e & 31u;
    let q = bytes4(w[b + 4u + ((32u * c + l) >> 2u)] >> (4u * (g & 1u))) & vec4<u32>(0xfu);
    let dm = unpack2x16float(w[b]);
    let sm = k4_scale_min(w[b + 1u], w[b + 2u], w[b + 3u], g);
    return (dm.x * f32(sm.x)) * vec4<f32>(q) - dm.y * f32(sm.y);
}

// Values 8i..8i+7 (one group: one decode of its scale and min for all eight).
fn dq8(b: u32, i: u32) -> mat2x4<f32> {
    let e = 8u * i;
    let g = e >> 5u;
    let at = b + 4u + ((32u * (e >> 6u) + (e & 31u)) >> 2u);
    let sh = 4u * (g & 1u);
    let dm = unpack2x16float(w[b]);
    let sm = vec2<f32>(k4_scale_min(w[b + 1u], w[b + 2u], w[b + 3u], g));
    let d = dm.x * sm.x;
    let m = dm.y * sm.y;
    let mask = vec4<u32>(0xfu);
    return mat2x4<f32>(d * u2f(bytes4(w[at] >> sh) & mask) - m, d * u2f(bytes4(w[at + 1u] >> sh) & mask) - m);
}
