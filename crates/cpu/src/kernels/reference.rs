//! The tests' f64 reference for a matmul.

/// Asserts that `out` (`[n, rows]`) is within `tolerance(Σ |x·w|)` of the f64 product of
/// `x` (`[n, cols]`) and the weights' exact values `w` (`[rows, cols]`), output by output.
pub fn assert_near_f64(
    x: &[f32],
    w: &[f32],
    out: &[f32],
    (n, rows, cols): (usize, usize, usize),
    tolerance: impl Fn(f64) -> f64,
    what: &str,
) {
    for r in 0..n {
        let xr = &x[r * cols..(r + 1) * cols];
        for j in 0..rows {
            let wr = &w[j * cols..(j + 1) * cols];
            let want: f64 = xr.iter().zip(wr).map(|(&a, &b)| f64::from(a) * f64::from(b)).sum();
            let mag: f64 = xr.iter().zip(wr).map(|(&a, &b)| (f64::from(a) * f64::from(b)).abs()).sum();
            let got = f64::from(out[r * rows + j]);
            assert!(
                (got - want).abs() <= tolerance(mag),
                "{what} {n}x{rows}x{cols} [{r}][{j}]: {got} vs {want} (Σ|xw| {mag})"
            );
        }
    }
}
