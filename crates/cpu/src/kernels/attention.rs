//! Causal grouped-query attention over the KV cache.

use kindling_model::AttentionParams;

use super::dot;

/// `q`: `[n, heads × head_dim]` for positions `start..start + n`; `k`, `v`: the cache,
/// `[positions, width]` with `width = kv_heads × head_dim`, already holding this
/// batch's rows; `out`: `[n, heads × head_dim]`. Row r attends to positions
/// `lo..=start + r`, where `lo` honours the sliding window.
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
    let hd = p.head_dim;
    let q_cols = p.head_count * hd;
    let group = p.head_count / p.head_count_kv;
    let mut scores = Vec::new();
    for r in 0..n {
        let pos = start + r;
        let lo = p.sliding_window.map_or(0, |w| (pos + 1).saturating_sub(w));
        for h in 0..p.head_count {
            let kvh = h / group;
            let qh = &q[r * q_cols + h * hd..r * q_cols + (h + 1) * hd];
            scores.clear();
            scores.extend((lo..=pos).map(|t| p.scale * dot(qh, &k[t * width + kvh * hd..t * width + (kvh + 1) * hd])));
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
            for (i, t) in (lo..=pos).enumerate() {
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
        };
        // Two cached positions; with a window of 1 each row sees only itself.
        let k = vec![1.0, 0.0, 0.0, 1.0];
        let v = vec![5.0, 6.0, 7.0, 8.0];
        let q = vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let mut out = vec![0.0; 8];
        attention(&q, &k, &v, 2, 0, 2, &p, &mut out);
        assert_eq!(out, vec![5.0, 6.0, 5.0, 6.0, 7.0, 8.0, 7.0, 8.0]);
    }
}
