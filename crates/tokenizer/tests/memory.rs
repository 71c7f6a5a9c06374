//! What building a tokenizer costs in heap: the largest vocabulary here is Qwen2.5's
//! (151,936 tokens, 151,387 merges), and the tokenizer is built in a browser tab
//! (wasm32, one linear memory that never shrinks), so both the bytes kept and the
//! peak during the build matter. A counting allocator measures them; this file is its
//! own test binary so no other test allocates while it measures.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use common::metadata;
use kindling_testdata::RealModel;
use kindling_tokenizer::Tokenizer;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static COUNT: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(now, Relaxed);
            COUNT.fetch_add(1, Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            let now = if new_size >= layout.size() {
                LIVE.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size()
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Relaxed) - (layout.size() - new_size)
            };
            PEAK.fetch_max(now, Relaxed);
            COUNT.fetch_add(1, Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const MB: f64 = 1024.0 * 1024.0;

/// Builds each model's tokenizer from metadata already in memory and reports the heap
/// it keeps, the peak above the starting point, the number of allocations and the
/// time. The bounds are loose, there to catch a regression (a second copy of the
/// vocabulary kept, a quadratic build), not to pin the numbers.
#[test]
fn tokenizer_build_memory() {
    // One test function: the models run one after another, never concurrently.
    for (model, max_kept_mb, max_peak_mb) in
        [(RealModel::SmolLm2, 8.0, 24.0), (RealModel::Gemma3, 24.0, 64.0), (RealModel::Qwen25Coder05B, 24.0, 64.0)]
    {
        // For scale: the parsed GGUF metadata the tokenizer is built from (the gguf
        // crate's, not measured against any bound here).
        let before = LIVE.load(Relaxed);
        let md = metadata(model);
        eprintln!("{}: the parsed metadata holds {:.1} MiB", model.key(), (LIVE.load(Relaxed) - before) as f64 / MB);
        let before = LIVE.load(Relaxed);
        PEAK.store(before, Relaxed);
        let count = COUNT.load(Relaxed);
        let t = Instant::now();
        let tok = Tokenizer::from_metadata(md).expect("tokenizer");
        let took = t.elapsed();
        let kept = (LIVE.load(Relaxed) - before) as f64 / MB;
        let peak = (PEAK.load(Relaxed) - before) as f64 / MB;
        let allocs = COUNT.load(Relaxed) - count;
        eprintln!(
            "{}: {} tokens, built in {took:?}: keeps {kept:.1} MiB, peak +{peak:.1} MiB, {allocs} allocations",
            model.key(),
            tok.vocab_size()
        );
        assert!(kept < max_kept_mb, "{}: the tokenizer keeps {kept:.1} MiB", model.key());
        assert!(peak < max_peak_mb, "{}: building peaks at +{peak:.1} MiB", model.key());
        drop(tok);
    }
}
