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
