//! Wall time per backend op, for finding where a CPU prefill or decode spends its time on
//! a machine without a profiler (the GPU machine has no `perf`). Off unless
//! `KINDLING_CPU_PROFILE` is set; then the backend prints a table to stderr when it is
//! dropped, one line per op and shape, the most time first:
//!
//!   KINDLING_CPU_PROFILE=1 kindling bench MODEL --backend cpu --threads 16
//!
//! Ops run when they are called on the CPU, so an op's wall time is its cost, threads
//! included. Not on wasm32, which has no clock to read here.

use std::collections::HashMap;

#[cfg(not(target_arch = "wasm32"))]
type Start = std::time::Instant;
#[cfg(target_arch = "wasm32")]
type Start = ();

/// Per op and shape: calls and seconds; none when the clock is off.
#[derive(Default)]
pub struct OpClock(Option<HashMap<String, (u64, f64)>>);

impl OpClock {
    pub fn from_env() -> OpClock {
        let on = cfg!(not(target_arch = "wasm32")) && std::env::var_os("KINDLING_CPU_PROFILE").is_some();
        OpClock(on.then(HashMap::new))
    }

    /// The start of an op, when the clock is on.
    #[inline]
    pub fn start(&self) -> Option<Start> {
        #[cfg(not(target_arch = "wasm32"))]
        return self.0.as_ref().map(|_| std::time::Instant::now());
        #[cfg(target_arch = "wasm32")]
        None
    }

    /// Adds the time since `start` to the op `name()` names (called only when on, so the
    /// name is formatted only then).
    #[inline]
    pub fn stop(&mut self, start: Option<Start>, name: impl FnOnce() -> String) {
        #[cfg(not(target_arch = "wasm32"))]
        if let (Some(start), Some(totals)) = (start, &mut self.0) {
            let t = totals.entry(name()).or_default();
            t.0 += 1;
            t.1 += start.elapsed().as_secs_f64();
        }
        #[cfg(target_arch = "wasm32")]
        let _ = (start, name);
    }

    /// [`OpClock::stop`] for an op known by its name and its batch's kind alone.
    #[inline]
    pub fn stop_op(&mut self, start: Option<Start>, op: &str, batch: usize) {
        self.stop(start, || format!("{op} {}", rows_kind(batch)))
    }

    fn report(totals: &HashMap<String, (u64, f64)>) -> String {
        let mut rows: Vec<_> = totals.iter().collect();
        rows.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1));
        let all: f64 = rows.iter().map(|r| r.1 .1).sum();
        let mut s = format!("CPU ops, {} thread(s): {:.1} ms in all\n", crate::parallel::threads(), all * 1e3);
        s += "      ms   share     calls    us/call  op\n";
        for (name, &(calls, secs)) in rows {
            s += &format!(
                "{:8.1} {:6.1}% {:9} {:10.1}  {name}\n",
                secs * 1e3,
                100.0 * secs / all.max(f64::MIN_POSITIVE),
                calls,
                secs * 1e6 / calls.max(1) as f64
            );
        }
        s
    }
}

impl Drop for OpClock {
    fn drop(&mut self) {
        if let Some(totals) = self.0.as_ref().filter(|t| !t.is_empty()) {
            eprint!("{}", OpClock::report(totals));
        }
    }
}

/// A batch's kind for an op's name: decode (one row) or prefill.
pub fn rows_kind(n: usize) -> &'static str {
    if n == 1 {
        "decode"
    } else {
        "batch"
    }
}
