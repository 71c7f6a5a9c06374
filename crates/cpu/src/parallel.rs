//! Splitting kernel work over threads natively (rayon's pool); one thread in
//! WebAssembly.

use std::sync::atomic::{AtomicUsize, Ordering};

static MAX_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Caps the threads kernels use (0: as many as the machine has).
pub fn set_max_threads(n: usize) {
    MAX_THREADS.store(n, Ordering::Relaxed);
}

pub fn threads() -> usize {
    #[cfg(target_arch = "wasm32")]
    {
        1
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let avail = std::thread::available_parallelism().map_or(1, |n| n.get());
        match MAX_THREADS.load(Ordering::Relaxed) {
            0 => avail,
            m => m.min(avail),
        }
    }
}

/// Runs `f(start, end)` over `0..n` split into contiguous ranges, one per thread, and
/// returns the results in range order. Small jobs stay on the calling thread.
pub fn map_ranges<T: Send>(n: usize, min_per_thread: usize, f: impl Fn(usize, usize) -> T + Sync) -> Vec<T> {
    let t = threads().min(n / min_per_thread.max(1)).max(1);
    if t == 1 {
        return vec![f(0, n)];
    }
    #[cfg(target_arch = "wasm32")]
    {
        vec![f(0, n)]
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        // rayon's pool keeps its threads: spawning per call cost ~200 thread starts
        // per token.
        use rayon::prelude::*;
        let per = n.div_ceil(t);
        (0..t).into_par_iter().map(|i| f((i * per).min(n), ((i + 1) * per).min(n))).collect()
    }
}
