// The packed 6-bit scales and mins shared by Q4_K and Q5_K (prepended to their
// snippets): 12 bytes starting at word 1 of the block.

// Byte n of the 12 packed scale bytes, which start at word `first` of the block.
fn k_scale_byte(b: u32, first: u32, n: u32) -> u32 {
    return byte_of(w[b + first + (n >> 2u)], n & 3u);
}

// (scale, min) of 32-value group g (ggml's get_scale_min_k4).
fn k4_scale_min(b: u32, g: u32) -> vec2<u32> {
    if (g < 4u) {
        return vec2<u32>(k_scale_byte(b, 1u, g) & 63u, k_scale_byte(b, 1u, g + 4u) & 63u);
    }
    let s = k_scale_byte(b, 1u, g + 4u);
    let sc = (s & 0xfu) | ((k_scale_byte(b, 1u, g - 4u) >> 6u) << 4u);
    let m = (s >> 4u) | ((k_scale_byte(b, 1u, g) >> 6u) << 4u);
    return vec2<u32>(sc, m);
}
