// Writing the KV cache as f32 (prepended to the attention and rope families);
// see kv_read_f32.wgsl (the same buffers, as vec4s).

// kw, vw: the cache written by kv_store and qk_rope.
@group(0) @binding(9) var<storage, read_write> kw: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> vw: array<vec4<f32>>;

// Writes elements e (even) and, with `both`, e + 1 of the k and v caches (one vec4).
fn kv_put2(e: u32, k: vec2<f32>, v: vec2<f32>, both: bool) {
    let at = e >> 2u;
    let c = e & 3u;
    kw[at][c] = k.x;
    vw[at][c] = v.x;
    if (both) {
        kw[at][c + 1u] = k.y;
        vw[at][c + 1u] = v.y;
    }
}
