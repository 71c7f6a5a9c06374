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
/// positions `Rows::range` gives. The work is split over threads by (row, head) pairs in
/// `out`'s order, in bands of about equal positions: a prefill's rows, and a decode
/// step's heads, whose context grows with the conversation. Each pair's sums are in a
/// fixed order, so the result does not depend on the thread count.
pub fn attention(q: &[f32], k: &[f32], v: &[f32], width: usize, b: Rows, p: &AttentionParams, out: &mut [f32]) {
    let hd = p.head_dim;
    // Below this many score-times-value products a band of pairs stays on one thread.
    let per_pair = (b.start + b.n) * hd;
    let min_pairs = (1 << 16) / per_pair.max(1) + 1;
    let out = &mut out[..b.n * p.head_count * hd];
    // A pair costs its positions (a causal prefill's last rows attend to the most),
    // plus a little for its own setup.
    let cost = |pair: usize| {
        let (lo, hi) = b.range(pair / p.head_count.max(1), p);
        hi.saturating_sub(lo) + 16
    };
    parallel::for_each_band_by_cost(out, hd, min_pairs, cost, |first, band| heads(q, k, v, width, b, first, p, band));
}

thread_local! {
    /// One head's scores over its positions, reused from call to call.
    static SCORES: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The (row, head) pairs `first..` of the batch, as many as `out` holds (`q` is the
/// whole batch's).
#[allow(clippy::too_many_arguments)]
fn heads(q: &[f32], k: &[f32], v: &[f32], width: usize, b: Rows, first: usize, p: &AttentionParams, out: &mut [f32]) {
    let hd = p.head_dim;
    let group = p.head_count / p.head_count_kv;
    // Never past the cache's end (where `k` ends).
    let cache_end = k.len() / width.max(1);
    SCORES.with_borrow_mut(|scores| {
        for (i, o) in out.chunks_exact_mut(hd).enumerate() {
            let pair = first + i;
            let (row, h) = (pair / p.head_count, pair % p.head_count);
            let (lo, hi) = b.range(row, p);
            let hi = hi.min(cache_end);
            let kvh = h / group;
            let qh = &q[pair * hd..(pair + 1) * hd];
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
            o.fill(0.0);
            for (i, t) in (lo..hi).enumerate() {
                let a = scores[i] / sum;
                let vt = &v[t * width + kvh * hd..t * width + (kvh + 1) * hd];
                for (oi, &vi) in o.iter_mut().zip(vt) {
                    *oi += a * vi;
                }
            }
        }
    });
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
        heads(&q, &k, &v, 2, whole, 0, &p, &mut one);
        assert_eq!(all, one);
    }

    /// A decode step (one row) over a long context splits its heads over the threads:
    /// the same values as on one thread.
    #[test]
    fn one_rows_heads_split_over_threads_match_one_thread() {
        let (heads_n, kv, hd, ctx) = (14, 2, 64, 1500);
        let p = AttentionParams {
            head_count: heads_n,
            head_count_kv: kv,
            head_dim: hd,
            scale: 0.125,
            sliding_window: None,
            softcap: None,
            causal: true,
        };
        let width = kv * hd;
        let q: Vec<f32> = (0..heads_n * hd).map(|i| ((i * 7 % 13) as f32 - 6.0) / 5.0).collect();
        let k: Vec<f32> = (0..ctx * width).map(|i| ((i * 5 % 11) as f32 - 5.0) / 4.0).collect();
        let v: Vec<f32> = (0..ctx * width).map(|i| ((i * 3 % 17) as f32) - 8.0).collect();
        let last = Rows { start: ctx - 1, n: 1, spans: &[] };
        // `attention` splits the heads once a band of them is worth a thread.
        let min_pairs = (1 << 16) / (ctx * hd) + 1;
        assert!(parallel::threads() == 1 || 2 * min_pairs <= heads_n, "the heads are split");
        let mut split = vec![0.0; heads_n * hd];
        attention(&q, &k, &v, width, last, &p, &mut split);
        let mut one = vec![0.0; heads_n * hd];
        heads(&q, &k, &v, width, last, 0, &p, &mut one);
        assert_eq!(split, one);
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
