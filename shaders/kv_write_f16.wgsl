// Writing the KV cache as f16 pairs (prepended to the attention and rope families);
// see kv_read_f16.wgsl (the same buffers, as pairs of words).

// kw, vw: the layer's k and v cache, [capacity × width / 4] pairs of words.
@group(0) @binding(9) var<storage, read_write> kw: array<vec2<u32>>;
@group(0) @binding(10) var<storage, read_write> vw: array<vec2<u32>>;

// Writes elements e (even) and e + 1 (`both` is always true here: widths are even).
fn kv_put2(e: u32, k: vec2<f32>, v: vec2<f32>, both: bool) {
    let w = (e >> 1u) & 1u;
    kw[e >> 2u][w] = pack2x16float(k);
    vw[e >> 2u][w] = pack2x16float(v);
}
