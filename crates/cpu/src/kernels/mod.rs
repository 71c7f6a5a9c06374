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
pub use rope::rope_row;
