// Prepended to the matmul family for its plain kernels: the input row as it is (see
// shaders/norm_in.wgsl for the normalising twin).

fn in4(e: u32) -> vec4<f32> {
    return x4(0u, e);
}

fn in_scale(lid: u32, first: bool) -> f32 {
    return 1.0;
}
