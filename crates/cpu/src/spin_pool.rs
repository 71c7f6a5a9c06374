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
//! A job is `parts` calls `f(i)`, `i < parts`, shared by `n` threads (the caller and the
//! first `n - 1` workers). Each of them owns a slot: a word of its own cache line that
//! packs the job's number and a contiguous range of parts, from which it claims one part
//! at a time with a compare-and-swap; when its range is empty it claims from the others'
//! slots, so a thread that is slow for the moment takes fewer parts. Each thread adds
//! its count of finished parts to `done` once, when it finds none left.
//!
//! Why slots: when every thread claimed from one shared word and counted every part on
//! the same cache line, each claim and each count took that line from the other cores,
//! one after the other. On the GPU machine's Xeon a job of four parts a thread cost 5.1 µs
//! beyond its work at 8 threads and 12.2 µs at 16; with slots, 2.3 and 3.1 µs
//! (`bench/results/cpu-pool-slots.md`). A thread's claims now stay in its own cache, and
//! a job moves a few lines once each.
//!
//! A claim succeeds only on a word of the job the thread read from `epoch`, and only in
//! the job's `n` slots, so a thread that wakes late can never run a part of a job that has
//! finished or that did not ask for it. The caller runs parts too, then waits until every
//! part is done. A job that panics in a worker is resumed on the caller, so the caller
//! never hangs.

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

/// A value alone on its cache line (two lines: some CPUs fetch lines in pairs), so
/// that writes to it do not take its neighbours' lines from the cores reading them.
#[repr(align(128))]
struct Line<T>(T);

