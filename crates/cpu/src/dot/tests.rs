//! Every type's fused kernel against `kindling_gguf::dequantize` + a dot product in
//! f64, on random blocks with awkward scales; and the batch invariance the model
//! tests rely on (a row's result does not depend on the rows beside it).
//!
//! Tolerance: the kernels reorder the sum and factor the scales out of each block
//! (`d·Σq·x + m·Σx`), so their rounding error is bounded by a few f32 ulps of the
//! magnitudes summed, which include the separated scale and minimum terms. We allow
//! `1e-6 · (Σ|w·x| + max|w|·Σ|x|)` (measured: at most 1.3e-7 of it, and 2.8e-7 of
//! Σ|w·x| alone); any indexing or scaling mistake is off by O(1) of it.

use kindling_gguf::GgmlType;

use super::xplanes::plane_at;
use super::{dot_band, dot_rows, dot_rows_on, needs, planes_len, x_planes, x_sums, Lanes, XRow};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn f32(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
}

/// f16 values chosen to be awkward: zero, negative, subnormal, tiny, huge, ordinary.
const SCALES: [u16; 10] = [0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xb555, 0x2e66];

fn f16_bits(rng: &mut Rng) -> [u8; 2] {
    if rng.next() % 3 < 1 {
        SCALES[(rng.next() % SCALES.len() as u64) as usize].to_le_bytes()
    } else {
        // Random finite halves of moderate size (exponent 5..25).
        let e = 5 + rng.next() % 20;
        let v = ((rng.next() & 1) << 15) | (e << 10) | (rng.next() & 0x3ff);
        (v as u16).to_le_bytes()
    }
}

/// Byte offsets of a block's f16 scale fields, to overwrite random bytes with
/// controlled (finite) scales.
fn f16_fields(ty: GgmlType) -> &'static [usize] {
    match ty {
        GgmlType::F16 => &[0],
        GgmlType::Q4_0 | GgmlType::Q5_0 | GgmlType::Q8_0 => &[0],
        GgmlType::Q4_1 | GgmlType::Q5_1 | GgmlType::Q4K | GgmlType::Q5K => &[0, 2],
        GgmlType::Q2K => &[80, 82],
        GgmlType::Q3K => &[108],
        GgmlType::Q6K => &[208],
        _ => &[],
    }
}

fn random_row(ty: GgmlType, blocks: usize, rng: &mut Rng) -> Vec<u8> {
    let bb = ty.block_bytes();
    let mut w: Vec<u8> = (0..blocks * bb).map(|_| rng.next() as u8).collect();
    for b in w.chunks_exact_mut(bb) {
        for &at in f16_fields(ty) {
            b[at..at + 2].copy_from_slice(&f16_bits(rng));
        }
        match ty {
            GgmlType::F32 => b.copy_from_slice(&(rng.f32() * 4.0).to_le_bytes()),
            GgmlType::BF16 => b.copy_from_slice(&((rng.f32() * 4.0).to_bits() >> 16).to_le_bytes()[..2]),
            GgmlType::Q8K => b[..4].copy_from_slice(&(rng.f32() * 0.01).to_le_bytes()),
            _ => {}
        }
    }
    w
}

fn random_x(n: usize, rng: &mut Rng) -> Vec<f32> {
    (0..n)
        .map(|i| match rng.next() % 16 {
            0 => 0.0,
            1 => rng.f32() * 1e3, // outlier activations
            2 => rng.f32() * 1e-6,
            _ => rng.f32() * if i % 7 == 0 { -3.0 } else { 1.0 },
        })
        .collect()
}

/// An activation row prepared as the matmul prepares it.
struct Prepared {
    x: Vec<f32>,
    sums: Vec<f32>,
    planes: Vec<i16>,
    scales: Vec<f32>,
}

