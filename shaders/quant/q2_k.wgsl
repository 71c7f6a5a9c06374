// Q2_K, 256 values, 84 bytes (21 words, stored as in GGUF):
//   words 0..3    scales[16]: byte g = scale (low nibble) | min (high nibble) of group g (16 values)
//   words 4..19   qs[64]: value 128h + 32j + l is (qs[32h + l] >> 2j) & 3
//   word 20       d (f16, low half) | dmin (f16, high half)
// y = (d * scale_g) * q - dmin * min_g
const BLOCK_ELEMS: u32 = 256u;
const BLOCK_WORDS: u32 = 21u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let e = 4u * i;
    let h = e >> 7u;
    let j = (e >> 5u) & 3u;
    let l = e & 31u;
    let q = w[b + 4u + ((32u * h + l) >> 2u)] >> (2u * j);
    let g = e >> 4u;
    let sc = byte_of(w[b + (g >> 2u)], g & 3u);
    let dm = unpack2x16float(w[b + 20u]);
    let dl = dm.x * f32(sc & 0xfu);
    let ml = dm.y * f32(sc >> 4u);
    return dl * vec4<f32>(bytes4(q) & vec4<u32>(3u)) - ml;
}
