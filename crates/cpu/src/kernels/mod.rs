//! CPU kernels, one family per file. Inputs are plain slices so each kernel can be
//! tested (and later vectorised) on its own.

mod attention;
mod exp;
mod gemm;
mod matmul;
mod norm;
mod qgemm;
#[cfg(test)]
mod reference;
mod rope;
mod wide;

pub use attention::{attention, store_keys, Rows, KEY_BLOCK};
pub use matmul::{matmul, matvecs, Matvec, MatvecScratch, Scratch};
pub use norm::{activation, gated, layer_norm, rms_norm};
pub use qgemm::QGEMM_ROWS;
pub use rope::{rope_row, RopeAngles};

/// Asks for every `step`-th value of `s` ahead of its use (`step`: a cache line's worth).
/// A hint only: nothing off x86_64.
#[inline(always)]
fn prefetch<T>(s: &[T], step: usize) {
    #[cfg(target_arch = "x86_64")]
    for at in (0..s.len()).step_by(step.max(1)) {
        // SAFETY: `at < s.len()`; a prefetch reads nothing and cannot fault.
        unsafe { core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(s.as_ptr().add(at).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, step);
}

/// The first `len` values of a scratch vector whose user writes every one of them before
/// reading: it grows (zero-filled) when short and is not cleared otherwise. Cleared on
/// every call, a threaded prefill matmul's output scratch was a serial memset of the
/// whole output, one thread's work while the others waited.
fn overwritten(v: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if v.len() < len {
        v.resize(len, 0.0);
    }
    &mut v[..len]
}