impl Prepared {
    fn new(ty: GgmlType, x: Vec<f32>) -> Prepared {
        let need = needs(ty);
        let mut p = Prepared { sums: Vec::new(), planes: Vec::new(), scales: Vec::new(), x };
        if let Some(g) = need.sum_group {
            p.sums = vec![0.0; p.x.len() / g];
            x_sums(&p.x, g, &mut p.sums);
        }
        if need.planes {
            p.planes = vec![0; planes_len(p.x.len())];
            p.scales = vec![0.0; p.x.len() / 32];
            x_planes(&p.x, &mut p.planes, &mut p.scales);
        }
        p
    }

    fn row(&self) -> XRow<'_> {
        XRow { x: &self.x, sums: &self.sums, planes: &self.planes, scales: &self.scales }
    }
}

#[test]
fn fused_dot_matches_dequantize_for_every_type() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for ty in GgmlType::ALL {
        for trial in 0..60 {
            let blocks = 1 + trial
                % if ty.block_elems() == 1 {
                    97
                } else if ty.block_elems() == 32 {
                    9
                } else {
                    3
                };
            let n = blocks * ty.block_elems();
            let w = random_row(ty, blocks, &mut rng);
            let x = random_x(n, &mut rng);
            let mut wf = vec![0.0f32; n];
            kindling_gguf::dequantize(ty, &w, &mut wf).unwrap();
            let want: f64 = wf.iter().zip(&x).map(|(&a, &b)| a as f64 * b as f64).sum();
            let max_w = wf.iter().fold(0.0f64, |m, &v| m.max(v.abs() as f64));
            let mag: f64 = wf.iter().zip(&x).map(|(&a, &b)| (a as f64 * b as f64).abs()).sum::<f64>()
                + max_w * x.iter().map(|&v| v.abs() as f64).sum::<f64>();
            let p = Prepared::new(ty, x.clone());
            for lanes in Lanes::available() {
                let [got] = dot_rows_on::<1>(lanes, ty, &w, [p.row()]);
                let err = (got as f64 - want).abs();
                assert!(
                    err <= 1e-6 * mag,
                    "{ty} {lanes:?} trial {trial}: got {got}, want {want}, err {err:e}, magnitude {mag:e}"
                );
            }
        }
    }
}

#[test]
fn a_rows_result_does_not_depend_on_its_batch() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for ty in GgmlType::ALL {
        let blocks = if ty.block_elems() == 1 { 70 } else { 512 / ty.block_elems() };
        let n = blocks * ty.block_elems();
        let w = random_row(ty, blocks, &mut rng);
        let xs: Vec<Prepared> = (0..4).map(|_| Prepared::new(ty, random_x(n, &mut rng))).collect();
        for lanes in Lanes::available() {
            let four = dot_rows_on::<4>(lanes, ty, &w, [xs[0].row(), xs[1].row(), xs[2].row(), xs[3].row()]);
            for r in 0..4 {
                let [one] = dot_rows_on::<1>(lanes, ty, &w, [xs[r].row()]);
                assert_eq!(one.to_bits(), four[r].to_bits(), "{ty} {lanes:?} row {r}");
            }
        }
    }
}

/// A decode matvec's band of rows (the loop inside the kernel) gives each row's bits.
#[test]
fn a_band_of_rows_gives_each_rows_bits() {
    let mut rng = Rng(0x6a09_e667_f3bc_c908);
    for ty in GgmlType::ALL {
        let blocks = if ty.block_elems() == 1 { 70 } else { 512 / ty.block_elems() };
        let n = blocks * ty.block_elems();
        let w: Vec<u8> = (0..5).flat_map(|_| random_row(ty, blocks, &mut rng)).collect();
        let x = Prepared::new(ty, random_x(n, &mut rng));
        let row_bytes = w.len() / 5;
        let mut band = [f32::NAN; 5];
        dot_band(ty, &w, row_bytes, x.row(), &mut band);
        for (j, w_row) in w.chunks_exact(row_bytes).enumerate() {
            let [one] = dot_rows::<1>(ty, w_row, [x.row()]);
            assert_eq!(band[j].to_bits(), one.to_bits(), "{ty} row {j}");
        }
    }
}

