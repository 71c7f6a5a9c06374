// Prepended to the matmul family for adapters without subgroups: sums through
// workgroup memory (shaders/reduce_sg.wgsl is the subgroup twin).

// The sum of `a` over the p.lanes invocations of a weight row, valid in its lane 0.
// Called in uniform control flow; begins with a barrier, so mv_red may be reused.
fn row_sum(lid: u32, lane: u32, a: f32) -> f32 {
    workgroupBarrier();
    mv_red[lid] = a;
    workgroupBarrier();
    for (var s = p.lanes / 2u; s > 0u; s >>= 1u) { // bounded in browsers
        if (lane < s) {
            mv_red[lid] += mv_red[lid + s];
        }
        workgroupBarrier();
    }
    return mv_red[lid];
}

// The sum of `v` over the whole workgroup, in every invocation.
fn wg_sum(lid: u32, v: f32) -> f32 {
    workgroupBarrier();
    mv_red[lid] = v;
    workgroupBarrier();
    for (var s = MV_WG / 2u; s > 0u; s >>= 1u) { // bounded in browsers
        if (lid < s) {
            mv_red[lid] += mv_red[lid + s];
        }
        workgroupBarrier();
    }
    return mv_red[0];
}
