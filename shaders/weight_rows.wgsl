// Reading one weight's rows (appended to the matmul family once per weight binding,
// shaders.rs): as written, over w, and over w2 and w3 with every name below, the
// type's dq4/dq8 and its BLOCK_* constants renamed `<name>_2` / `<name>_3` (the third
// weight reads its row width from p.row_words3: matvec_multi's v may be of another
// type than q and k). So each kernel binds only the weights it reads, and no function
// here is written out per weight.

// Values 4g..4g+3 of weight row `row` (zero past the row's end: only float types have
// rows that are not whole groups of 4).
fn w4(row: u32, e: u32) -> vec4<f32> {
    let v = dq4(row * p.row_words + (e / BLOCK_ELEMS) * BLOCK_WORDS, (e % BLOCK_ELEMS) / 4u);
    if (e + 4u <= p.k) {
        return v;
    }
    return select(vec4<f32>(0.0), v, vec4<u32>(e) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(p.k));
}

// First word of the block holding chunk c (values 8c..8c+7) of weight row `row`, and
// the chunk's index within that block.
fn chunk_block(row: u32, c: u32) -> u32 {
    return row * p.row_words + (8u * c / BLOCK_ELEMS) * BLOCK_WORDS;
}

fn chunk_index(c: u32) -> u32 {
    return c % max(BLOCK_ELEMS / 8u, 1u);
}

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
