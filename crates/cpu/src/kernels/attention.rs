//! Grouped-query attention over the KV cache: causal (decoders) or over the whole
//! batch (encoders), and in a packed batch of several sequences confined to each row's
//! own sequence.

use kindling_model::AttentionParams;

use super::dot;
use crate::parallel;

/// The batch's rows: `n` rows at cache positions `start..start + n`; in a packed batch
/// (`spans` not empty) row r's sequence is rows `spans[r][0]..spans[r][1]`.
#[derive(Clone, Copy)]
pub struct Rows<'a> {
    pub start: usize,
    pub n: usize,
    pub spans: &'a [[u32; 2]],
}

impl Rows<'_> {
    /// The cache positions row `row` attends to, `lo..hi`: causal, `lo..=start + row`
    /// where `lo` honours the sliding window; not causal, `0..start + n`; in a packed
    /// batch within the row's own sequence.
    fn range(&self, row: usize, p: &AttentionParams) -> (usize, usize) {
        let pos = self.start + row;
        let (mut lo, mut hi) = if p.causal {
            (p.sliding_window.map_or(0, |w| (pos + 1).saturating_sub(w)), pos + 1)
        } else {
            (0, self.start + self.n)
        };
        if let Some(&[first, end]) = self.spans.get(row) {
            lo = lo.max(self.start + first as usize);
            if !p.causal {
                hi = self.start + end as usize;
            }
        }
        (lo, hi)
    }
}

/// `q`: `[n, heads × head_dim]` for the batch's rows; `k`, `v`: the cache up to the end
/// of this batch, `[start + n, width]` with `width = kv_heads × head_dim`, already
/// holding the batch's rows; `out`: `[n, heads × head_dim]`. Each row attends to the
/// positions `Rows::range` gives. Rows are split over threads (each row's sums are in a
/// fixed order, so the result does not depend on the thread count).
pub fn attention(q: &[f32], k: &[f32], v: &[f32], width: usize, b: Rows, p: &AttentionParams, out: &mut [f32]) {
    let q_cols = p.head_count * p.head_dim;
    let n = b.n;
    // Below this many score-times-value products a row band stays on one thread.
    let per_row = (b.start + n) * q_cols;
    let min_rows = (1 << 16) / per_row.max(1) + 1;
    if parallel::threads() == 1 || n < 2 * min_rows {
        rows(q, k, v, width, b, 0..n, p, out);
        return;
    }
    let bands = parallel::map_ranges(n, min_rows, |lo, hi| {
        let mut band = vec![0.0f32; (hi - lo) * q_cols];
        rows(&q[lo * q_cols..hi * q_cols], k, v, width, b, lo..hi, p, &mut band);
        (lo, band)
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
    b: Rows,
    band: std::ops::Range<usize>,
    p: &AttentionParams,
    out: &mut [f32],
) {
    let hd = p.head_dim;
    let q_cols = p.head_count * hd;
    let group = p.head_count / p.head_count_kv;
    // Never past the cache's end (where `k` ends).
    let cache_end = k.len() / width.max(1);
    let mut scores = Vec::new();
    for (r, row) in band.enumerate() {
        let (lo, hi) = b.range(row, p);
        let hi = hi.min(cache_end);
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
        attention(&q, &k, &v, 2, Rows { start: 0, n: 2, spans: &[] }, &p, &mut out);
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
        attention(&q, &k, &v, 2, Rows { start: 0, n: 2, spans: &[] }, &p, &mut out);
        assert_eq!(&out[..2], &[15.0, 15.0]);
        assert!((out[2] - 20.0).abs() < 1e-4, "{out:?}");
        // Threads or not, the same rows give the same values.
        let n = 300;
        let q: Vec<f32> = (0..n * 2).map(|i| ((i * 7 % 13) as f32 - 6.0) / 3.0).collect();
        let k: Vec<f32> = (0..n * 2).map(|i| ((i * 5 % 11) as f32 - 5.0) / 3.0).collect();
        let v: Vec<f32> = (0..n * 2).map(|i| (i % 17) as f32).collect();
        let mut all = vec![0.0; n * 2];
        let whole = Rows { start: 0, n, spans: &[] };
        attention(&q, &k, &v, 2, whole, &p, &mut all);
        let mut one = vec![0.0; n * 2];
        rows(&q, &k, &v, 2, whole, 0..n, &p, &mut one);
        assert_eq!(all, one);
    }

    /// A packed batch of three sequences gives each row what its sequence alone gives
    /// (causal or not), the sequences' rows split over threads or not.
    #[test]
    fn packed_rows_see_only_their_own_sequence() {
        let lens = [1usize, 130, 69];
        let n: usize = lens.iter().sum();
        let spans = kindling_model::packed_spans(&lens, n).unwrap();
        let (heads, hd) = (2, 4);
        let q: Vec<f32> = (0..n * heads * hd).map(|i| ((i * 7 % 13) as f32 - 6.0) / 5.0).collect();
        let k: Vec<f32> = (0..n * hd).map(|i| ((i * 5 % 11) as f32 - 5.0) / 4.0).collect();
        let v: Vec<f32> = (0..n * hd).map(|i| ((i * 3 % 17) as f32) - 8.0).collect();
        for causal in [false, true] {
            let p = AttentionParams {
                head_count: heads,
                head_count_kv: 1,
                head_dim: hd,
                scale: 0.5,
                sliding_window: None,
                softcap: None,
                causal,
            };
            let mut packed = vec![0.0; n * heads * hd];
            attention(&q, &k, &v, hd, Rows { start: 0, n, spans: &spans }, &p, &mut packed);
            let mut first = 0;
            for len in lens {
                let (qs, ks, vs) = (
                    &q[first * heads * hd..(first + len) * heads * hd],
                    &k[first * hd..(first + len) * hd],
                    &v[first * hd..(first + len) * hd],
                );
                let mut alone = vec![0.0; len * heads * hd];
                attention(qs, ks, vs, hd, Rows { start: 0, n: len, spans: &[] }, &p, &mut alone);
                assert_eq!(&packed[first * heads * hd..(first + len) * heads * hd], &alone[..], "causal {causal}");
                first += len;
            }
        }
    }
}
