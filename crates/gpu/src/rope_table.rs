//! The (cos, sin) tables a batch's RoPE dispatches read from the parameter blob.

use std::sync::Arc;

use kindling_model::RopeConfig;

use crate::pipelines::BufId;
#[cfg(not(target_arch = "wasm32"))]
use crate::tuning::ROPE_ROWS_PER_THREAD;

/// A RoPE table: (config, frequency-factor buffer, first position (of a packed batch:
/// first row), rows).
pub(crate) type RopeTableKey = (RopeConfig, Option<BufId>, usize, usize);

/// One of a batch's RoPE tables. Its values are kept across the batch's submissions: a
/// prompt chunk submitted in parts needs the table in every part's parameter blob, and a
/// 2,048-row table is 131,072 angles in f64 (recomputed per part, 5.5–8 ms of host time
/// each on the H200's host: bench/results/prefill-batch-h200.md, call 5).
pub(crate) struct BatchRopeTable {
    pub key: RopeTableKey,
    pub values: Arc<[f32]>,
    /// Where the current submission's blob holds it; None until it is written there.
    pub offset: Option<u32>,
}

/// (cos, sin) of every pair of rows at `positions`, exactly as the CPU backend computes
/// them (`RopeConfig::cos_sin`). Natively a long batch's rows are shared among threads:
/// a 2,048-row table is 131,072 angles in f64, ~3.3 ms on one core of the H200's host,
/// all of it before the device gets the prompt's first layer (prefill-batch-h200.md).
pub(crate) fn rope_table(rope: &RopeConfig, freq_factors: Option<&[f32]>, positions: &[usize]) -> Vec<f32> {
    let pairs: Vec<(f64, Option<f32>)> =
        (0..rope.n_rot / 2).map(|i| (rope.pair_frequency(i), freq_factors.and_then(|f| f.get(i).copied()))).collect();
    let row_len = 2 * pairs.len();
    let fill = |positions: &[usize], out: &mut [f32]| {
        for (&pos, row) in positions.iter().zip(out.chunks_exact_mut(row_len)) {
            for (&(frequency, factor), pair) in pairs.iter().zip(row.chunks_exact_mut(2)) {
                let (cos, sin) = rope.cos_sin_at(pos, frequency, factor);
                pair.copy_from_slice(&[cos, sin]);
            }
        }
    };
    let mut out = vec![0.0; positions.len() * row_len];
    #[cfg(not(target_arch = "wasm32"))]
    {
        // (A decode step's one row asks nothing of the system.)
        let most = positions.len() / ROPE_ROWS_PER_THREAD;
        let threads = if most > 1 { std::thread::available_parallelism().map_or(1, |n| n.get()).min(most) } else { 1 };
        if threads > 1 && row_len > 0 {
            let per = positions.len().div_ceil(threads);
            std::thread::scope(|scope| {
                for (rows, part) in positions.chunks(per).zip(out.chunks_mut(per * row_len)) {
                    scope.spawn(move || fill(rows, part));
                }
            });
            return out;
        }
    }
    fill(positions, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use kindling_model::RopeStyle;

    use super::*;

    /// Every pair is `cos_sin`'s, bit for bit, whether one thread or several made the
    /// table (1,000 rows: several wherever the machine has two cores).
    #[test]
    fn tables_hold_cos_sin_exactly_on_any_number_of_threads() {
        let rope = RopeConfig { style: RopeStyle::Neox, n_rot: 8, base: 1e6, freq_scale: 0.5, attn_factor: 1.2 };
        let factors = [1.0f32, 2.0, 4.0, 8.0];
        for (rows, f) in [(3, None), (1000, None), (1000, Some(&factors[..]))] {
            let positions: Vec<usize> = (0..rows).map(|r| 4000 + 3 * r).collect();
            let table = rope_table(&rope, f, &positions);
            assert_eq!(table.len(), rows * 8);
            for (r, &pos) in positions.iter().enumerate() {
                for i in 0..4 {
                    let (cos, sin) = rope.cos_sin(pos, i, f.map(|f| f[i]));
                    assert_eq!((table[r * 8 + 2 * i], table[r * 8 + 2 * i + 1]), (cos, sin), "row {r} pair {i}");
                }
            }
        }
    }
}
