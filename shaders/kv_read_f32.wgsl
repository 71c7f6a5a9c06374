// Reading the KV cache as f32 (prepended to the attention family; kv_read_f16.wgsl is
// the half-size twin, kv_write_*.wgsl the writing side). Elements are addressed by
// their index in the cache, row-major [capacity, width]; the buffers are whole vec4s
// (the host rounds their size up), so four values at an index that is a multiple of 4
// are one load (k4_at, v4_at): a quarter of the load instructions of four k_at calls.

// kc, vc: the layer's k and v cache, [capacity × width / 4] vec4s.
@group(0) @binding(3) var<storage, read> kc: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> vc: array<vec4<f32>>;

fn k_at(e: u32) -> f32 {
    return kc[e >> 2u][e & 3u];
}

fn v_at(e: u32) -> f32 {
    return vc[e >> 2u][e & 3u];
}

// Elements e..e + 3, e a multiple of 4.
fn k4_at(e: u32) -> vec4<f32> {
    return kc[e >> 2u];
}

fn v4_at(e: u32) -> vec4<f32> {
    return vc[e >> 2u];
}
