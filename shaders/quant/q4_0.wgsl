// Q4_0, 32 values, repacked from 18 to 20 bytes (5 words):
//   word 0      d (f16, low half; high half padding)
//   words 1..4  qs[16]: byte j = value j (low nibble) | value j+16 (high nibble)
// y = (q - 8) * d
const BLOCK_ELEMS: u32 = 32u;
const BLOCK_WORDS: u32 = 5u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let d = unpack2x16float(w[b]).x;
    let q = w[b + 1u + (i & 3u)] >> (4u * (i >> 2u));
    return (vec4<f32>(bytes4(q) & vec4<u32>(0xfu)) - 8.0) * d;
}
