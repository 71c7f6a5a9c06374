// Writing the KV cache as f16 pairs (prepended to the attention and rope families);
// see kv_read_f16.wgsl.

// kw, vw: the layer's k and v cache, [capacity, width / 2] words.
@group(0) @binding(9) var<storage, read_write> kw: array<u32>;
@group(0) @binding(10) var<storage, read_write> vw: array<u32>;

// Writes elements e (even) and e + 1 (`both` is always true here: widths are even).
fn kv_put2(e: u32, k: vec2<f32>, v: vec2<f32>, both: bool) {
    kw[e >> 1u] = pack2x16float(k);
    vw[e >> 1u] = pack2x16float(v);
}
