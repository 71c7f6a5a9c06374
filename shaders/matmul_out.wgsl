// A matmul's outputs, written one value at a time: appended to the matmul family's
// modules and to the integer-dot batch module (shaders.rs), whose bodies declare p, out,
// res and out2 at the same bindings. shaders.rs also sets MULTI in both: whether the
// module's matmul_tiled may be given several weights side by side (p.multi).

// Writes output (r, c) (c: column within the part), added into res where asked.
fn put(r: u32, c: u32, v: f32) {
    out[r * p.out_stride + p.out_offset + c] = v;
    if (p.res_add != 0u) {
        let at = r * p.res_stride + p.out_offset + c;
        res[at] = res[at] + v;
    }
}

// A matmul over several weights at once (p.multi: w, then w2, then w3, side by side as
// p.rows output columns): the weight of output column c (0, 1, 2) and its row there.
fn multi_row(c: u32) -> vec2<u32> {
    let first = p.rows - p.rows2 - p.rows3;
    if (c < first) {
        return vec2<u32>(0u, c);
    }
    if (c < first + p.rows2) {
        return vec2<u32>(1u, c - first);
    }
    return vec2<u32>(2u, c - first - p.rows2);
}

// Whether matmul_tiled's sums go to the partial sums (out2[split][r][c]) for a second
// dispatch: split into spans, or over several weights in the MULTI variant.
fn to_partials() -> bool {
    return p.splits > 1u || (MULTI && p.multi != 0u);
}

// out[r, c] = v where c is within this part's rows (to_partials: span `split`'s partial
// sums, out2[split][r][c]).
fn store1(r: u32, c: u32, v: f32, split: u32) {
    if (c < p.rows) {
        if (to_partials()) {
            out2[(split * p.n + r) * p.rows + c] = v;
        } else {
            put(r, c, v);
        }
    }
}
