//! CPU kernels, one family per file. Inputs are plain slices so each kernel can be
//! tested (and later vectorised) on its own.

mod attention;
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
