//! Deterministic test data without dependencies: one generator (splitmix64) and one
//! generator of random GGUF weights, shared by the GPU kernel tests (`tests/gpu_kernels.rs`),
//! the test page's kernel checks (`crates/web/src/diagnostics.rs`) and the GPU probes, so
//! the same seed gives the same inputs everywhere, on every run. (The CPU kernels' tests,
//! `crates/cpu/src/dot/tests.rs`, keep their xorshift: a digest of results over its
//! stream is pinned, the same natively and in WebAssembly.)

use kindling_gguf::GgmlType;

/// splitmix64 (Steele, Lea and Flood): a 64-bit state, one add and two multiplies a value.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi), from the top 24 bits of one value.
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
    }

    /// Uniform in 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `n` values uniform in [lo, hi).
    pub fn vec(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }

    /// `n` random bytes (the low byte of a value each).
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// f32 values as little-endian bytes (GGUF's F32 data).
pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// f32 → IEEE half bits, rounding the mantissa to nearest; for normal halves (the
/// scales and values used here), zero below the normal range.
pub fn f16_bits(v: f32) -> u16 {
    let b = v.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    if v == 0.0 || exp <= 0 {
        return sign;
    }
    let mant = b & 0x7f_ffff;
    let mut h = ((exp as u32) << 10) | (mant >> 13);
    if mant & 0x1000 != 0 {
        h += 1;
    }
    sign | h as u16
}

/// Random GGUF data for `rows × cols` values of `ty`: float types uniform in [-1, 1);
/// quantized types random quants with sane, normal f16 scales placed where each block
/// layout keeps them, so the dequantized values are of order 0.01..1. `rows × cols`
/// must be whole blocks.
///
/// # Panics
/// For a type with no layout here (none of `GgmlType::ALL` at present).
pub fn random_weight(rng: &mut Rng, ty: GgmlType, rows: usize, cols: usize) -> Vec<u8> {
    let n = rows * cols;
    let put_f16 = |b: &mut [u8], at: usize, v: f32| b[at..at + 2].copy_from_slice(&f16_bits(v).to_le_bytes());
    match ty {
        GgmlType::F32 => f32_bytes(&rng.vec(n, -1.0, 1.0)),
        GgmlType::F16 => rng.vec(n, -1.0, 1.0).iter().flat_map(|&v| f16_bits(v).to_le_bytes()).collect(),
        GgmlType::BF16 => {
            rng.vec(n, -1.0, 1.0).iter().flat_map(|&v| ((v.to_bits() >> 16) as u16).to_le_bytes()).collect()
        }
        _ => {
            let (bb, be) = (ty.block_bytes(), ty.block_elems());
            let mut bytes = rng.bytes(n / be * bb);
            for blk in bytes.chunks_exact_mut(bb) {
                let d = rng.uniform(0.002, 0.03);
                let m = rng.uniform(0.001, 0.02);
                match ty {
                    GgmlType::Q4_0 | GgmlType::Q5_0 | GgmlType::Q8_0 => put_f16(blk, 0, d),
                    GgmlType::Q4_1 | GgmlType::Q5_1 => {
                        put_f16(blk, 0, d);
                        put_f16(blk, 2, -m * 8.0);
                    }
                    GgmlType::Q2K => {
                        put_f16(blk, 80, d);
                        put_f16(blk, 82, m);
                    }
                    GgmlType::Q3K => put_f16(blk, 108, d),
                    GgmlType::Q4K | GgmlType::Q5K => {
                        put_f16(blk, 0, d * 0.1);
                        put_f16(blk, 2, m * 0.1);
                    }
                    GgmlType::Q6K => put_f16(blk, 208, d * 0.05),
                    GgmlType::Q8K => blk[0..4].copy_from_slice(&(d * 0.1).to_le_bytes()),
                    _ => unreachable!("no random layout for {ty:?}"),
                }
            }
            bytes
        }
    }
}

/// A row length of a few whole blocks of `ty` that is, for float types, not a multiple
/// of 4: sizes no workgroup or tile divides.
pub fn awkward_cols(ty: GgmlType) -> usize {
    match ty.block_elems() {
        1 => 77,
        32 => 96,
        _ => 512,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streams the tests were written against: a change here changes every test's inputs.
    #[test]
    fn the_streams_are_fixed() {
        let mut rng = Rng(1);
        assert_eq!(rng.next_u64(), 0x910a_2dec_8902_5cc1);
        let mut rng = Rng(0x5eed);
        let w = random_weight(&mut rng, GgmlType::Q4_0, 1, 32);
        assert_eq!(w.len(), 18);
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(-0.5), 0xb800);
    }

    /// Every type the file format knows has a layout here, and the dequantized values
    /// are finite and of moderate size.
    #[test]
    fn every_type_has_a_random_layout() {
        let mut rng = Rng(7);
        for ty in GgmlType::ALL {
            let cols = ty.block_elems() * 2;
            let w = random_weight(&mut rng, ty, 3, cols);
            assert_eq!(w.len() as u64, ty.bytes_for(3 * cols as u64).expect("size"), "{ty:?}");
            let mut x = vec![0.0; 3 * cols];
            kindling_gguf::dequantize(ty, &w, &mut x).expect("dequantize");
            assert!(x.iter().all(|v| v.is_finite() && v.abs() < 100.0), "{ty:?}");
        }
    }
}
