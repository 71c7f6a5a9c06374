// Reading the KV cache as f16, two values per u32 (unpack2x16float: core WGSL, no
// shader-f16 needed): half the memory and bandwidth of kv_read_f32.wgsl. The host
// uses it only for even cache widths and head sizes, so a pair never straddles heads.
// The buffers are whole vec2<u32>s (four values; the host rounds their size up), so
// four values at an index that is a multiple of 4 are one load (k4_at, v4_at).

// kc, vc: the layer's k and v cache, [capacity × width / 4] pairs of words.
@group(0) @binding(3) var<storage, read> kc: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> vc: array<vec2<u32>>;

fn k_at(e: u32) -> f32 {
    return unpack2x16float(kc[e >> 2u][(e >> 1u) & 1u])[e & 1u];
}

fn v_at(e: u32) -> f32 {
    return unpack2x16float(vc[e >> 2u][(e >> 1u) & 1u])[e & 1u];
}

// Elements e..e + 3, e a multiple of 4.
fn k4_at(e: u32) -> vec4<f32> {
    let w = kc[e >> 2u];
    return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
}

fn v4_at(e: u32) -> vec4<f32> {
    let w = vc[e >> 2u];
    return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
}
