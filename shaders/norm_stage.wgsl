// Prepended to norm_in.wgsl for matvec_gated_normed (shaders.rs; the other fused-norm
// kernels get NO_STAGE there): the input row times the norm weight, staged in workgroup
// memory by in_scale where the row is whole vec4s of at most 4 × STAGE_VEC4 values and
// the workgroup has at least 8 rows (staged()). Every lane of every row of the
// workgroup reads it, and from global memory each read was two loads (the row and the
// weight) and a product. 8 KiB, with mv_red's 1 well within the 16 KiB of workgroup memory
// that WebGPU guarantees.
// Measured on the H100 (Qwen2.5-1.5B, --profile): the 16-row gate/up matvec 39 -> 36 µs
// a layer. Not for q/k/v (4 rows a workgroup, 64 lanes each: many short workgroups,
// each paying for the staging pass): staged, it read 19 -> 23 µs (against another
// call's base). The kernels that do not stage do not declare the array either
// (workgroup memory held for nothing). bench/results/h100-decode-staging-attention.md.
const STAGE_VEC4: u32 = 512u;
var<workgroup> xn: array<vec4<f32>, STAGE_VEC4>;

fn staged() -> bool {
    return p.k % 4u == 0u && p.k <= 4u * STAGE_VEC4 && p.lanes <= 32u;
}

fn xn_get(i: u32) -> vec4<f32> {
    return xn[i];
}

fn xn_put(i: u32, v: vec4<f32>) {
    xn[i] = v;
}
