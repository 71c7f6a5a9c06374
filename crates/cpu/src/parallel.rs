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

/// Runs `f(first, band)` over `out` cut into contiguous bands of whole units (`unit`
/// values each; `first` is the band's first unit), one band per thread, written in
/// place. Small jobs stay on the calling thread.
pub fn for_each_band<T: Send>(out: &mut [T], unit: usize, min_per_thread: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let units = out.len() / unit.max(1);
    let t = thread_count(units, min_per_thread);
    if t == 1 {
        return f(0, out);
    }
    #[cfg(any(not(target_arch = "wasm32"), target_feature = "atomics"))]
    let per = units.div_ceil(t);
    #[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
    {
        f(0, out)
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
    {
        use rayon::prelude::*;
        out.par_chunks_mut(per * unit).enumerate().for_each(|(i, band)| f(i * per, band));
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let (len, step) = (out.len(), per * unit);
        let base = BandBase(out.as_mut_ptr());
        crate::spin_pool::run(len.div_ceil(step), &|i| {
            let start = i * step;
            // SAFETY: band i is out[start..start + step] (the last one shorter): the
            // bands do not overlap, each is handed to one call, and `out` outlives
            // `run`, which returns when every call has.
            let band = unsafe { std::slice::from_raw_parts_mut(base.at(start), step.min(len - start)) };
            f(i * per, band)
        });
    }
}

/// `out`'s first element, shared by the calls that each take their own band of it.
#[cfg(not(target_arch = "wasm32"))]
struct BandBase<T>(*mut T);

#[cfg(not(target_arch = "wasm32"))]
impl<T> BandBase<T> {
    fn at(&self, i: usize) -> *mut T {
        // SAFETY (callers): i is within the slice the base came from.
        unsafe { self.0.add(i) }
    }
}

// SAFETY: each band is reached by one call only (for_each_band), and T: Send.
#[cfg(not(target_arch = "wasm32"))]
unsafe impl<T: Send> Sync for BandBase<T> {}
