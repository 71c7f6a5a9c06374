//! Which lane width the kernels run at: the compiled-in lanes everywhere ([`Lanes::Base`]),
//! and on x86_64 AVX2 (with AVX-VNNI where present) when the CPU has it, detected once
//! and cached. `KINDLING_CPU_LANES=base` (or `avx2`) caps the choice, to compare them.

use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lanes {
    /// `simd::LANES`: SSE2 on x86_64, SIMD128 on wasm32, else plain arrays.
    Base,
    /// 256-bit AVX2 integer and f32 lanes, F16C half widening.
    #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
    Avx2,
    /// [`Lanes::Avx2`] with AVX-VNNI's fused multiply-add-accumulate.
    #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
    Avx2Vnni,
}

impl Lanes {
    /// Every width this build knows, narrowest first.
    const ALL: &'static [Lanes] = &[
        Lanes::Base,
        #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
        Lanes::Avx2,
        #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
        Lanes::Avx2Vnni,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Lanes::Base => super::LANES,
            #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
            Lanes::Avx2 => "avx2",
            #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
            Lanes::Avx2Vnni => "avx2-vnni",
        }
    }

    /// Whether this CPU runs these lanes.
    pub fn supported(self) -> bool {
        match self {
            Lanes::Base => true,
            #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
            Lanes::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                    && std::arch::is_x86_feature_detected!("f16c")
            }
            #[cfg(all(target_arch = "x86_64", not(feature = "portable-lanes")))]
            Lanes::Avx2Vnni => Lanes::Avx2.supported() && std::arch::is_x86_feature_detected!("avxvnni"),
        }
    }

    /// The widths this CPU runs, narrowest first (the tests run each).
    pub fn available() -> Vec<Lanes> {
        Lanes::ALL.iter().copied().filter(|l| l.supported()).collect()
    }

    /// The widest supported width, at most the one `KINDLING_CPU_LANES` names;
    /// detected on the first call.
    pub fn best() -> Lanes {
        static CHOSEN: AtomicU8 = AtomicU8::new(u8::MAX);
        let i = CHOSEN.load(Ordering::Relaxed);
        if let Some(&l) = Lanes::ALL.get(usize::from(i)) {
            return l;
        }
        let cap = std::env::var("KINDLING_CPU_LANES").ok();
        let cap =
            cap.and_then(|c| Lanes::ALL.iter().copied().find(|l| l.name() == c || (c == "base" && *l == Lanes::Base)));
        let l = Lanes::available().into_iter().rfind(|l| cap.is_none_or(|c| *l <= c)).unwrap_or(Lanes::Base);
        let i = Lanes::ALL.iter().position(|a| *a == l).unwrap_or(0);
        CHOSEN.store(i as u8, Ordering::Relaxed);
        l
    }
}
