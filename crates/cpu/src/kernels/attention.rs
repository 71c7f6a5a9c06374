//! Grouped-query attention over the KV cache: causal (decoders) or over the whole
//! batch (encoders), and in a packed batch of several sequences confined to each row's
//! own sequence.

use kindling_model::AttentionParams;

use super::exp::exp_nonpositive;
use super::overwritten;
use super::qgemm::tile;
use super::wide::{self, LaneKernel};
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

/// Keys are cached transposed, in blocks of this many positions ([`store_keys`]): block
/// `b` holds positions `b · KEY_BLOCK..` as `[width][KEY_BLOCK]`, so value `c` of
/// position `t` is at `(t / KEY_BLOCK · width + c) · KEY_BLOCK + t % KEY_BLOCK`. A block
/// of one kv head's keys is then what `qgemm::tile` reads for the scores. With keys by
/// position, every call transposed the whole context again: most of a decode step's
/// attention. A multiple of every lane width.
pub const KEY_BLOCK: usize = 16;

/// Writes the keys of positions `first..` (`rows`: `[n, width]`) into the transposed
/// cache `kt`, which grows to whole blocks (its capacity reserved, it does not move).
pub fn store_keys(rows: &[f32], width: usize, first: usize, kt: &mut Vec<f32>) {
    let n = rows.len() / width.max(1);
    let end = (first + n).next_multiple_of(KEY_BLOCK) * width;
    if kt.len() < end {
        kt.resize(end, 0.0);
    }
    for (i, row) in rows.chunks_exact(width.max(1)).enumerate() {
        let t = first + i;
        let at = t / KEY_BLOCK * width * KEY_BLOCK + t % KEY_BLOCK;
        for (c, &x) in row.iter().enumerate() {
            kt[at + c * KEY_BLOCK] = x;
        }
    }
}

/// `q`: `[n, heads × head_dim]` for the batch's rows; `kt`, `v`: the cache up to the end
/// of this batch, with `width = kv_heads × head_dim` values a position, already holding
/// the batch's rows: the keys transposed in blocks ([`KEY_BLOCK`]), the values
/// `[start + n, width]`; `out`: `[n, heads × head_dim]`. Each row attends to the
/// positions `Rows::range` gives. The work is split over threads by (row, head) pairs in
/// `out`'s order, in bands of about equal positions: a prefill's rows, and a decode
/// step's heads, whose context grows with the conversation.
///
/// Arithmetic, per pair: a score is `scale · Σ_d q[d] · k[d]`, the sum sequential over
/// the head's dimensions (a multiply, then an add); the softmax takes the maximum, then
/// sums the exponentials in position order; each output value is the sequential sum over
/// positions of `(e / sum) · v`. Every score and every output value is one lane of its
/// own, so the result does not depend on the batch (a row alone, as in decode, gives the
/// bits it gets in any prompt batch or packed batch), the thread split or the lane width.
pub fn attention(q: &[f32], kt: &[f32], v: &[f32], width: usize, b: Rows, p: &AttentionParams, out: &mut [f32]) {
    let hd = p.head_dim;
    // Below this many score-times-value products a band of pairs stays on one thread.
    let per_pair = (b.start + b.n) * hd;
    let min_pairs = MIN_BAND_PRODUCTS / per_pair.max(1) + 1;
    let out = &mut out[..b.n * p.head_count * hd];
    // A pair costs its positions (a causal prefill's last rows attend to the most),
    // plus a little for its own setup.
    let cost = |pair: usize| {
        let (lo, hi) = b.range(pair / p.head_count.max(1), p);
        hi.saturating_sub(lo) + 16
    };
    let job = Job { q, kt, v, width, b, p };
    // The scratch is taken here, outside the wider-lane functions (`wide`).
    let run = |first: usize, band: &mut [f32]| {
        SCRATCH.with_borrow_mut(|s| wide::run_widest(Band { job: &job, first, out: band, s }))
    };
    // A decode step at a short context: each kv head's group of heads on a thread of its
    // own, where there are threads for all of them and bands of pairs would take no more,
    // so that the kv heads' keys and values are read from memory side by side.
    let group = p.head_count / p.head_count_kv.max(1);
    let pair_threads = (b.n * p.head_count / min_pairs).min(parallel::threads());
    let by_groups = b.n == 1
        && b.spans.is_empty()
        && group * p.head_count_kv == p.head_count
        && group * per_pair >= MIN_GROUP_PRODUCTS
        && (2..=parallel::threads()).contains(&p.head_count_kv)
        && p.head_count_kv >= pair_threads;
    if by_groups {
        return parallel::for_each_band(out, group * hd, 1, |g, band| run(g * group, band));
    }
    parallel::for_each_band_by_cost(out, hd, min_pairs, cost, run);
}

