//! Running an f32 kernel written once, generic over its lane count, at the widest lanes
//! the CPU has: 16 on x86_64 with AVX2 or AVX-512 (compiled for them here, detected at
//! run time), 4 otherwise (SSE2, SIMD128). The kernels built on this give every output
//! its own lane, so each width computes the same bits.

/// Lanes of one step on the wide path: one AVX-512 register, two AVX2 ones.
pub const WIDE: usize = 16;
/// Lanes of one step on the base path: one SSE2 or SIMD128 register.
pub const BASE: usize = 4;

/// A kernel generic over its lane count. `run` and everything it calls must be
/// `#[inline(always)]`, so that it is compiled inside the wider-lane functions below
/// with their target features (a call out of them would run at the base width).
pub trait LaneKernel {
    fn run<const W: usize>(self);
}

/// Runs `k` at the widest lanes this CPU has, unless `KINDLING_CPU_LANES=base` caps them.
#[inline]
pub fn run_widest<K: LaneKernel>(k: K) {
    #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
    if crate::dot::Lanes::best() != crate::dot::Lanes::Base {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: detected just above.
            return unsafe { x86::avx512(k) };
        }
        // SAFETY: every lane width above the base has AVX2.
        return unsafe { x86::avx2(k) };
    }
    k.run::<BASE>()
}

/// Runs `k` at the base width (the tests compare the widths).
#[cfg(test)]
pub fn run_base<K: LaneKernel>(k: K) {
    k.run::<BASE>()
}

#[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
mod x86 {
    use super::{LaneKernel, WIDE};

    #[target_feature(enable = "avx512f")]
    pub unsafe fn avx512<K: LaneKernel>(k: K) {
        k.run::<WIDE>()
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn avx2<K: LaneKernel>(k: K) {
        k.run::<WIDE>()
    }
}
