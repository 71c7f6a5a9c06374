//! Splitting kernel work over threads: natively on the spinning pool (`spin_pool`), in
//! the threaded WebAssembly build on rayon's pool (shared memory and atomics, its pool
//! started by the page through `wasm-bindgen-rayon`). The plain wasm build has one
//! thread.

use std::sync::atomic::{AtomicUsize, Ordering};

static MAX_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Caps the threads kernels use (0: as many as the pool has).
pub fn set_max_threads(n: usize) {
    MAX_THREADS.store(n, Ordering::Relaxed);
}

/// Whether this build can run kernels on more than one thread.
pub const POOLED: bool = cfg!(any(not(target_arch = "wasm32"), target_feature = "atomics"));

pub fn threads() -> usize {
    #[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
    {
        1
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
    {
        // The page sets the count once its pool has started (`initThreadPool`, then
        // `set_max_threads`); before, rayon has no pool, and would try to spawn
        // threads, which wasm cannot.
        match MAX_THREADS.load(Ordering::Relaxed) {
            0 => 1,
            m => m.min(rayon::current_num_threads().max(1)),
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        // The pool has one thread per core, the caller's included.
        let avail = crate::spin_pool::cores();
        match MAX_THREADS.load(Ordering::Relaxed) {
            0 => avail,
            m => m.min(avail),
        }
    }
}

/// How many threads share `n` units when each should get at least `min_per_thread`.
fn thread_count(n: usize, min_per_thread: usize) -> usize {
    threads().min(n / min_per_thread.max(1)).max(1)
}

/// Bands a thread's share is cut into, where each still gets `min_per_thread` units: the
/// threads take the bands one after another, so one that is slow for the moment takes
/// fewer. On the GPU machine's Xeon one band per thread left a decode matvec waiting for
/// its slowest band, 1.4 times as long as the average at 8 threads; two a thread gave its
/// prefill about +10% and its decode +6% at 8 and 16 threads, four +18% and +9%, but four
/// cost 5–8% on this 2-core machine, where two cost nothing measurable
/// (`bench/results/cpu-decode-band.md`). So four from [`MANY_THREADS`] threads on: with
/// the bands of [`band_count`], four against two gave the Xeon at 8 threads +13% decode
/// and +20% prefill, at 16 +3% and even (`bench/results/cpu-issue30-final.md`).
const BANDS_PER_THREAD: usize = 2;
const MANY_BANDS_PER_THREAD: usize = 4;
const MANY_THREADS: usize = 4;

/// Runs `f(first, band)` over `out` cut into contiguous bands of whole units (`unit`
/// values each; `first` is the band's first unit), a few per thread, written in place.
/// Small jobs stay on the calling thread.
pub fn for_each_band<T: Send>(out: &mut [T], unit: usize, min_per_thread: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let units = out.len() / unit.max(1);
    let t = thread_count(units, min_per_thread);
    let parts = band_count(units, t, min_per_thread);
    bands(out, unit, (t, parts), &|i| i * units / parts, f)
}

/// How many bands `units` are cut into for `t` threads: [`BANDS_PER_THREAD`] a thread
/// (or [`MANY_BANDS_PER_THREAD`]) where each band keeps `min_per_band` units, and always
/// a multiple of `t`, the bands differing by at most one unit (`for_each_band` starts
/// band i at `i · units / parts`).
/// Bands of a fixed size had left 9 bands of SmolLM2's 576 rows to 8 threads: one thread
/// took two, and the decode's o and down matvecs ran at half the threads' speed.
fn band_count(units: usize, t: usize, min_per_band: usize) -> usize {
    let t = t.max(1);
    let per_thread = if t >= MANY_THREADS { MANY_BANDS_PER_THREAD } else { BANDS_PER_THREAD };
    let most = (t * per_thread).min(units / min_per_band.max(1));
    (most / t * t).max(t)
}

/// [`for_each_band`] with bands of about equal cost, unit `i` costing `cost(i)` (in a
/// causal prefill's attention the later rows attend to more positions: equal bands of
/// rows left the first threads waiting for the last). Still contiguous bands.
pub fn for_each_band_by_cost<T: Send>(
    out: &mut [T],
    unit: usize,
    min_per_thread: usize,
    cost: impl Fn(usize) -> usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    const MAX_BANDS: usize = 64;
    let units = out.len() / unit.max(1);
    let t = thread_count(units, min_per_thread).min(MAX_BANDS);
    if t <= 1 {
        // One thread (a decode step, the single-threaded wasm): no costs to add up.
        return f(0, out);
    }
    // cuts[b]: the first unit of band b, where the running cost passes b / t of the total.
    let mut cuts = [units; MAX_BANDS + 1];
    cuts[0] = 0;
    let total: usize = (0..units).map(&cost).sum();
    let (mut b, mut sum) = (1, 0usize);
    for i in 0..units {
        while b < t && sum * t >= total * b {
            cuts[b] = i;
            b += 1;
        }
        sum += cost(i);
    }
    bands(out, unit, (t, t), &|i| cuts[i], f)
}

/// Runs `f` over `parts` bands of `out` on `t` threads, band `i` being units
/// `start(i)..start(i + 1)` (the last to `out`'s end; `start(0)` is 0 and `start` does not
/// decrease).
fn bands<T: Send>(
    out: &mut [T],
    unit: usize,
    (t, parts): (usize, usize),
    start: &(dyn Fn(usize) -> usize + Sync),
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    if t <= 1 || parts <= 1 {
        return f(0, out);
    }
    #[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
    {
        let _ = (unit, start);
        f(0, out)
    }
    #[cfg(any(not(target_arch = "wasm32"), target_feature = "atomics"))]
    {
        let len = out.len();
        let base = BandBase(out.as_mut_ptr());
        let band = |i: usize| {
            let (a, b) = (start(i) * unit, if i + 1 == parts { len } else { start(i + 1) * unit });
            // SAFETY: the bands do not overlap (`start` does not decrease) and lie within
            // `out`; each is handed to one call, and `out` outlives the pool's run, which
            // returns when every call has.
            f(start(i), unsafe { std::slice::from_raw_parts_mut(base.at(a), b.saturating_sub(a)) })
        };
        #[cfg(target_arch = "wasm32")]
        {
            use rayon::prelude::*;
            (0..parts).into_par_iter().for_each(band);
        }
        #[cfg(not(target_arch = "wasm32"))]
        crate::spin_pool::run(t, parts, &band);
    }
}

/// `out`'s first element, shared by the calls that each take their own band of it.
#[cfg(any(not(target_arch = "wasm32"), target_feature = "atomics"))]
struct BandBase<T>(*mut T);

#[cfg(any(not(target_arch = "wasm32"), target_feature = "atomics"))]
impl<T> BandBase<T> {
    fn at(&self, i: usize) -> *mut T {
        // SAFETY (callers): i is within the slice the base came from.
        unsafe { self.0.add(i) }
    }
}

// SAFETY: each band is reached by one call only (`bands`), and T: Send.
#[cfg(any(not(target_arch = "wasm32"), target_feature = "atomics"))]
unsafe impl<T: Send> Sync for BandBase<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whole rounds of bands for the threads, each band at least the minimum where the
    /// units allow it, and the bands' starts covering every unit once.
    #[test]
    fn bands_come_in_whole_rounds_for_the_threads() {
        for (units, t, min) in
            [(576, 8, 28), (576, 8, 64), (36, 8, 1), (960, 8, 28), (576, 16, 28), (10, 4, 3), (7, 2, 1)]
        {
            let parts = band_count(units, t, min);
            assert_eq!(parts % t, 0, "{units} units, {t} threads: {parts} bands");
            assert!(parts <= t * MANY_BANDS_PER_THREAD);
            let starts: Vec<usize> = (0..=parts).map(|i| i * units / parts).collect();
            let sizes: Vec<usize> = starts.windows(2).map(|w| w[1] - w[0]).collect();
            assert_eq!(sizes.iter().sum::<usize>(), units);
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(hi - lo <= 1, "{sizes:?}");
            if parts > t {
                assert!(*lo >= min, "{units} units, {t} threads, min {min}: {sizes:?}");
            }
        }
        // SmolLM2's o rows at 8 threads: two rounds of 36, not 9 bands of 64.
        assert_eq!(band_count(576, 8, 28), 16);
        assert_eq!(band_count(576, 8, 64), 8);
    }

    /// Every unit lands in exactly one band, bands keep their order, and with a cost that
    /// grows along the units (a causal attention's rows) the later bands are the shorter.
    #[test]
    fn bands_by_cost_cover_every_unit_once_and_balance_it() {
        let (units, unit) = (300, 3);
        let mut out = vec![0u32; units * unit + 2];
        let seen = std::sync::Mutex::new(Vec::new());
        for_each_band_by_cost(
            &mut out,
            unit,
            1,
            |i| i + 1,
            |first, band| {
                for v in band.iter_mut() {
                    *v += 1;
                }
                seen.lock().unwrap().push((first, band.len() / unit));
            },
        );
        assert!(out.iter().all(|&v| v == 1), "each value written once");
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        let mut next = 0;
        for &(first, len) in &seen {
            assert_eq!(first, next, "contiguous bands: {seen:?}");
            next += len;
        }
        assert_eq!(next, units);
        let cost = |&(first, len): &(usize, usize)| (first..first + len).map(|i| i + 1).sum::<usize>();
        if seen.len() > 1 {
            let (lo, hi) = (seen.iter().map(cost).min().unwrap(), seen.iter().map(cost).max().unwrap());
            assert!(hi - lo <= units + 1, "band costs {lo}..{hi}: {seen:?}");
            assert!(seen[0].1 > seen[seen.len() - 1].1, "{seen:?}");
        }
    }
}
