// The packed 6-bit scales and mins shared by Q4_K and Q5_K (prepended to their
// snippets, and to quant_int/q4_k.wgsl): 12 bytes in words 1..3 of the block, given as
// the three words s1, s2, s3.

// (scale, min) of 32-value group g (ggml's get_scale_min_k4), without a branch: the
// lanes of a decode matvec's row take different groups of a block, and a branch on
// g < 4 split them, issuing the two sides' loads one after the other. All three scale
// words are read (the row's lanes share them, one cached load each) and the two
// layouts picked by select.
//   g < 4:  scale = byte g & 63,  min = byte g+4 & 63
//   g >= 4: scale = (byte g+4 & 15) | (byte g-4 >> 6) << 4,  min = (byte g+4 >> 4) | (byte g >> 6) << 4
fn k4_scale_min(s1: u32, s2: u32, s3: u32, g: u32) -> vec2<u32> {
    let j = g & 3u;
    // Bytes j, j + 4 and j + 8 of the twelve.
    let lo = byte_of(s1, j);
    let mid = byte_of(s2, j);
    let hi = byte_of(s3, j);
    let first = vec2<u32>(lo & 63u, mid & 63u);
    let last = vec2<u32>((hi & 15u) | ((lo >> 6u) << 4u), (hi >> 4u) | ((mid >> 6u) << 4u));
    return select(last, first, g < 4u);
}
