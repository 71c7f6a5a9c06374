// A matmul's outputs, written one value at a time: appended to the matmul family's
// modules and to the integer-dot batch module (shaders.rs), whose bodies declare p, out,
// res and out2 at the same bindings.

// Writes output (r, c) (c: column within the part), added into res where asked.
fn put(r: u32, c: u32, v: f32) {
    out[r * p.out_stride + p.out_offset + c] = v;
    if (p.res_add != 0u) {
        let at = r * p.res_stride + p.out_offset + c;
        res[at] = res[at] + v;
    }
}

// out[r, c] = v where c is within this part's rows (split: span `split`'s partial sums,
// out2[split][r][c]).
fn store1(r: u32, c: u32, v: f32, split: u32) {
    if (c < p.rows) {
        if (p.splits > 1u) {
            out2[(split * p.n + r) * p.rows + c] = v;
        } else {
            put(r, c, v);
        }
    }
}