/// A band of (row, head) pairs has at least this many score-times-value products (a
/// few microseconds), so a thread's share is worth its start.
const MIN_BAND_PRODUCTS: usize = 1 << 14;

/// A decode step may give each thread a kv head's group of heads from this many products
/// a group: their keys and values come from memory (a step's weights have streamed
/// through the caches since the last), and one thread reading them line by line took
/// 19 µs a layer for SmolLM2's 72 positions on the Xeon.
const MIN_GROUP_PRODUCTS: usize = 1 << 12;

/// Pairs per score tile: they share each block of keys as it is loaded.
const RR: usize = 4;

/// Scores a thread keeps at once (`f32`s): pairs are taken in blocks of about this many
/// scores over their positions, so a long context's scores stay in L2.
const SCORE_BUDGET: usize = 1 << 16;

/// One thread's scratch, reused from call to call: a block of keys as `tile` reads them
/// (`keys[d · W + j]`: key j's dimension d) where the cache's block cannot be read in
/// place, the block of pairs' scores (then their weights) by position, and the band's
/// pairs of the kv head at hand.
#[derive(Default)]
struct Scratch {
    keys: Vec<f32>,
    scores: Vec<f32>,
    pairs: Vec<usize>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// What every band of one call reads.
#[derive(Clone, Copy)]
struct Job<'a> {
    q: &'a [f32],
    kt: &'a [f32],
    v: &'a [f32],
    width: usize,
    b: Rows<'a>,
    p: &'a AttentionParams,
}

/// The (row, head) pairs `first..` of the batch, as many as `out` holds, with the
/// thread's scratch, run at some lane width.
struct Band<'b, 'a> {
    job: &'b Job<'a>,
    first: usize,
    out: &'b mut [f32],
    s: &'b mut Scratch,
}

impl LaneKernel for Band<'_, '_> {
    #[inline(always)]
    fn run<const W: usize>(self) {
        band::<W>(self.job, self.first, self.out, self.s)
    }
}

#[inline(always)]
fn band<const W: usize>(job: &Job, first: usize, out: &mut [f32], s: &mut Scratch) {
    let Job { q, kt, v, width, b, p } = *job;
    let hd = p.head_dim;
    if hd == 0 || p.head_count == 0 || p.head_count_kv == 0 {
        return;
    }
    let group = (p.head_count / p.head_count_kv).max(1);
    // Never past the cache's end (where `v` ends).
    let cache_end = v.len() / width.max(1);
    let range = |pair: usize| {
        let (lo, hi) = b.range(pair / p.head_count, p);
        let hi = hi.min(cache_end);
        (lo.min(hi), hi)
    };
    let per_block = (SCORE_BUDGET / cache_end.max(1)).clamp(RR, 16 * RR) / RR * RR;
    let Scratch { keys, scores, pairs } = s;
    keys.resize(hd * W, 0.0);
    let band_pairs = first..first + out.len() / hd;
    for kvh in 0..p.head_count_kv {
        pairs.clear();
        pairs.extend(band_pairs.clone().filter(|&pair| (pair % p.head_count) / group == kvh));
        for blk in pairs.chunks(per_block) {
            let (lo, hi) =
                blk.iter().map(|&pair| range(pair)).fold((usize::MAX, 0), |(l, h), (a, c)| (l.min(a), h.max(c)));
            let lo = lo.min(hi);
            prefetch_keys_and_values(lo..hi, (kt, v, width, kvh * hd, hd));
            let span = (hi - lo).next_multiple_of(W);
            let scores = overwritten(scores, blk.len() * span);
            block_scores::<W>(q, hd, blk, (lo, hi), (kt, width, kvh * hd), keys, scores, span);
            for (i, &pair) in blk.iter().enumerate() {
                let (a, c) = range(pair);
                softmax::<W>(&mut scores[i * span + (a - lo)..i * span + (c - lo)], p);
            }
            let mut i = 0;
            while i < blk.len() {
                // A last 1-3 pairs (a decode step's group of heads) go as one tile too.
                let (at, sc, vs) = ((&blk[i..], i, first), (lo, span, &scores[..]), (v, width, kvh * hd, hd));
                i += match blk.len() - i {
                    1 => pair_values::<W, 1>(at, sc, vs, &range, out),
                    2 => pair_values::<W, 2>(at, sc, vs, &range, out),
                    3 => pair_values::<W, 3>(at, sc, vs, &range, out),
                    _ => pair_values::<W, RR>(at, sc, vs, &range, out),
                };
            }
        }
    }
}

