// Prepended to the matmul family where the adapter has subgroups of a fixed size
// SG (a constant the host prepends; a power of two) (native only: wgpu offers subgroups
// to WGSL natively):
// each subgroup sums in registers, then one pass over the few subgroup sums in
// workgroup memory, instead of a barrier per halving.

// A row's lanes are consecutive invocations: a butterfly over min(SG, p.lanes) of
// them, then (subgroups smaller than a row) the subgroups' sums through memory.
fn row_sum(lid: u32, lane: u32, a: f32) -> f32 {
    var v = a;
    for (var m = 1u; m < min(SG, p.lanes); m <<= 1u) {
        v += subgroupShuffleXor(v, m);
    }
    if (SG >= p.lanes) {
        return v;
    }
    workgroupBarrier();
    mv_red[lid] = v;
    workgroupBarrier();
    var t = 0.0;
    if (lane == 0u) {
        for (var j = 0u; j < p.lanes; j += SG) {
            t += mv_red[lid + j];
        }
    }
    return t;
}

fn wg_sum(lid: u32, v: f32) -> f32 {
    let s = subgroupAdd(v);
    workgroupBarrier();
    mv_red[lid] = s;
    workgroupBarrier();
    var t = 0.0;
    for (var j = 0u; j < MV_WG; j += SG) {
        t += mv_red[j];
    }
    return t;
}
