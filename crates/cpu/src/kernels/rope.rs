//! Rotary position embedding of one row of heads.

use kindling_model::{RopeConfig, RopeStyle};

/// Rotates the first `n_rot` dims of each of `heads` heads in `row` by position `pos`
/// (angles from `RopeConfig::cos_sin`, shared with the GPU backend's tables).
pub fn rope_row(
    row: &mut [f32],
    heads: usize,
    head_dim: usize,
    pos: usize,
    rope: &RopeConfig,
    freq_factors: Option<&[f32]>,
) {
    let half = rope.n_rot / 2;
    for i in 0..half {
        let (cos, sin) = rope.cos_sin(pos, i, freq_factors.and_then(|f| f.get(i).copied()));
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
        let cfg = RopeConfig { style: RopeStyle::Neox, n_rot: 4, base: 10000.0, freq_scale: 1.0, attn_factor: 1.0 };
        let mut row = vec![1.0, 2.0, 3.0, 4.0];
        rope_row(&mut row, 1, 4, 0, &cfg, None);
        assert_eq!(row, vec![1.0, 2.0, 3.0, 4.0]);
        rope_row(&mut row, 1, 4, 17, &cfg, None);
        let norm: f32 = row.iter().map(|v| v * v).sum();
        assert!((norm - 30.0).abs() < 1e-4);
    }
}
