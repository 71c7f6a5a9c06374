// F32 weights: one word per value; rows padded to whole words (no padding needed).
// A "block" here is 4 values, so dq4(b, 0) reads words b..b+3.
// Interface of every quant/*.wgsl snippet (the kernel declares `w: array<u32>`):
//   BLOCK_ELEMS  values per block        BLOCK_WORDS  u32 words per (repacked) block
//   dq4(b, i)    values 4i..4i+3 of the block whose first word is w[b], as f32
const BLOCK_ELEMS: u32 = 4u;
const BLOCK_WORDS: u32 = 4u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    return vec4<f32>(bitcast<f32>(w[b]), bitcast<f32>(w[b + 1u]), bitcast<f32>(w[b + 2u]), bitcast<f32>(w[b + 3u]));
}
