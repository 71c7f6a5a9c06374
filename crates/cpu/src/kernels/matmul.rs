//! Matrix × quantized weight: `out[r][j] = W[j] · x[r]`.

use kindling_gguf::GgmlType;

use crate::parallel;

/// `x`: `[n, cols]`; `w`: `rows` rows of `cols` values in GGUF type `ty`;
/// `out`: `[n, rows]`. Each weight row is dequantized once into a scratch row and
/// dotted with every input row, so a prompt batch pays the dequantization once.
pub fn matmul(x: &[f32], n: usize, ty: GgmlType, w: &[u8], rows: usize, cols: usize, out: &mut [f32]) {
    let row_bytes = w.len() / rows.max(1);
    // Each thread computes a band of output columns for every input row.
    let bands = parallel::map_ranges(rows, 64, |a, b| {
        let mut scratch = vec![0.0f32; cols];
        let mut band = vec![0.0f32; n * (b - a)];
        for j in a..b {
            let row = &w[j * row_bytes..(j + 1) * row_bytes];
            if kindling_gguf::dequantize(ty, row, &mut scratch).is_err() {
                scratch.fill(f32::NAN); // unreachable: the loader checked the sizes
            }
            for r in 0..n {
                band[r * (b - a) + (j - a)] = dot(&scratch, &x[r * cols..(r + 1) * cols]);
            }
        }
        (a, b, band)
    });
    for (a, b, band) in bands {
        let width = b - a;
        for r in 0..n {
            out[r * rows + a..r * rows + b].copy_from_slice(&band[r * width..(r + 1) * width]);
        }
    }
}

/// Dot product in 32 independent lanes: eight 4-wide vector accumulators keep the
/// adder pipeline full (two would leave it waiting on its own latency). The summation
/// order is fixed, so results do not depend on the caller.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 32;
    let mut acc = [0.0f32; LANES];
    let ca = a.chunks_exact(LANES);
    let cb = b.chunks_exact(LANES);
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for i in 0..width {
            acc[i] += acc[i + width];
        }
    }
    acc[0] + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_matmul_matches_naive() {
        let (n, rows, cols) = (3, 5, 37);
        let x: Vec<f32> = (0..n * cols).map(|i| ((i * 7 % 13) as f32 - 6.0) / 4.0).collect();
        let wf: Vec<f32> = (0..rows * cols).map(|i| ((i * 5 % 11) as f32 - 5.0) / 3.0).collect();
        let w: Vec<u8> = wf.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = vec![0.0; n * rows];
        matmul(&x, n, GgmlType::F32, &w, rows, cols, &mut out);
        for r in 0..n {
            for j in 0..rows {
                let want: f32 = (0..cols).map(|c| x[r * cols + c] * wf[j * cols + c]).sum();
                assert!((out[r * rows + j] - want).abs() < 1e-4, "{r} {j}");
            }
        }
    }
}
