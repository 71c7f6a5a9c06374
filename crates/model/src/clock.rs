//! A monotonic clock that also runs in the browser, where std's `Instant` panics:
//! there `instant` reads `performance.now()`.

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub(crate) use instant::Instant;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub(crate) use std::time::Instant;
