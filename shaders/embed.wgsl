// Embedding lookup: out[r] = scale * dequant(table[tokens[r]]).
// `add_positions` (learned absolute positions, BERT): out[r] += dequant(table[start + r]),
// or in a packed batch (packed == 1) table[r - first row of r's sequence].
// One workgroup per batch row; dispatched once per part of a table split across
// buffers, each dispatch writing the rows whose table row falls in its part.
// Params: EmbedParams (crates/gpu/src/params.rs).

// Params: n (rows), cols (values per table row), row_words (u32 words per stored row),
// row0 / part_rows (table rows held by this part), total_rows, out_stride, scale,
// start (add_positions: the table row of batch row 0), packed (add_positions: 1 when
// the batch packs several sequences, whose positions each restart at 0).
@group(0) @binding(0) var<uniform> p: Params;
// tokens: [n] token ids of the batch (embed).
@group(0) @binding(1) var<storage, read> tokens: array<u32>;
// w: [part_rows, row_words] one part of the table, rows repacked to aligned blocks.
@group(0) @binding(2) var<storage, read> w: array<u32>;
// out: [n, out_stride] f32.
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
// spans: [n, 2] each row's sequence's rows, first and end (add_positions of a packed
// batch; written by begin_packed_batch).
@group(0) @binding(4) var<storage, read> spans: array<u32>;

const WG: u32 = 64u;

// Table row t (within this part) times p.scale into output row o, or added to it.
fn put_row(t: u32, o: u32, lid: u32, add: bool) {
    let base = (t - p.row0) * p.row_words;
    for (var e = 4u * lid; e < p.cols; e += 4u * WG) {
        let v = dq4(base + (e / BLOCK_ELEMS) * BLOCK_WORDS, (e % BLOCK_ELEMS) / 4u) * p.scale;
        for (var k = 0u; k < 4u; k++) {
            if (e + k < p.cols) {
                if (add) {
                    out[o + e + k] += v[k];
                } else {
                    out[o + e + k] = v[k];
                }
            }
        }
    }
}

// Whether table row t is held by this dispatch's part.
fn in_part(t: u32) -> bool {
    return t >= p.row0 && t < p.row0 + p.part_rows;
}

@compute @workgroup_size(64)
fn embed(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let r = wg_linear(wid, nwg);
    if (r >= p.n) {
        return;
    }
    let t = tokens[r];
    let o = r * p.out_stride;
    if (t >= p.total_rows) {
        // Unreachable through `Model::eval` (ids are checked); the first part zero-fills.
        if (p.row0 == 0u) {
            for (var c = lid; c < p.cols; c += WG) {
                out[o + c] = 0.0;
            }
        }
        return;
    }
    if (in_part(t)) {
        put_row(t, o, lid, false);
    }
}

// The host checks that the batch's positions fit the table.
@compute @workgroup_size(64)
fn add_positions(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
    let r = wg_linear(wid, nwg);
    if (r >= p.n) {
        return;
    }
    var t = p.start + r;
    if (p.packed != 0u) {
        t = r - spans[2u * r];
    }
    if (in_part(t)) {
        put_row(t, r * p.out_stride, lid, true);
    }
}
