//! Grouped-query attention over the KV cache: causal (decoders) or over the whole
//! batch (encoders).

use kindling_model::AttentionParams;

use super::dot;
use crate::parallel;

/// `q`: `[n, heads × head_dim]` for positions `start..start + n`; `k`, `v`: the cache
/// up to the end of this batch, `[start + n, width]` with `width = kv_heads ×
/// head_dim`, already holding the batch's rows; `out`: `[n, heads × head_dim]`. Causal: row r attends to positions
/// `lo..=start + r`, where `lo` honours the sliding window; not causal: every row
/// attends to `0..start + n`. Rows are split over threads (each row's sums are in a
/// fixed order, so the result does not depend on the thread count).
#[allow(clippy::too_many_arguments)]
pub fn attention(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    width: usize,
    start: usize,
    n: usize,
    p: &AttentionParams,
    out: &mut [f32],
) {
    let q_cols = p.head_count * p.head_dim;
    // Below this many score-times-value products a row band stays on one thread.
    let per_row = (start + n) * q_cols;
    let min_rows = (1 << 16) / per_row.max(1) + 1;
    if parallel::threads() == 1 || n < 2 * min_rows {
        rows(q, k, v, width, start, 0..n, p, out);
        return;
    }
    let bands = parallel::map_ranges(n, min_rows, |a, b| {
        let mut band = vec![0.0f32; (b - a) * q_cols];
        rows(&q[a * q_cols..b * q_cols], k, v, width, start, a..b, p, &mut band);
        (a, band)
    });
    for (a, band) in bands {
        out[a * q_cols..a * q_cols + band.len()].copy_from_slice(&band);
    }
}

/// Rows `band` of the batch (`q` and `out` hold just the band's rows).
#[allow(clippy::too_many_arguments)]
fn rows(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    width: usize,
    start: usize,
    band: std::ops::Range<usize>,
    p: &AttentionParams,
    out: &mut [f32],
) {
    let hd = p.head_dim;
    let q_cols = p.head_count * hd;
    let group = p.head_count / p.head_count_kv;
    // Not causal: every position up to the end of the batch (where `k` ends).
    let cache_end = k.len() / width.max(1);
    let mut scores = Vec::new();
    for (r, row) in band.enumerate() {
        let pos = start + row;
        let (lo, hi) = if p.causal {
            (p.sliding_window.map_or(0, |w| (pos + 1).saturating_sub(w)), pos + 1)
        } else {
            (0, cache_end.max(pos + 1))
        };
        for h in 0..p.head_count {
            let kvh = h / group;
            let qh = &q[r * q_cols + h * hd..r * q_cols + (h + 1) * hd];
            scores.clear();
            scores.extend((lo..hi).map(|t| p.scale * dot(qh, &k[t * width + kvh * hd..t * width + (kvh + 1) * hd])));
            if let Some(cap) = p.softcap {
                scores.iter_mut().for_each(|s| *s = cap * (*s / cap).tanh());
            }
            let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0f32;
            for s in scores.iter_mut() {
                *s = (*s - max).exp();
                sum += *s;
            }
            let o = &mut out[r * q_cols + h * hd..r * q_cols + (h + 1) * hd];
            o.fill(0.0);
            for (i, t) in (lo..hi).enumerate() {
                let a = scores[i] / sum;
                let vt = &v[t * width + kvh * hd..t * width + (kvh + 1) * hd];
                for (oi, &vi) in o.iter_mut().zip(vt) {
                    *oi += a * vi;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_position_returns_its_value_and_window_limits_history() {
        let p = AttentionParams {
            head_count: 2,
            head_count_kv: 1,
            head_dim: 2,
            scale: 1.0,
            sliding_window: Some(1),
            softcap: None,
            causal: true,
        };
        // Two cached positions; with a window of 1 each row sees only itself.
        let k = vec![1.0, 0.0, 0.0, 1.0];
        let v = vec![5.0, 6.0, 7.0, 8.0];
        let q = vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let mut out = vec![0.0; 8];
        attention(&q, &k, &v, 2, 0, 2, &p, &mut out);
        assert_eq!(out, vec![5.0, 6.0, 5.0, 6.0, 7.0, 8.0, 7.0, 8.0]);
    }

    #[test]
    fn non_causal_rows_see_the_whole_batch() {
        let p = AttentionParams {
            head_count: 1,
            head_count_kv: 1,
            head_dim: 2,
            scale: 1.0,
            sliding_window: None,
            softcap: None,
            causal: false,
        };
        // Keys [1, 0] and [0, 1], values 10 and 20: q = [0, 0] weighs them equally, in
        // the first row too (a causal row 0 would see only the first value).
        let k = vec![1.0, 0.0, 0.0, 1.0];
        let v = vec![10.0, 10.0, 20.0, 20.0];
        let q = vec![0.0, 0.0, 0.0, 50.0];
        let mut out = vec![0.0; 4];
        attention(&q, &k, &v, 2, 0, 2, &p, &mut out);
        assert_eq!(&out[..2], &[15.0, 15.0]);
        assert!((out[2] - 20.0).abs() < 1e-4, "{out:?}");
        // Threads or not, the same rows give the same values.
        let n = 300;
        let q: Vec<f32> = (0..n * 2).map(|i| ((i * 7 % 13) as f32 - 6.0) / 3.0).collect();
        let k: Vec<f32> = (0..n * 2).map(|i| ((i * 5 % 11) as f32 - 5.0) / 3.0).collect();
        let v: Vec<f32> = (0..n * 2).map(|i| (i % 17) as f32).collect();
        let mut all = vec![0.0; n * 2];
        attention(&q, &k, &v, 2, 0, n, &p, &mut all);
        let mut one = vec![0.0; n * 2];
        rows(&q, &k, &v, 2, 0, 0..n, &p, &mut one);
        assert_eq!(all, one);
    }
}