struct Pool {
    /// (job number << 32) | slots of the job: the one word idle workers watch, written
    /// once a job.
    epoch: Line<AtomicU64>,
    /// Slot s: (job number << 32) | (end << 16) | next, the parts of its range not yet
    /// claimed. Slot 0 is the caller's, slot w + 1 worker w's.
    slots: Box<[Line<AtomicU64>]>,
    /// Parts of the current job finished (run or panicked).
    done: Line<AtomicUsize>,
    /// The current job, written by the caller before it publishes the job's slots and
    /// read only by a thread that has claimed one of its parts (so the job is still
    /// running).
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
const JOB_MASK: u64 = 0xffff_ffff;

fn pack(job: u64, end: usize, next: usize) -> u64 {
    (job << 32) | ((end as u64) << PART_BITS) | next as u64
}

fn end_and_next(word: u64) -> (usize, usize) {
    (((word >> PART_BITS) as usize) & MAX_PARTS, (word as usize) & MAX_PARTS)
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        epoch: Line(AtomicU64::new(0)),
        slots: (0..cores().min(MAX_PARTS)).map(|_| Line(AtomicU64::new(0))).collect(),
        done: Line(AtomicUsize::new(0)),
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
/// the pool's workers (each takes the next part of its range, then of the others', when
/// it is done with one), and returns when all have returned. A panic in any part is
/// resumed here once every part has finished.
pub fn run(threads: usize, parts: usize, f: &(dyn Fn(usize) + Sync)) {
    let pool = pool();
    let n = threads.min(parts).min(pool.slots.len());
    let busy = match pool.busy.try_lock() {
        Ok(guard) if n > 1 && parts <= MAX_PARTS => guard,
        _ => return run_inline(parts, f),
    };
    pool.start_workers(n - 1);
    // SAFETY: no part of the previous job is claimable (every slot's range is empty and
    // every claimed part has finished: `done` reached its count), and no other caller
    // holds `busy`. The lifetime is erased; the pointer is dropped from use before `run`
    // returns, since every part is done by then.
    unsafe {
        let f: Job = std::mem::transmute::<&(dyn Fn(usize) + Sync), &'static (dyn Fn(usize) + Sync)>(f);
        *pool.job.get() = Some(f);
    }
    pool.done.0.store(0, Ordering::Relaxed);
    let job = (pool.epoch.0.load(Ordering::Relaxed) >> 32).wrapping_add(1) & JOB_MASK;
    for (s, slot) in pool.slots[..n].iter().enumerate() {
        slot.0.store(pack(job, (s + 1) * parts / n, s * parts / n), Ordering::Release);
    }
    pool.epoch.0.store((job << 32) | n as u64, Ordering::SeqCst);
    if pool.sleepers.load(Ordering::SeqCst) > 0 {
        let _lock = pool.sleep_lock.lock().unwrap_or_else(|e| e.into_inner());
        pool.wake.notify_all();
    }
    pool.take_parts(0, job, n);
    while pool.done.0.load(Ordering::Acquire) < parts {
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
    /// Runs parts of job `job` (of `n` slots) from slot `me`'s range, then from the other
    /// slots' in turn, until none is left; then counts them as done.
    fn take_parts(&self, me: usize, job: u64, n: usize) {
        let mut ran = 0;
        for k in 0..n {
            let slot = &self.slots[(me + k) % n].0;
            while let Some(part) = Self::claim(slot, job) {
                self.run_part(part);
                ran += 1;
            }
        }
        if ran > 0 {
            self.done.0.fetch_add(ran, Ordering::Release);
        }
    }

    /// The next part of `slot`'s range, if the slot holds job `job` and has one left.
    fn claim(slot: &AtomicU64, job: u64) -> Option<usize> {
        let mut word = slot.load(Ordering::Acquire);
        loop {
            let (end, next) = end_and_next(word);
            if word >> 32 != job || next >= end {
                return None;
            }
            match slot.compare_exchange_weak(word, word + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(next),
                Err(now) => word = now,
            }
        }
    }

    fn run_part(&self, part: usize) {
        // SAFETY: this thread holds an unfinished part of the job `job` holds, so the
        // caller is still in `run` and the closure alive (see `run`).
        let f = unsafe { (*self.job.get()).expect("a claimable job has its closure") };
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe { (*f)(part) })) {
            self.panic.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(p);
            self.panicked.store(true, Ordering::Release);
        }
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

    /// Worker `worker`'s loop: each job it sees once, taking parts from slot `worker + 1`
    /// if the job has that many slots.
    fn work(&self, worker: usize) {
        let me = worker + 1;
        // No job number: the first job seen is taken part in (a finished one gives no
        // parts), so a worker started for a job is not left out of it.
        let mut seen = u64::MAX;
        let mut idle_since = Instant::now();
        let mut spins = 0u32;
        loop {
            let epoch = self.epoch.0.load(Ordering::Acquire);
            let (job, n) = (epoch >> 32, (epoch & JOB_MASK) as usize);
            if job != seen {
                seen = job;
                if me < n {
                    self.take_parts(me, job, n);
                }
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
            if self.epoch.0.load(Ordering::SeqCst) >> 32 == seen {
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

    /// What a job costs beyond its parts' work (an ignored test, run by hand):
    /// `cargo test --release -p kindling-cpu --lib job_overhead -- --ignored --nocapture`,
    /// `KINDLING_POOL_THREADS=8` for other thread counts. Parts of about a microsecond,
    /// four a thread, as a decode step's small matvecs cut them.
    #[test]
    #[ignore]
    fn job_overhead() {
        let threads: usize = std::env::var("KINDLING_POOL_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(2);
        let work = |i: usize| {
            let mut x = i as u64;
            for _ in 0..300 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            std::hint::black_box(x);
        };
        let parts = 4 * threads;
        let jobs = 20_000;
        let time = |f: &dyn Fn()| {
            (0..5)
                .map(|_| {
                    let t = Instant::now();
                    for _ in 0..jobs {
                        f();
                    }
                    t.elapsed().as_secs_f64() * 1e6 / jobs as f64
                })
                .fold(f64::MAX, f64::min)
        };
        let alone = time(&|| (0..parts).for_each(work));
        let pooled = time(&|| run(threads, parts, &work));
        let ideal = alone / threads as f64;
        println!(
            "{threads} threads, {parts} parts of {:.2} us: {pooled:.2} us a job, {ideal:.2} us ideal, {:.2} us over",
            alone / parts as f64,
            pooled - ideal
        );
    }
}