#[test]
fn bad_shapes_and_non_finite_scales_do_not_panic() {
    let mut rng = Rng(7);
    for ty in GgmlType::ALL {
        let w = random_row(ty, 2, &mut rng);
        let p = Prepared::new(ty, random_x(2 * ty.block_elems(), &mut rng));
        // Wrong activation length, missing preparation, truncated weights: no panic.
        for lanes in Lanes::available() {
            let _ = dot_rows_on::<1>(lanes, ty, &w, [XRow { x: p.x.get(1..).unwrap_or(&[]), ..p.row() }]);
            let _ = dot_rows_on::<1>(lanes, ty, &w, [XRow { x: &p.x, ..XRow::default() }]);
            let _ = dot_rows_on::<1>(lanes, ty, &w, [XRow { planes: p.planes.get(1..).unwrap_or(&[]), ..p.row() }]);
            let _ = dot_rows_on::<1>(lanes, ty, &w[..w.len() - 1], [p.row()]);
            // A NaN scale makes the result NaN, as the dequantized dot would be.
            if let Some(&at) = f16_fields(ty).first() {
                let mut w = w.clone();
                w[at..at + 2].copy_from_slice(&0x7e00u16.to_le_bytes());
                assert!(dot_rows_on::<1>(lanes, ty, &w, [p.row()])[0].is_nan(), "{ty} {lanes:?}");
            }
        }
    }
}

