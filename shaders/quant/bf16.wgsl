// BF16 weights: two values per word (low half first); a bf16 is the top half of an f32.
const BLOCK_ELEMS: u32 = 4u;
const BLOCK_WORDS: u32 = 2u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let a = w[b];
    let c = w[b + 1u];
    return vec4<f32>(bitcast<f32>(a << 16u), bitcast<f32>(a & 0xffff0000u),
                     bitcast<f32>(c << 16u), bitcast<f32>(c & 0xffff0000u));
}