/// Below this many bytes of one kv head's keys and values, a block of pairs asks for all
/// of them before it starts. A decode step finds them out of cache (the weights streamed
/// through since the last step) and read them one line at a time, each load waiting: at
/// 72 positions SmolLM2's 3 kv heads took 13 µs a layer on one Zen 4 core, 19 on the
/// Xeon, for 83k multiply-adds. Longer spans stream, which the hardware follows.
const PREFETCH_SPAN_BYTES: usize = 64 << 10;

/// Asks the memory system for kv head `col / hd`'s keys (whole cache blocks) and values
/// at positions `lo..hi`, when they fit [`PREFETCH_SPAN_BYTES`]. A hint only: no result
/// depends on it; nothing off x86_64.
#[inline(always)]
fn prefetch_keys_and_values(
    span: std::ops::Range<usize>,
    (kt, v, width, col, hd): (&[f32], &[f32], usize, usize, usize),
) {
    if span.is_empty() || 2 * 4 * hd * span.len() > PREFETCH_SPAN_BYTES {
        return;
    }
    const LINE: usize = 16; // f32s per 64-byte cache line
    for b in span.start / KEY_BLOCK..span.end.div_ceil(KEY_BLOCK) {
        let at = (b * width + col) * KEY_BLOCK;
        super::prefetch(kt.get(at..at + hd * KEY_BLOCK).unwrap_or(&[]), LINE);
    }
    for t in span {
        super::prefetch(v.get(t * width + col..t * width + col + hd).unwrap_or(&[]), LINE);
    }
}

/// The weighted values of the pairs `pairs[..R]` (the block's score rows `i..i + R`) into
/// `out` (whose pairs start at `first`); returns R.
#[inline(always)]
fn pair_values<const W: usize, const R: usize>(
    (pairs, i, first): (&[usize], usize, usize),
    (lo, span, scores): (usize, usize, &[f32]),
    (v, width, col, hd): (&[f32], usize, usize, usize),
    range: &impl Fn(usize) -> (usize, usize),
    out: &mut [f32],
) -> usize {
    let tile: [usize; R] = core::array::from_fn(|r| pairs[r]);
    weighted_values::<W, R>(
        tile.map(range),
        lo,
        core::array::from_fn(|r| &scores[(i + r) * span..(i + r + 1) * span]),
        (v, width, col),
        0..hd,
        &mut |r, at, vals| out[(tile[r] - first) * hd + at..][..vals.len()].copy_from_slice(vals),
    );
    R
}

