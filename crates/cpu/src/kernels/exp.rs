//! The exponential the kernels share: plain f32 operations, the same bits on every lane
//! width and target.

/// `e^x` for `x ≤ 0` (a softmax's shifted scores, a sigmoid's `-|x|`), each lane in
/// plain f32 operations (no library call, no fused multiply-add), so every lane width and
/// target gives the same bits: `x = k · ln 2 + r` with `|r| ≤ ln 2 / 2`, `e^r` by its
/// Taylor polynomial to `r^7` (truncation under 1e-8), times `2^k` written into the
/// exponent. Below -87 (`e^x < 2^-125`, nothing beside the largest weight's 1) it is 0;
/// NaN stays NaN.
#[inline(always)]
pub fn exp_nonpositive<const W: usize>(x: &mut [f32; W]) {
    // Adding 1.5 · 2^23 rounds to an integer, which lands in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 in two parts: the first has few enough bits that k times it is exact.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const C: [f32; 7] = [1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0];
    for v in x.iter_mut() {
        let under = *v < -87.0;
        let c = if under { -87.0 } else { *v };
        let kr = c * LOG2_E + ROUND;
        let k = kr - ROUND;
        let ki = (kr.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
        let r = (c - k * LN2_HI) - k * LN2_LO;
        let poly = C.iter().fold(0.0f32, |acc, &c| acc * r + c) * r + 1.0;
        let scale = f32::from_bits((ki.wrapping_add(127) << 23) as u32);
        *v = if under { 0.0 } else { poly * scale };
    }
}
