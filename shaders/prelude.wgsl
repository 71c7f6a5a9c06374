// Shared by every kernel. The source of a kernel is assembled in
// crates/gpu/src/shaders.rs as:
//   struct Params { .. }   generated from the kernel family's Rust struct (params.rs),
//                          so the uniform layout cannot drift from the host side
//   prelude.wgsl           (this file)
//   quant/<type>.wgsl      only for kernels that read a weight (`dq4`, BLOCK_*)
//   <family>.wgsl          the kernel's bindings and entry points
// so the family files are not valid WGSL on their own: validate the assembled sources
// (tests/gpu_kernels.rs runs every variant through naga and tint).

// Index of this workgroup in a dispatch folded over a 2-D grid (x ≤ 65535 per
// dimension; the host folds wide dispatches into y). Uniform across the workgroup.
fn wg_linear(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.x + wid.y * nwg.x;
}

// Byte `k` (0..3) of a little-endian word.
fn byte_of(word: u32, k: u32) -> u32 {
    return (word >> (8u * k)) & 0xffu;
}

// The four bytes of a word as lanes (low byte first), unmasked above bit 7 of each lane
// only after `& mask`.
fn bytes4(word: u32) -> vec4<u32> {
    return vec4<u32>(word, word >> 8u, word >> 16u, word >> 24u);
}

// A large negative finite value standing in for -inf (WGSL implementations may not
// support infinities).
const NEG_BIG: f32 = -3.0e38;

// tanh to about an ulp everywhere (Cephes' tanhf): builtin tanh loses relative
// precision near 0 on some implementations and may overflow to NaN for large |v|.
fn tanh_safe(v: f32) -> f32 {
    let a = abs(v);
    if (a < 0.625) {
        let s = v * v;
        return ((((-5.70498872745e-3 * s + 2.06390887954e-2) * s - 5.37397155531e-2) * s
            + 1.33314422036e-1) * s - 3.33332819422e-1) * s * v + v;
    }
    if (a > 10.0) {
        return sign(v);
    }
    return sign(v) * (1.0 - 2.0 / (exp(2.0 * a) + 1.0));
}

// act(g) * u: act 0 SiLU, 1 GELU-tanh (elementwise `gated` and matmul `matvec_gated`).
fn gated_act(g: f32, u: f32, act: u32) -> f32 {
    if (act == 0u) {
        return g / (1.0 + exp(-g)) * u;
    }
    let inner = 0.7978846 * (g + 0.044715 * g * g * g);
    return 0.5 * g * (1.0 + tanh_safe(inner)) * u;
}

// Integers to f32 without an int-to-float conversion (a quarter-rate instruction on
// NVIDIA GPUs, and the dequantizing kernels convert every value): an integer below 2^23
// under the exponent of 2^23 is the float 2^23 + q, so subtracting 2^23 leaves q, exactly.
fn u2f(q: vec4<u32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(q | vec4<u32>(0x4B000000u)) - vec4<f32>(8388608.0);
}

// The four signed bytes of a word as f32 (biased by 128 into 0..255, converted as
// above, the bias taken off in the same subtraction).
fn i8x4(word: u32) -> vec4<f32> {
    let q = (bytes4(word) & vec4<u32>(0xffu)) ^ vec4<u32>(0x80u);
    return bitcast<vec4<f32>>(q | vec4<u32>(0x4B000000u)) - vec4<f32>(8388736.0);
}
