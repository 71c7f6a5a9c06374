//! Rotary position embedding: each row's (cos, sin) pairs, worked out once a batch,
//! and the rotation of one row of heads by them.

use kindling_model::{RopeConfig, RopeStyle};

use crate::parallel;

/// The (cos, sin) pairs of the current batch's rows, one table per rope setting, from
/// `RopeConfig::cos_sin` (shared with the GPU backend's tables). A pair is a `powf` and
/// a `sin_cos` in f64: SmolLM2's decode step had worked out its 32 pairs for q and for
/// k in each of 30 layers (1.9–2.4 µs a call on the GPU machine's Xeon, on one thread
/// while the others waited), the same 32 every time. The tables keep their storage
/// from batch to batch, so a decode step allocates nothing.
#[derive(Default)]
pub struct RopeAngles {
    tables: Vec<AngleTable>,
}

struct AngleTable {
    /// The setting the pairs are for; `None` once the batch has changed.
    key: Option<AngleKey>,
    /// `[rows][n_rot / 2]` pairs.
    pairs: Vec<(f32, f32)>,
}

/// A rope setting: its parameters and its frequency factors (by address, since they
/// are a weight, alive as long as the model).
#[derive(Clone, Copy, PartialEq)]
struct AngleKey {
    rope: RopeConfig,
    factors: Option<(usize, usize)>,
}

impl RopeAngles {
    /// A new batch: every table's positions have changed.
    pub fn forget(&mut self) {
        for t in &mut self.tables {
            t.key = None;
        }
    }

    /// The pairs of rows `0..rows` (`[rows][rope.n_rot / 2]`), row r at position
    /// `position(r)`: worked out on the first call of the batch for this setting, then
    /// read back.
    pub fn pairs(
        &mut self,
        rope: &RopeConfig,
        factors: Option<&[f32]>,
        rows: usize,
        position: impl Fn(usize) -> usize + Sync,
    ) -> &[(f32, f32)] {
        let key = AngleKey { rope: *rope, factors: factors.map(|f| (f.as_ptr() as usize, f.len())) };
        let half = rope.n_rot / 2;
        let found = self.tables.iter().position(|t| t.key == Some(key) && t.pairs.len() == rows * half);
        let i = match found {
            Some(i) => i,
            None => {
                let i = match self.tables.iter().position(|t| t.key.is_none()) {
                    Some(i) => i,
                    None => {
                        self.tables.push(AngleTable { key: None, pairs: Vec::new() });
                        self.tables.len() - 1
                    }
                };
                let t = &mut self.tables[i];
                t.pairs.resize(rows * half, (0.0, 0.0));
                // A prompt's rows shared over the threads.
                parallel::for_each_band(&mut t.pairs, half.max(1), 16, |r0, band| {
                    for (k, p) in band.iter_mut().enumerate() {
                        let (r, pair) = (r0 + k / half, k % half);
                        *p = rope.cos_sin(position(r), pair, factors.and_then(|f| f.get(pair).copied()));
                    }
                });
                t.key = Some(key);
                i
            }
        };
        &self.tables[i].pairs
    }
}

/// Rotates the first `n_rot` dims of each of `heads` heads in `row` by its pairs
/// (`pairs[i]`: the (cos, sin) of dimension pair i, `n_rot / 2` of them).
pub fn rope_row(row: &mut [f32], heads: usize, head_dim: usize, style: RopeStyle, pairs: &[(f32, f32)]) {
    let half = pairs.len();
    for (i, &(cos, sin)) in pairs.iter().enumerate() {
        let (a, b) = match style {
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
        let mut angles = RopeAngles::default();
        let mut row = vec![1.0, 2.0, 3.0, 4.0];
        rope_row(&mut row, 1, 4, cfg.style, angles.pairs(&cfg, None, 1, |_| 0));
        assert_eq!(row, vec![1.0, 2.0, 3.0, 4.0]);
        angles.forget();
        rope_row(&mut row, 1, 4, cfg.style, angles.pairs(&cfg, None, 1, |_| 17));
        let norm: f32 = row.iter().map(|v| v * v).sum();
        assert!((norm - 30.0).abs() < 1e-4);
    }

    /// Each setting has its own table, kept through the batch and worked out again after
    /// `forget`; every pair is `cos_sin`'s.
    #[test]
    fn tables_follow_the_setting_and_the_batch() {
        let a = RopeConfig { style: RopeStyle::Neox, n_rot: 8, base: 10000.0, freq_scale: 1.0, attn_factor: 1.0 };
        let b = RopeConfig { base: 1e6, ..a };
        let factors = [1.0f32, 2.0, 4.0, 8.0];
        let mut angles = RopeAngles::default();
        let check = |angles: &mut RopeAngles, cfg: &RopeConfig, f: Option<&[f32]>, start: usize| {
            let got = angles.pairs(cfg, f, 3, |r| start + r).to_vec();
            for r in 0..3 {
                for i in 0..4 {
                    assert_eq!(got[r * 4 + i], cfg.cos_sin(start + r, i, f.map(|f| f[i])), "row {r} pair {i}");
                }
            }
        };
        check(&mut angles, &a, None, 5);
        check(&mut angles, &b, None, 5);
        check(&mut angles, &a, Some(&factors), 5);
        assert_eq!(angles.tables.len(), 3);
        // Same batch: read back, even with another position function.
        assert_eq!(angles.pairs(&a, None, 3, |_| 999)[0], a.cos_sin(5, 0, None));
        angles.forget();
        check(&mut angles, &b, None, 40);
        check(&mut angles, &a, None, 41);
        assert_eq!(angles.tables.len(), 3);
    }
}
