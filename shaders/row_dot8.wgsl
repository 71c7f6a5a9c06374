// Appended to the matmul family three times (shaders.rs): as written, over w, and with
// dq8 and row_dot8 renamed dq8_2/row_dot8_2 (over w2) and dq8_3/row_dot8_3 (over w3),
// so each kernel binds only the weights it reads.

// Row `row` of the weight · the input, this lane's share of it (by8() in matmul.wgsl).
// Four chunks a step with their loads issued together: a lane's loop is a chain of
// memory round trips, and one chunk a step left the decode matvecs bound by that
// latency.
fn row_dot8(row: u32, lane: u32) -> f32 {
    let n8 = p.k / 8u;
    var a = 0.0;
    var c = lane;
    for (; c + 3u * p.lanes < n8; c += 4u * p.lanes) {
        let v0 = dq8(chunk_block(row, c), chunk_index(c));
        let v1 = dq8(chunk_block(row, c + p.lanes), chunk_index(c + p.lanes));
        let v2 = dq8(chunk_block(row, c + 2u * p.lanes), chunk_index(c + 2u * p.lanes));
        let v3 = dq8(chunk_block(row, c + 3u * p.lanes), chunk_index(c + 3u * p.lanes));
        a += dot8(v0, in8(c)) + dot8(v1, in8(c + p.lanes)) + dot8(v2, in8(c + 2u * p.lanes)) + dot8(v3, in8(c + 3u * p.lanes));
    }
    for (; c < n8; c += p.lanes) {
        a += dot8(dq8(chunk_block(row, c), chunk_index(c)), in8(c));
    }
    return a;
}
