// Reading the KV cache as f16, two values per u32 (unpack2x16float: core WGSL, no
// shader-f16 needed): half the memory and bandwidth of kv_read_f32.wgsl. The host
// uses it only for even cache widths and head sizes, so a pair never straddles heads.

// kc, vc: the layer's k and v cache, [capacity, width / 2] words.
@group(0) @binding(3) var<storage, read> kc: array<u32>;
@group(0) @binding(4) var<storage, read> vc: array<u32>;

fn k_at(e: u32) -> f32 {
    return unpack2x16float(kc[e >> 1u])[e & 1u];
}

fn v_at(e: u32) -> f32 {
    return unpack2x16float(vc[e >> 1u])[e & 1u];
}