/// The block of pairs' unscaled scores over positions `lo..hi` into `scores` (`span`
/// values a pair, position `lo` first), `W` keys at a time: each tile of `RR` pairs'
/// queries passed over a block of keys (`qgemm::tile`: one lane per score, summed over
/// the dimensions in order). The keys are read in place from the transposed cache where
/// `W` of them start a cache block; else (`W` < [`KEY_BLOCK`], or a first position off
/// the blocks' grid: a sliding window, a packed sequence) gathered into `keys`. Scores
/// past a pair's end are computed from whatever the cache holds there and never read.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn block_scores<const W: usize>(
    q: &[f32],
    hd: usize,
    blk: &[usize],
    (lo, hi): (usize, usize),
    (kt, width, col): (&[f32], usize, usize),
    keys: &mut [f32],
    scores: &mut [f32],
    span: usize,
) {
    let query = |pair: usize| q.get(pair * hd..(pair + 1) * hd).unwrap_or(&[]);
    // Where position t's dimension `col + d` sits in the cache.
    let at = |t: usize, d: usize| (t / KEY_BLOCK * width + col + d) * KEY_BLOCK + t % KEY_BLOCK;
    for t0 in (lo..hi).step_by(W) {
        let in_place =
            if W == KEY_BLOCK && t0.is_multiple_of(KEY_BLOCK) { kt.get(at(t0, 0)..at(t0, 0) + hd * W) } else { None };
        let keys: &[f32] = match in_place {
            Some(block) => block,
            None if t0.is_multiple_of(W) && KEY_BLOCK.is_multiple_of(W) => {
                // W keys within one cache block: W values a dimension, side by side there.
                for (d, dst) in keys.chunks_exact_mut(W).enumerate() {
                    match kt.get(at(t0, d)..at(t0, d) + W) {
                        Some(src) => dst.copy_from_slice(src),
                        None => dst.fill(0.0),
                    }
                }
                keys
            }
            None => {
                for j in 0..W {
                    let t = t0 + j;
                    for d in 0..hd {
                        keys[d * W + j] = if t < hi { kt.get(at(t, d)).copied().unwrap_or(0.0) } else { 0.0 };
                    }
                }
                keys
            }
        };
        let at = t0 - lo;
        let mut i = 0;
        while i + RR <= blk.len() {
            let mut c = [[0.0f32; W]; RR];
            tile::<W, RR>(core::array::from_fn(|r| query(blk[i + r])), keys, c.as_flattened_mut());
            for (r, c) in c.iter().enumerate() {
                scores[(i + r) * span + at..][..W].copy_from_slice(c);
            }
            i += RR;
        }
        // A last 1-3 pairs (a decode step's group of heads) as one tile.
        match blk.len() - i {
            0 => {}
            1 => last_scores::<W, 1>(&blk[i..], i, keys, &query, (scores, span, at)),
            2 => last_scores::<W, 2>(&blk[i..], i, keys, &query, (scores, span, at)),
            _ => last_scores::<W, 3>(&blk[i..], i, keys, &query, (scores, span, at)),
        }
    }
}

/// The scores of the pairs `pairs[..R]` (score rows `i..i + R`) against one block of
/// keys, into `scores` at `at`.
#[inline(always)]
fn last_scores<'q, const W: usize, const R: usize>(
    pairs: &[usize],
    i: usize,
    keys: &[f32],
    query: &impl Fn(usize) -> &'q [f32],
    (scores, span, at): (&mut [f32], usize, usize),
) {
    let mut c = [[0.0f32; W]; R];
    tile::<W, R>(core::array::from_fn(|r| query(pairs[r])), keys, c.as_flattened_mut());
    for (r, c) in c.iter().enumerate() {
        scores[(i + r) * span + at..][..W].copy_from_slice(c);
    }
}

/// A pair's scores over its positions to their softmax weights, in place. Each step is
/// defined per value or in a fixed order, whatever `W` is: the maximum (exact in any
/// order), [`exp_nonpositive`] lane by lane, the sum in `SUM_LANES` interleaved partial
/// sums folded in order, then a division per value.
#[inline(always)]
fn softmax<const W: usize>(sc: &mut [f32], p: &AttentionParams) {
    const SUM_LANES: usize = 16;
    sc.iter_mut().for_each(|s| *s *= p.scale);
    if let Some(cap) = p.softcap {
        sc.iter_mut().for_each(|s| *s = cap * (*s / cap).tanh());
    }
    let mut m = [f32::NEG_INFINITY; W];
    let mut chunks = sc.chunks_exact(W);
    for c in &mut chunks {
        m.iter_mut().zip(c).for_each(|(m, &s)| *m = m.max(s));
    }
    let max = chunks.remainder().iter().chain(&m).copied().fold(f32::NEG_INFINITY, f32::max);
    let mut chunks = sc.chunks_exact_mut(W);
    for c in &mut chunks {
        let mut x: [f32; W] = core::array::from_fn(|i| c[i] - max);
        exp_nonpositive(&mut x);
        c.copy_from_slice(&x);
    }
    for s in chunks.into_remainder() {
        let mut x = [*s - max];
        exp_nonpositive(&mut x);
        *s = x[0];
    }
    let mut lanes = [0.0f32; SUM_LANES];
    let mut chunks = sc.chunks_exact(SUM_LANES);
    for c in &mut chunks {
        lanes.iter_mut().zip(c).for_each(|(l, &e)| *l += e);
    }
    lanes.iter_mut().zip(chunks.remainder()).for_each(|(l, &e)| *l += e);
    let sum = lanes.iter().fold(0.0f32, |a, &l| a + l);
    sc.iter_mut().for_each(|s| *s /= sum);
}

