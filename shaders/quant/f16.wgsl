// F16 weights: two values per word (low half first), unpacked in registers so no
// shader-f16 is needed; each row starts on a word boundary (odd rows padded by 2 bytes).
const BLOCK_ELEMS: u32 = 4u;
const BLOCK_WORDS: u32 = 2u;

fn dq4(b: u32, i: u32) -> vec4<f32> {
    let lo = unpack2x16float(w[b]);
    let hi = unpack2x16float(w[b + 1u]);
    return vec4<f32>(lo.x, lo.y, hi.x, hi.y);
}
