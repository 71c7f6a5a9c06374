// Q5_0, 32 values, repacked from 22 to 24 bytes (6 words):
//   word 0      d (f16, low half; high half padding)
//   word 1      qh: bit e = 5th bit of value e
//   words 2..5  qs[16]: low 4 bits, byte j = value j (low nibble) | value j+16 (high)
// y = ((lo4 | hbit << 4) - 16) * d
const BLOCK_ELEMS: u32 = 32u;
const BLOCK_WORDS: u32 = 6u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let d = unpack2x16float(w[b]).x;
    let q = w[b + 2u + (i & 3u)] >> (4u * (i >> 2u));
    let hb = w[b + 1u] >> (4u * i);
    let h = vec4<u32>(hb, hb >> 1u, hb >> 2u, hb >> 3u) & vec4<u32>(1u);
    let v = (bytes4(q) & vec4<u32>(0xfu)) | (h << vec4<u32>(4u));
    return (vec4<f32>(v) - 16.0) * d;
}
