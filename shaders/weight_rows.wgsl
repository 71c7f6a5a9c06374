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

// Piece pc of weight row `row` (its values 32pc..32pc+31, dequantized by the type's
// dq32 with one decode of the block's scales) · the input at the same values (in4).
// The piece's vec4s are in the type's order, piece_at() says where each starts.
fn piece_dot(row: u32, pc: u32) -> f32 {
    let per = max(BLOCK_ELEMS / 32u, 1u);
    let t = pc % per;
    let e0 = (pc / per) * BLOCK_ELEMS;
    let v = dq32(row * p.row_words + (pc / per) * BLOCK_WORDS, t);
    let a = dot(v[0], in4(e0 + piece_at(t, 0u))) + dot(v[1], in4(e0 + piece_at(t, 1u)))
        + dot(v[2], in4(e0 + piece_at(t, 2u))) + dot(v[3], in4(e0 + piece_at(t, 3u)));
    let b = dot(v[4], in4(e0 + piece_at(t, 4u))) + dot(v[5], in4(e0 + piece_at(t, 5u)))
        + dot(v[6], in4(e0 + piece_at(t, 6u))) + dot(v[7], in4(e0 + piece_at(t, 7u)));
    return a + b;
}

// Row `row` of the weight · the input, this lane's share of it (by32() in matmul.wgsl):
// pieces lane, lane + p.lanes, ..., so consecutive lanes read consecutive words of a
// block. Two pieces a step with their loads issued together: a lane's loop is a chain
// of memory round trips.
fn row_dot32(row: u32, lane: u32) -> f32 {
    let n32 = p.k / 32u;
    var a = 0.0;
    var c = lane;
    for (; c + p.lanes < n32; c += 2u * p.lanes) {
        a += piece_dot(row, c) + piece_dot(row, c + p.lanes);
    }
    if (c < n32) {
        a += piece_dot(row, c);
    }
    return a;
}
