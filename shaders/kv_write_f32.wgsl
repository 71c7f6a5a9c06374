// Writing the KV cache as f32 (prepended to the attention and rope families);
// see kv_read_f32.wgsl.

// kw, vw: the cache written by kv_store and qk_rope.
@group(0) @binding(9) var<storage, read_write> kw: array<f32>;
@group(0) @binding(10) var<storage, read_write> vw: array<f32>;

// Writes elements e (even) and, with `both`, e + 1 of the k and v caches.
fn kv_put2(e: u32, k: vec2<f32>, v: vec2<f32>, both: bool) {
    kw[e] = k.x;
    vw[e] = v.x;
    if (both) {
        kw[e + 1u] = k.y;
        vw[e + 1u] = v.y;
    }
}
