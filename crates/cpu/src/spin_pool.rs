//! The native thread pool: workers that spin between jobs, then sleep.
//!
//! A decode step of a small model is hundreds of short parallel sections (a matmul of a
//! few hundred rows takes tens of microseconds), each a fork and a join. On rayon's pool a
//! section started by waking sleeping threads. On 8 and 16 threads of the GPU machine
//! SmolLM2 decoded at the same 34 tok/s; on this pool, 116–149 (both figures in
//! `bench/results/cpu-native-h200.md`, the second with other changes between). Here the
//! workers spin on one atomic word for up to `SPIN` after their last part, so the next
//! section finds them awake. They sleep on a condition variable after that, so an idle
//! model costs nothing.
//!
//! A job is `parts` calls `f(i)`, `i < parts`. The word `next` packs the job's number,
//! its part count and the next unclaimed part. A thread claims a part with one
//! compare-and-swap, and that fails once the word has moved on to a later job. So a
//! thread that wakes late can never run a part of a job that has already finished. The
//! caller runs parts too, then waits until every part is done. A job that panics in a
//! worker is resumed on the caller, so the caller never hangs.

use std::any::Any;
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a worker spins after its last part before it sleeps: longer than the gaps
/// between a decode step's sections, and between steps, on the machines measured.
const SPIN: Duration = Duration::from_millis(2);

type Job = *const (dyn Fn(usize) + Sync);

struct Pool {
    /// (job number << 32) | (parts << 16) | next part.
    next: AtomicU64,
    /// Parts of the current job finished (run or panicked).
    done: AtomicUsize,
    /// Workers that may take parts of the current job: the first `helpers` started. A job
    /// has more parts than threads so that a thread that is slow for the moment (these
    /// machines share their cores) takes fewer of them, and no more threads than asked.
    helpers: AtomicUsize,
    /// The current job, written by the caller before it publishes `next` and read only by
    /// a thread that has claimed one of its parts (so the job is still running).
    job: UnsafeCell<Option<Job>>,
    /// The first panic of the current job's parts, and whether there is one (so a job
    /// without takes no lock for it).
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    panicked: AtomicBool,
    /// One job at a time; a caller that finds the pool busy (another thread's job, or a
    /// part starting a job of its own) runs its parts itself.
    busy: Mutex<()>,
    /// Workers started (read without the lock: most jobs need no new one), and those
    /// asleep.
    started: AtomicUsize,
    workers: Mutex<()>,
    sleepers: AtomicUsize,
    wake: Condvar,
    sleep_lock: Mutex<()>,
}

// SAFETY: `job` is written only by the thread holding `busy`, while no part of a job is
// claimable, and read only by threads that claimed a part of the job it holds.
unsafe impl Sync for Pool {}
// SAFETY: as above; the pool lives in a static and is never moved between threads.
unsafe impl Send for Pool {}

const PART_BITS: u32 = 16;
const MAX_PARTS: usize = (1 << PART_BITS) - 1;

fn pack(job: u64, parts: usize, next: usize) -> u64 {
    (job << 32) | ((parts as u64) << PART_BITS) | next as u64
}

fn parts_and_next(word: u64) -> (usize, usize) {
    (((word >> PART_BITS) as usize) & MAX_PARTS, (word as usize) & MAX_PARTS)
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        next: AtomicU64::new(0),
        done: AtomicUsize::new(0),
        helpers: AtomicUsize::new(0),
        job: UnsafeCell::new(None),
        panic: Mutex::new(None),
        panicked: AtomicBool::new(false),
        busy: Mutex::new(()),
        started: AtomicUsize::new(0),
        workers: Mutex::new(()),
        sleepers: AtomicUsize::new(0),
        wake: Condvar::new(),
        sleep_lock: Mutex::new(()),
    })
}

/// Threads this machine runs at once (the pool's size, the caller included).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Calls `f(i)` for every `i < parts`, on the calling thread and up to `threads - 1` of
/// the pool's workers (each takes the next part left when it is done with one), and
/// returns when all have returned. A panic in any part is resumed here once every part
/// has finished.
pub fn run(threads: usize, parts: usize, f: &(dyn Fn(usize) + Sync)) {
    let pool = pool();
    let helpers = threads.min(parts).saturating_sub(1);
    let busy = match pool.busy.try_lock() {
        Ok(guard) if helpers > 0 && parts <= MAX_PARTS => guard,
        _ => return run_inline(parts, f),
    };
    pool.start_workers(helpers);
    // Published with `next` below: a worker that sees the job sees this too.
    pool.helpers.store(helpers, Ordering::Relaxed);
    // SAFETY: no part of the previous job is claimable (`next` is at its part count and
    // every claimed part has finished: `done` reached it), and no other caller holds
    // `busy`. The lifetime is erased; the pointer is dropped from use before `run`
    // returns, since every part is done by then.
    unsafe {
        let f: Job = std::mem::transmute::<&(dyn Fn(usize) + Sync), &'static (dyn Fn(usize) + Sync)>(f);
        *pool.job.get() = Some(f);
    }
    pool.done.store(0, Ordering::Relaxed);
    let job = (pool.next.load(Ordering::Relaxed) >> 32).wrapping_add(1) & 0xffff_ffff;
    pool.next.store(pack(job, parts, 0), Ordering::SeqCst);
    if pool.sleepers.load(Ordering::SeqCst) > 0 {
        let _lock = pool.sleep_lock.lock().unwrap_or_else(|e| e.into_inner());
        pool.wake.notify_all();
    }
    while pool.run_a_part(None) {}
    while pool.done.load(Ordering::Acquire) < parts {
        std::hint::spin_loop();
    }
    let panic = match pool.panicked.swap(false, Ordering::Acquire) {
        true => pool.panic.lock().unwrap_or_else(|e| e.into_inner()).take(),
        false => None,
    };
    drop(busy);
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

/// `run` on the calling thread alone (the pool busy, or one part): every part runs, and
/// the first panic is resumed after the last, as on the pool.
fn run_inline(parts: usize, f: &(dyn Fn(usize) + Sync)) {
    let mut first = None;
    for i in 0..parts {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(i))) {
            first.get_or_insert(p);
        }
    }
    if let Some(p) = first {
        resume_unwind(p);
    }
}

