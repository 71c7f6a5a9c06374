// Reading the KV cache as f32 (prepended to the attention family; kv_read_f16.wgsl is
// the half-size twin, kv_write_*.wgsl the writing side). Elements are addressed by
// their index in the cache, row-major [capacity, width].

// kc, vc: the layer's k and v cache.
@group(0) @binding(3) var<storage, read> kc: array<f32>;
@group(0) @binding(4) var<storage, read> vc: array<f32>;

fn k_at(e: u32) -> f32 {
    return kc[e];
}

fn v_at(e: u32) -> f32 {
    return vc[e];
}