/// For `RR` pairs of one kv head, each with its positions `ranges[r]` and weights
/// `weights[r]` (from position `lo`), `Σ_t weights[r][t] · v[t][col + d]` for the
/// dimensions `dims`, summed over the positions in order, handed to `put(r, first
/// dimension, values)` `W` dimensions at a time (a last few, one at a time). Pairs that
/// start at the same position (a row's heads; a causal prefill's rows) go together up
/// to the first one's end, each value loaded once for the tile, then each on to its own
/// end; pairs that start apart (a sliding window's rows) go one at a time.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn weighted_values<const W: usize, const RR: usize>(
    ranges: [(usize, usize); RR],
    lo: usize,
    weights: [&[f32]; RR],
    (v, width, col): (&[f32], usize, usize),
    dims: std::ops::Range<usize>,
    put: &mut dyn FnMut(usize, usize, &[f32]),
) {
    let start = ranges[0].0;
    if RR > 1 && ranges.iter().any(|r| r.0 != start) {
        for r in 0..RR {
            weighted_values::<W, 1>([ranges[r]], lo, [weights[r]], (v, width, col), dims.clone(), &mut |_, d, x| {
                put(r, d, x)
            });
        }
        return;
    }
    let shared_end = ranges.iter().map(|r| r.1).min().unwrap_or(start).max(start);
    let whole = dims.start + dims.len() / W * W;
    for d0 in (dims.start..whole).step_by(W) {
        let at = col + d0;
        let mut acc = accumulate_tile::<W, RR>(&weights, lo, start..shared_end, (v, width, at));
        for (r, acc) in acc.iter_mut().enumerate() {
            accumulate(acc, weights[r], lo, shared_end..ranges[r].1, (v, width, at));
            put(r, d0, acc);
        }
    }
    if whole < dims.end {
        weighted_values::<1, RR>(ranges, lo, weights, (v, width, col), whole..dims.end, put);
    }
}

/// `Σ_t w[r][t - lo] · v[t][at..at + W]` over positions `ts` in order, for the `RR`
/// pairs at once, each value loaded once. The sums start from zero in accumulators of
/// this function's own: started from the caller's, they went to memory (a third of the
/// speed).
#[inline(always)]
fn accumulate_tile<const W: usize, const RR: usize>(
    weights: &[&[f32]; RR],
    lo: usize,
    ts: std::ops::Range<usize>,
    (v, width, at): (&[f32], usize, usize),
) -> [[f32; W]; RR] {
    let mut acc = [[0.0f32; W]; RR];
    let n = ts.len();
    if n == 0 {
        return acc;
    }
    // Every weight and value the loop reads, checked once (all there in any real call).
    let ws = weights.map(|w| w.get(ts.start - lo..ts.end - lo).unwrap_or(&[]));
    let Some(vs) = v.get(ts.start * width + at..(ts.end - 1) * width + at + W) else {
        return acc;
    };
    if ws.iter().any(|w| w.len() != n) {
        return acc;
    }
    for (i, row) in vs.chunks(width.max(1)).enumerate() {
        let Some(x) = row.get(..W) else { break };
        for (acc, w) in acc.iter_mut().zip(&ws) {
            // SAFETY: `i < n`, the length of every `w` (checked above).
            let a = unsafe { *w.get_unchecked(i) };
            acc.iter_mut().zip(x).for_each(|(o, &x)| *o += a * x);
        }
    }
    acc
}

/// One pair's `acc += w[t - lo] · v[t][at..at + W]` over positions `ts`, in order.
#[inline(always)]
fn accumulate<const W: usize>(
    acc: &mut [f32; W],
    w: &[f32],
    lo: usize,
    ts: std::ops::Range<usize>,
    (v, width, at): (&[f32], usize, usize),
) {
    for t in ts {
        if let Some(x) = lanes::<W>(v, t * width + at) {
            let a = w.get(t - lo).copied().unwrap_or(0.0);
            acc.iter_mut().zip(x).for_each(|(o, &x)| *o += a * x);
        }
    }
}

