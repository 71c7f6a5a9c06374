//! Rotary position embedding of one row of heads.

use kindling_model::{RopeConfig, RopeStyle};

/// Rotates the first `n_rot` dims of each of `heads` heads in `row` by position `pos`.
/// Angles are computed in f64: exact enough that long positions stay accurate.
pub fn rope_row(row: &mut [f32], heads: usize, head_dim: usize, pos: usize, rope: &RopeConfig, freq_factors: Option<&[f32]>) {
    let half = rope.n_rot / 2;
    let p = pos as f64 * rope.freq_scale as f64;
    for i in 0..half {
        let mut theta = p * (rope.base as f64).powf(-2.0 * i as f64 / rope.n_rot as f64);
        if let Some(ff) = freq_factors.and_then(|f| f.get(i)) {
            theta /= *ff as f64;
        }
        let (sin, cos) = theta.sin_cos();
        let (sin, cos) = (sin as f32, cos as f32);
        let (a, b) = match rope.style {
            RopeStyle::Normal => (2 * i, 2 * i + 1),
            RopeStyle::Neox => (i, i + half),
        };
        for h in 0..heads {
            let base = h * head_dim;
            let (x0, x1) = (row[base + a], row[base + b]);
            row[base + a] = x0 * cos - x1 * sin;
            row[base + b] = x0 * sin + x1 * cos;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_zero_is_identity_and_norm_is_kept() {
        let cfg = RopeConfig { style: RopeStyle::Neox, n_rot: 4, base: 10000.0, freq_scale: 1.0 };
        let mut row = vec![1.0, 2.0, 3.0, 4.0];
        rope_row(&mut row, 1, 4, 0, &cfg, None);
        assert_eq!(row, vec![1.0, 2.0, 3.0, 4.0]);
        rope_row(&mut row, 1, 4, 17, &cfg, None);
        let norm: f32 = row.iter().map(|v| v * v).sum();
        assert!((norm - 30.0).abs() < 1e-4);
    }
}
