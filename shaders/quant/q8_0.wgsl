// Q8_0, 32 values, repacked from 34 to 36 bytes (9 words):
//   word 0      d (f16, low half; high half padding)
//   words 1..8  qs[32] i8, value e = byte e
// y = q * d
const BLOCK_ELEMS: u32 = 32u;
const BLOCK_WORDS: u32 = 9u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let d = unpack2x16float(w[b]).x;
    let q = bitcast<vec4<i32>>(bytes4(w[b + 1u + i]) << vec4<u32>(24u)) >> vec4<u32>(24u);
    return vec4<f32>(q) * d;
}

// Values 8i..8i+7 with the scale read once.
fn dq8(b: u32, i: u32) -> mat2x4<f32> {
    let d = unpack2x16float(w[b]).x;
    return mat2x4<f32>(d * i8x4(w[b + 1u + 2u * i]), d * i8x4(w[b + 2u + 2u * i]));
}