/// `v[at..at + W]`, if it is there.
#[inline(always)]
fn lanes<const W: usize>(v: &[f32], at: usize) -> Option<&[f32; W]> {
    v.get(at..at + W).and_then(|x| x.try_into().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys by position (as these tests write them) in the cache's transposed blocks.
    fn transposed(k: &[f32], width: usize) -> Vec<f32> {
        let mut kt = Vec::new();
        store_keys(k, width, 0, &mut kt);
        kt
    }

    /// [`super::attention`], given the keys by position.
    fn attention(q: &[f32], k: &[f32], v: &[f32], width: usize, b: Rows, p: &AttentionParams, out: &mut [f32]) {
        super::attention(q, &transposed(k, width), v, width, b, p, out)
    }

    #[test]
    fn keys_stored_in_pieces_are_the_keys_stored_at_once() {
        let width = 6;
        let k = values(37 * width, 7919, 1013, 1.0);
        let mut kt = Vec::new();
        for (first, end) in [(0, 5), (5, 16), (16, 17), (17, 37)] {
            store_keys(&k[first * width..end * width], width, first, &mut kt);
        }
        assert_eq!(kt, transposed(&k, width));
        assert_eq!(kt.len(), 48 * width, "whole blocks");
        assert_eq!(kt[(2 * width + 4) * KEY_BLOCK + 3], k[35 * width + 4], "position 35, value 4");
    }

    /// A cache rewound to an earlier position (a conversation edited) keeps its later
    /// keys; the blocks read in place take them into scores that are never read.
    #[test]
    fn stale_keys_past_the_end_are_never_read() {
        let (heads, kv, hd, n) = (4, 2, 16, 21);
        let width = kv * hd;
        let p = AttentionParams {
            head_count: heads,
            head_count_kv: kv,
            head_dim: hd,
            scale: 0.25,
            sliding_window: None,
            softcap: None,
            causal: true,
        };
        let q = values(n * heads * hd, 7919, 1013, 2.1e-3);
        let k = values(n * width, 104_729, 997, 1.7e-3);
        let v = values(n * width, 31, 211, 3.0e-2);
        let mut kt = Vec::new();
        store_keys(&vec![f32::NAN; 40 * width], width, 0, &mut kt);
        store_keys(&k, width, 0, &mut kt);
        let batch = Rows { start: 0, n, spans: &[] };
        let (mut stale, mut fresh) = (vec![0.0; n * heads * hd], vec![0.0; n * heads * hd]);
        super::attention(&q, &kt, &v, width, batch, &p, &mut stale);
        attention(&q, &k, &v, width, batch, &p, &mut fresh);
        assert!(stale.iter().all(|x| x.is_finite()));
        assert_eq!(stale, fresh);
    }

    /// The whole batch as one band on this thread, at the base lane width.
    fn one_band_at_base_width(q: &[f32], k: &[f32], v: &[f32], width: usize, b: Rows, p: &AttentionParams) -> Vec<f32> {
        let mut out = vec![f32::NAN; b.n * p.head_count * p.head_dim];
        let kt = transposed(k, width);
        let job = Job { q, kt: &kt, v, width, b, p };
        wide::run_base(Band { job: &job, first: 0, out: &mut out, s: &mut Scratch::default() });
        out
    }

    fn values(n: usize, mul: usize, modulus: usize, scale: f32) -> Vec<f32> {
        (0..n).map(|i| ((i * mul % modulus) as f32 - (modulus / 2) as f32) * scale).collect()
    }

    /// Grouped heads, a dimension that is not a whole number of wide steps, a sliding
    /// window and a softcap, against attention in f64; then each row alone (a decode
    /// step at its position) gives the bits it has in the batch, and the widest lanes
    /// the base lanes' bits.
    #[test]
    fn matches_f64_and_a_row_alone_gives_its_bits_in_the_batch() {
        let (heads, kv, hd, start, n) = (6, 2, 24, 5, 37);
        let width = kv * hd;
        let q = values(n * heads * hd, 7919, 1013, 2.1e-3);
        let k = values((start + n) * width, 104_729, 997, 1.7e-3);
        let v = values((start + n) * width, 31, 211, 3.0e-2);
        for (window, softcap) in [(None, None), (Some(9), Some(0.5))] {
            let p = AttentionParams {
                head_count: heads,
                head_count_kv: kv,
                head_dim: hd,
                scale: 0.2,
                sliding_window: window,
                softcap,
                causal: true,
            };
            let batch = Rows { start, n, spans: &[] };
            let mut out = vec![f32::NAN; n * heads * hd];
            attention(&q, &k, &v, width, batch, &p, &mut out);
            for row in 0..n {
                for h in 0..heads {
                    let (lo, hi) = batch.range(row, &p);
                    let kvh = h / (heads / kv);
                    let at = |x: &[f32], t: usize, d: usize| f64::from(x[t * width + kvh * hd + d]);
                    let qv = |d: usize| f64::from(q[(row * heads + h) * hd + d]);
                    let s: Vec<f64> = (lo..hi)
                        .map(|t| {
                            let s = 0.2 * (0..hd).map(|d| qv(d) * at(&k, t, d)).sum::<f64>();
                            softcap.map_or(s, |c| f64::from(c) * (s / f64::from(c)).tanh())
                        })
                        .collect();
                    let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = s.iter().map(|s| (s - max).exp()).collect();
                    let sum: f64 = e.iter().sum();
                    for d in 0..hd {
                        let want: f64 = (lo..hi).zip(&e).map(|(t, e)| e / sum * at(&v, t, d)).sum();
                        let got = f64::from(out[(row * heads + h) * hd + d]);
                        assert!((got - want).abs() < 1e-5, "row {row} head {h} dim {d}: {got} vs {want}");
                    }
                }
            }
            for row in [0, 1, 17, n - 1] {
                let alone = Rows { start: start + row, n: 1, spans: &[] };
                let qr = &q[row * heads * hd..(row + 1) * heads * hd];
                let mut one = vec![f32::NAN; heads * hd];
                attention(
                    qr,
                    &k[..(start + row + 1) * width],
                    &v[..(start + row + 1) * width],
                    width,
                    alone,
                    &p,
                    &mut one,
                );
                let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&one), bits(&out[row * heads * hd..(row + 1) * heads * hd]), "row {row} alone");
            }
            let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&one_band_at_base_width(&q, &k, &v, width, batch, &p)), bits(&out), "base lanes");
        }
    }

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
        assert_eq!(all, one_band_at_base_width(&q, &k, &v, 2, whole, &p));
    }

    /// One decode row over `ctx` positions, causal: the threaded call's values against one
    /// band at the base width.
    fn decode_row_matches_one_band(heads_n: usize, kv: usize, hd: usize, ctx: usize) {
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
        let mut split = vec![0.0; heads_n * hd];
        attention(&q, &k, &v, width, last, &p, &mut split);
        assert_eq!(split, one_band_at_base_width(&q, &k, &v, width, last, &p));
    }

    /// A decode step (one row) over a long context splits its heads over the threads:
    /// the same values as on one thread.
    #[test]
    fn one_rows_heads_split_over_threads_match_one_thread() {
        let (heads_n, hd, ctx) = (14, 64, 1500);
        // `attention` splits the heads once a band of them is worth a thread.
        let min_pairs = MIN_BAND_PRODUCTS / (ctx * hd) + 1;
        assert!(parallel::threads() == 1 || 2 * min_pairs <= heads_n, "the heads are split");
        decode_row_matches_one_band(heads_n, 2, hd, ctx);
    }

    /// A decode step at a short context goes by kv groups to threads (two kv heads, so on
    /// any machine with two threads): the same values as one band.
    #[test]
    fn a_short_decode_split_by_kv_groups_matches_one_band() {
        let (heads_n, kv, hd, ctx) = (8, 2, 64, 40);
        assert!(heads_n / (MIN_BAND_PRODUCTS / (ctx * hd) + 1) < kv, "fewer bands of pairs than kv heads");
        assert!(heads_n / kv * ctx * hd >= MIN_GROUP_PRODUCTS, "the groups are split");
        decode_row_matches_one_band(heads_n, kv, hd, ctx);
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