impl Pool {
    /// Claims and runs one part of the current job; false if none is left, or if this is
    /// worker `worker` (counted from 0) and the job does not want that many.
    fn run_a_part(&self, worker: Option<usize>) -> bool {
        let mut word = self.next.load(Ordering::Acquire);
        loop {
            let (parts, next) = parts_and_next(word);
            if next >= parts || worker.is_some_and(|w| w >= self.helpers.load(Ordering::Relaxed)) {
                return false;
            }
            match self.next.compare_exchange_weak(word, word + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => word = now,
            }
        }
        let part = parts_and_next(word).1;
        // SAFETY: this thread holds an unfinished part of the job `job` holds, so the
        // caller is still in `run` and the closure alive (see `run`).
        let f = unsafe { (*self.job.get()).expect("a claimable job has its closure") };
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe { (*f)(part) })) {
            self.panic.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(p);
            self.panicked.store(true, Ordering::Release);
        }
        self.done.fetch_add(1, Ordering::Release);
        true
    }

    fn start_workers(&'static self, want: usize) {
        let want = want.min(cores().saturating_sub(1));
        if self.started.load(Ordering::Acquire) >= want {
            return;
        }
        // Only this lock's holder changes `started`, so its count is read once.
        let _lock = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        let mut n = self.started.load(Ordering::Acquire);
        while n < want {
            let spawned =
                std::thread::Builder::new().name(format!("kindling-cpu-{}", n + 1)).spawn(move || self.work(n));
            if spawned.is_err() {
                break; // fewer workers: the caller runs the parts left
            }
            n += 1;
            self.started.store(n, Ordering::Release);
        }
    }

    fn work(&self, worker: usize) {
        let mut idle_since = Instant::now();
        let mut spins = 0u32;
        loop {
            if self.run_a_part(Some(worker)) {
                idle_since = Instant::now();
                spins = 0;
                continue;
            }
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(256) || idle_since.elapsed() < SPIN {
                std::hint::spin_loop();
                continue;
            }
            let lock = self.sleep_lock.lock().unwrap_or_else(|e| e.into_inner());
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            let (parts, next) = parts_and_next(self.next.load(Ordering::SeqCst));
            if next >= parts {
                // A bounded wait: a wake-up lost to anything unforeseen costs a moment.
                let _ = self.wake.wait_timeout(lock, Duration::from_millis(100));
            }
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
            idle_since = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_part_runs_once_from_many_callers_and_nested_jobs_run_inline() {
        std::thread::scope(|s| {
            for caller in 0..4u32 {
                s.spawn(move || {
                    for parts in [2usize, 3, 7, 16, 64] {
                        let hits: Vec<AtomicU32> = (0..parts).map(|_| AtomicU32::new(0)).collect();
                        run(parts, parts, &|i| {
                            // A part starting a job of its own: runs it on its thread.
                            let inner = AtomicU32::new(0);
                            run(3, 3, &|_| {
                                inner.fetch_add(1, Ordering::Relaxed);
                            });
                            assert_eq!(inner.load(Ordering::Relaxed), 3);
                            hits[i].fetch_add(caller + 1, Ordering::Relaxed);
                        });
                        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == caller + 1), "{parts} parts");
                    }
                });
            }
        });
    }

    /// More parts than threads: every part runs once, on no more threads than asked.
    #[test]
    fn parts_beyond_the_threads_run_once_on_as_many_threads_as_asked() {
        for threads in [2, 3] {
            let hits: Vec<AtomicU32> = (0..40).map(|_| AtomicU32::new(0)).collect();
            let ran_on = Mutex::new(std::collections::HashSet::new());
            run(threads, 40, &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
                ran_on.lock().unwrap().insert(std::thread::current().id());
                std::thread::sleep(Duration::from_micros(50));
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            let used = ran_on.into_inner().unwrap().len();
            assert!(used <= threads, "{used} threads for a job of {threads}");
        }
    }

    #[test]
    fn a_panicking_part_reaches_the_caller_after_the_others_finish() {
        let done = AtomicU32::new(0);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            run(8, 8, &|i| {
                if i == 5 {
                    panic!("part 5");
                }
                done.fetch_add(1, Ordering::Relaxed);
            })
        }));
        assert!(caught.is_err());
        assert_eq!(done.load(Ordering::Relaxed), 7);
        // The pool still runs jobs.
        let sum = AtomicU32::new(0);
        run(4, 4, &|i| {
            sum.fetch_add(i as u32, Ordering::Relaxed);
        });
        assert_eq!(sum.load(Ordering::Relaxed), 6);
    }
}
