// Q8_K, 256 values, 292 bytes (73 words, stored as in GGUF):
//   word 0        d (f32)
//   words 1..64   qs[256] i8, value e = byte e
//   words 65..72  bsums (unused here)
// y = d * q
const BLOCK_ELEMS: u32 = 256u;
const BLOCK_WORDS: u32 = 73u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let d = bitcast<f32>(w[b]);
    let q = bitcast<vec4<i32>>(bytes4(w[b + 1u + i]) << vec4<u32>(24u)) >> vec4<u32>(24u);
    return d * vec4<f32>(q);
}