#[test]
fn f16_widening_matches_half_for_every_value() {
    for h in 0..=u16::MAX {
        let [lo, hi] = h.to_le_bytes();
        let got = super::simd::f16(lo, hi);
        let want = kindling_gguf::dequant::float::f16_to_f32(lo, hi);
        assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{h:#06x}: {got} vs {want}");
    }
}

#[test]
fn planes_are_exact_for_the_block_maximum_and_within_2_pow_minus_30_of_it() {
    let mut rng = Rng(99);
    for _ in 0..200 {
        let x = random_x(64, &mut rng);
        let (mut planes, mut scales) = (vec![0i16; 128], vec![0.0f32; 2]);
        x_planes(&x, &mut planes, &mut scales);
        for b in 0..2 {
            let xb = &x[32 * b..32 * b + 32];
            let max = xb.iter().fold(0.0f32, |m, v| m.max(v.abs())) as f64;
            for (i, &v) in xb.iter().enumerate() {
                let at = plane_at(b, i);
                let (h, l) = (planes[at] as f64, planes[at + 64] as f64);
                assert!((0.0..32768.0).contains(&l));
                let back = (h * 32768.0 + l) * scales[b] as f64;
                assert!((back - v as f64).abs() <= max * 2f64.powi(-30), "{v} vs {back}");
                if v as f64 == max {
                    assert_eq!(back, max);
                }
            }
        }
    }
    // Non-finite and all-zero blocks.
    let mut x = vec![0.0f32; 64];
    x[40] = f32::INFINITY;
    let (mut planes, mut scales) = (vec![1i16; 128], vec![1.0f32; 2]);
    x_planes(&x, &mut planes, &mut scales);
    assert_eq!(scales[0], 0.0);
    assert!(scales[1].is_nan());
    assert!(planes.iter().all(|&p| p == 0));
}

/// `x_planes`' definition, in f64: `k = 29 - floor(log2 max)` (clamped at 2^-120) and
/// every value `round(x · 2^k)`, halves away from zero, at its place in the planes.
fn planes_in_f64(x: &[f32], planes: &mut [i16], scales: &mut [f32]) {
    planes.fill(0);
    for (b, (xb, s)) in x.chunks_exact(32).zip(scales.iter_mut()).enumerate() {
        let max = xb.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let bad = xb.iter().any(|v| !v.is_finite());
        if bad || max == 0.0 {
            *s = if bad { f32::NAN } else { 0.0 };
            continue;
        }
        let e = (((max as f64).to_bits() >> 52) as i32 - 1023).max(-120);
        let k = 29 - e;
        for (i, v) in xb.iter().enumerate() {
            let q = (*v as f64 * 2f64.powi(k)).round() as i64;
            planes[plane_at(b, i)] = (q >> 15) as i16;
            planes[plane_at(b, i) + 64] = (q & 0x7fff) as i16;
        }
        *s = 2f64.powi(-k) as f32;
    }
}

/// The f32 planes are their f64 definition's, bit for bit: blocks of any f32 bit
/// patterns (subnormals, a few orders of magnitude or all of them, signs mixed, zeros),
/// and values that scale to exact halves; on every lane width this CPU has.
#[test]
fn planes_match_their_f64_definition() {
    let check = |x: &[f32]| {
        let n = x.len();
        let mut want = (vec![0i16; planes_len(n)], vec![0.0f32; n / 32]);
        planes_in_f64(x, &mut want.0, &mut want.1);
        let bits = |s: &[f32]| s.iter().map(|v| if v.is_nan() { u32::MAX } else { v.to_bits() }).collect::<Vec<_>>();
        for lanes in Lanes::available() {
            let mut got = (vec![7i16; planes_len(n)], vec![7.0f32; n / 32]);
            super::xplanes::x_planes_on(lanes, x, &mut got.0, &mut got.1);
            assert_eq!(got.0, want.0, "{lanes:?} {x:?}");
            assert_eq!(bits(&got.1), bits(&want.1), "{lanes:?} {x:?}");
        }
    };
    let mut rng = Rng(7);
    for round in 0..40_000 {
        // A block's values: random bits whose exponents lie within `spread` of a random one.
        let spread = [0u32, 3, 24, 60, 255][round % 5];
        let top = (rng.next() % 255) as u32;
        let x: Vec<f32> = (0..32)
            .map(|_| match rng.next() % 13 {
                0 => 0.0,
                1 => -0.0,
                _ => {
                    let exp = top.saturating_sub((rng.next() as u32) % (spread + 1));
                    f32::from_bits((rng.next() as u32 & 0x807f_ffff) | (exp << 23))
                }
            })
            .collect();
        check(&x);
    }
    // Exact halves at every scale: the maximum fixes k, the others are (n + 1/2) · 2^-k.
    for k in [-98i32, -40, -1, 0, 1, 7, 29, 60, 120, 149] {
        let e = 29 - k;
        let max = if e >= -126 { 2f64.powi(e) } else { 2f64.powi(-126) };
        let x: Vec<f32> = (0..32)
            .map(|i| match i {
                0 => max as f32,
                _ => ((i as f64 * 37.0 + 0.5) * 2f64.powi(-k) * if i % 2 == 0 { 1.0 } else { -1.0 }) as f32,
            })
            .collect();
        check(&x);
    }
    // Non-finite values, with and without a nonzero maximum.
    let mut x = vec![0.0f32; 64];
    x[3] = f32::NAN;
    x[40] = f32::NEG_INFINITY;
    x[41] = 2.5;
    check(&x);
}

/// The wasm32 SIMD128 kernels, the SSE2 and AVX2 ones and the portable ones do the
/// same f32 operations in the same order, so they give the same bits: this digest of
/// every type's results is the same on every lane width this CPU has, natively and
/// under `scripts/test_wasi.sh`.
#[test]
fn results_are_bit_identical_across_targets() {
    for lanes in Lanes::available() {
        let mut rng = Rng(0x5eed);
        let mut digest = 0u64;
        for ty in GgmlType::ALL {
            let blocks = if ty.block_elems() == 1 { 100 } else { 1024 / ty.block_elems() };
            let n = blocks * ty.block_elems();
            let w = random_row(ty, blocks, &mut rng);
            let xs: Vec<Prepared> = (0..4).map(|_| Prepared::new(ty, random_x(n, &mut rng))).collect();
            for v in dot_rows_on::<4>(lanes, ty, &w, [xs[0].row(), xs[1].row(), xs[2].row(), xs[3].row()]) {
                digest = (digest ^ u64::from(v.to_bits())).wrapping_mul(0x100_0000_01b3);
            }
        }
        assert_eq!(digest, DIGEST, "{lanes:?} digest {digest:#x}");
    }
}

/// Row by row (not only through a digest), every lane width against the base lanes,
/// bit for bit, on one and four rows of every type, over lengths that end on each
/// kind of tail (F32/F16/BF16 rows are not multiples of 32).
#[test]
fn every_lane_width_gives_the_same_bits() {
    let mut rng = Rng(0xa5a5_1234);
    for ty in GgmlType::ALL {
        for blocks in [1, 3, if ty.block_elems() == 1 { 197 } else { 2048 / ty.block_elems() }] {
            let n = blocks * ty.block_elems();
            let w = random_row(ty, blocks, &mut rng);
            let xs: Vec<Prepared> = (0..4).map(|_| Prepared::new(ty, random_x(n, &mut rng))).collect();
            let rows = [xs[0].row(), xs[1].row(), xs[2].row(), xs[3].row()];
            let base = dot_rows_on::<4>(Lanes::Base, ty, &w, rows);
            for lanes in Lanes::available() {
                let four = dot_rows_on::<4>(lanes, ty, &w, rows);
                let one = dot_rows_on::<1>(lanes, ty, &w, [rows[2]]);
                let bits = |v: [f32; 4]| v.map(f32::to_bits);
                assert_eq!(bits(four), bits(base), "{ty} {lanes:?} {blocks} blocks");
                assert_eq!(one[0].to_bits(), base[2].to_bits(), "{ty} {lanes:?} {blocks} blocks, one row");
            }
        }
    }
    // Through the public entry too, which takes the widest lanes.
    let w = random_row(GgmlType::Q4K, 4, &mut rng);
    let p = Prepared::new(GgmlType::Q4K, random_x(1024, &mut rng));
    let wide = dot_rows::<1>(GgmlType::Q4K, &w, [p.row()])[0];
    assert_eq!(wide.to_bits(), dot_rows_on::<1>(Lanes::Base, GgmlType::Q4K, &w, [p.row()])[0].to_bits());
}

/// Every half through every lane width's widening (F16 rows), against the reference.
#[test]
fn f16_rows_widen_every_half_exactly_on_every_lane_width() {
    let w: Vec<u8> = (0..=u16::MAX).flat_map(u16::to_le_bytes).collect();
    for lanes in Lanes::available() {
        // One-hot activations read back single weights: 32 per row of 32 halves.
        for (c, chunk) in w.chunks_exact(64).enumerate() {
            for i in 0..32 {
                let mut x = [0.0f32; 32];
                x[i] = 1.0;
                let [got] = dot_rows_on::<1>(lanes, GgmlType::F16, chunk, [XRow { x: &x, ..XRow::default() }]);
                let h = (c * 32 + i) as u16;
                let want = kindling_gguf::dequant::float::f16_to_f32(chunk[2 * i], chunk[2 * i + 1]);
                // A row holding inf or NaN sums to NaN (0·inf); the sign of a zero sum
                // depends on the zeros beside it.
                if want.is_finite() {
                    assert!(
                        got.to_bits() == want.to_bits() || (got == 0.0 && want == 0.0),
                        "{lanes:?} {h:#06x}: {got}"
                    );
                }
            }
        }
    }
}

const DIGEST: u64 = 0xabb4_a0ea_3617_a4e6;

/// The lane implementation a build meant (`KINDLING_EXPECT_LANES`: `wasm-simd128` from
/// scripts/test_wasi.sh, `portable` from scripts/test.sh's `--features portable-lanes` run),
/// so a lost RUSTFLAGS or feature cannot go unseen.
#[test]
fn the_intended_lanes_are_compiled() {
    if let Some(want) = option_env!("KINDLING_EXPECT_LANES") {
        assert_eq!(super::simd::LANES, want);
    }
}
