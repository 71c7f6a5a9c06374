//! Weight storage on the GPU: rows repacked so every block starts on a 4-byte word
//! boundary (the kernels read `array<u32>`), tensors split by whole rows across
//! buffers no larger than the device's storage binding limit, and the streaming
//! upload that turns GGUF byte ranges into aligned `queue.write_buffer` calls.

use std::sync::Arc;

use kindling_gguf::GgmlType;

use crate::pipelines::BufId;

/// How one type's blocks are stored on the GPU.
#[derive(Clone, Copy, Debug)]
pub struct Packing {
    /// Bytes of a GGUF block.
    pub src_bytes: usize,
    /// Bytes of a stored block (a multiple of 4 for the quantized types).
    pub dst_bytes: usize,
    /// Field moves (src offset, dst offset, length) that align the block's fields;
    /// bytes not covered are zero padding. Empty: the block is copied as it is.
    pub moves: &'static [(usize, usize, usize)],
}

impl Packing {
    pub fn of(ty: GgmlType) -> Packing {
        match ty {
            // d | pad | qs[16]
            GgmlType::Q4_0 => Packing { src_bytes: 18, dst_bytes: 20, moves: &[(0, 0, 2), (2, 4, 16)] },
            // d | pad | qh | qs[16]
            GgmlType::Q5_0 => Packing { src_bytes: 22, dst_bytes: 24, moves: &[(0, 0, 2), (2, 4, 4), (6, 8, 16)] },
            // d | pad | qs[32]
            GgmlType::Q8_0 => Packing { src_bytes: 34, dst_bytes: 36, moves: &[(0, 0, 2), (2, 4, 32)] },
            // Floats: rows are padded to whole words as a whole.
            GgmlType::F32 | GgmlType::F16 | GgmlType::BF16 => {
                Packing { src_bytes: ty.block_bytes(), dst_bytes: ty.block_bytes(), moves: &[] }
            }
            // Already aligned inside; Q3_K (110) and Q6_K (210) get 2 bytes of tail padding.
            _ => Packing { src_bytes: ty.block_bytes(), dst_bytes: ty.block_bytes().next_multiple_of(4), moves: &[] },
        }
    }
}

/// Bytes of one stored row of `cols` values (a whole number of words).
pub fn stored_row_bytes(ty: GgmlType, cols: usize) -> usize {
    let p = Packing::of(ty);
    (cols / ty.block_elems() * p.dst_bytes).next_multiple_of(4)
}

/// Appends the stored form of one GGUF row to `dst`.
pub fn repack_row(ty: GgmlType, src: &[u8], dst: &mut Vec<u8>) {
    let p = Packing::of(ty);
    let start = dst.len();
    if p.src_bytes == p.dst_bytes {
        dst.extend_from_slice(src);
    } else {
        for block in src.chunks_exact(p.src_bytes) {
            let at = dst.len();
            dst.resize(at + p.dst_bytes, 0);
            if p.moves.is_empty() {
                dst[at..at + p.src_bytes].copy_from_slice(block);
            }
            for &(s, d, n) in p.moves {
                dst[at + d..at + d + n].copy_from_slice(&block[s..s + n]);
            }
        }
    }
    let padded = start + (dst.len() - start).next_multiple_of(4);
    dst.resize(padded, 0);
}

/// One buffer holding rows `row0..row0 + rows` of a tensor.
#[derive(Clone, Copy, Debug)]
pub struct Part {
    pub buf: BufId,
    pub row0: usize,
    pub rows: usize,
}

/// A weight on the GPU.
#[derive(Debug)]
pub struct GpuWeight {
    pub(crate) name: String,
    /// Type of the stored data (F32 for one-row tensors, dequantized at upload).
    pub(crate) ty: GgmlType,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    /// u32 words per stored row.
    pub(crate) row_words: usize,
    /// Shared: every matmul over the weight holds them while it is pending, so taking
    /// them in the token loop must not allocate.
    pub(crate) parts: Arc<[Part]>,
    /// Host copy of one-row tensors (norm weights, RoPE factors) as f32 (shared, as
    /// `parts`: a held rope keeps the RoPE factors).
    pub(crate) dense: Option<Arc<[f32]>>,
    pub(crate) upload: Upload,
}

/// Streaming state of a weight's upload.
#[derive(Debug, Default)]
pub(crate) struct Upload {
    /// The GGUF type and row size of the incoming bytes.
    pub src_ty: Option<GgmlType>,
    pub src_row_bytes: usize,
    /// Bytes of the tensor received so far.
    pub received: u64,
    pub total: u64,
    /// The unfinished row (or, for one-row tensors, everything so far).
    pub pending: Vec<u8>,
    /// Rows uploaded so far.
    pub next_row: usize,
}

impl GpuWeight {
    /// The type the kernels read (after one-row tensors were widened to F32).
    pub fn stored_type(&self) -> GgmlType {
        self.ty
    }

    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The part holding row `row`.
    pub(crate) fn part_of(&self, row: usize) -> Option<(usize, &Part)> {
        self.parts.iter().enumerate().find(|(_, p)| row >= p.row0 && row < p.row0 + p.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_blocks_are_whole_words() {
        for ty in GgmlType::ALL {
            let p = Packing::of(ty);
            assert_eq!(p.src_bytes, ty.block_bytes(), "{ty:?}");
            if ty.block_elems() > 1 {
                assert_eq!(p.dst_bytes % 4, 0, "{ty:?}");
            }
            if !p.moves.is_empty() {
                let moved: usize = p.moves.iter().map(|m| m.2).sum();
                assert_eq!(moved, p.src_bytes, "{ty:?} moves every byte");
            }
        }
        assert_eq!(stored_row_bytes(GgmlType::F16, 37), 76);
        assert_eq!(stored_row_bytes(GgmlType::Q8_0, 64), 72);
        assert_eq!(stored_row_bytes(GgmlType::Q6K, 256), 212);
    }

    #[test]
    fn q4_0_moves_scale_and_quants_to_words() {
        let src: Vec<u8> = (0..36u8).collect(); // two blocks
        let mut dst = Vec::new();
        repack_row(GgmlType::Q4_0, &src, &mut dst);
        assert_eq!(dst.len(), 40);
        assert_eq!(&dst[0..4], &[0, 1, 0, 0]);
        assert_eq!(&dst[4..20], &src[2..18]);
        assert_eq!(&dst[20..24], &[18, 19, 0, 0]);
    }
}
