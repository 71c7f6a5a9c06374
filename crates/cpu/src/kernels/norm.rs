//! RMS norm and the gated activations.

use kindling_model::Activation;

use super::exp::exp_nonpositive;
use super::wide::{self, LaneKernel};

/// In place over consecutive groups of `group` values: `x * w / sqrt(mean(x²) + eps)`.
/// The mean is accumulated in f64 so the norm does not depend on the group length.
pub fn rms_norm(x: &mut [f32], w: &[f32], group: usize, eps: f32) {
    for g in x.chunks_exact_mut(group) {
        let ss: f64 = g.iter().map(|&v| (v as f64) * (v as f64)).sum();
        let scale = (1.0 / (ss / group as f64 + eps as f64).sqrt()) as f32;
        for (v, &wi) in g.iter_mut().zip(w) {
            *v = *v * scale * wi;
        }
    }
}

/// In place over rows of `w.len()` values: `(x - mean) / sqrt(var + eps) * w + b`
/// (BERT's LayerNorm; the biased variance, as PyTorch and ggml take it). Moments in
/// f64, like `rms_norm`.
pub fn layer_norm(x: &mut [f32], w: &[f32], b: &[f32], eps: f32) {
    let cols = w.len();
    if cols == 0 {
        return;
    }
    for row in x.chunks_exact_mut(cols) {
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / cols as f64;
        let var = row.iter().map(|&v| (v as f64 - mean) * (v as f64 - mean)).sum::<f64>() / cols as f64;
        let scale = 1.0 / (var + eps as f64).sqrt();
        for ((v, &wi), &bi) in row.iter_mut().zip(w).zip(b) {
            *v = ((*v as f64 - mean) * scale) as f32 * wi + bi;
        }
    }
}

/// `x = act(x)` in place (a feed-forward without a gate: BERT's GELU).
pub fn activation(x: &mut [f32], act: Activation) {
    for v in x.iter_mut() {
        *v = act_one(*v, act);
    }
}

/// One value through `act`: the gated path's lanes, one lane (the same bits).
fn act_one(g: f32, act: Activation) -> f32 {
    times_activated::<1>(act, &[g], &[1.0])[0]
}

/// `out = act(gate) * up`.
pub fn gated(gate: &[f32], up: &[f32], act: Activation, out: &mut [f32]) {
    wide::run_widest(Gated { gate, up, act, out })
}

/// `out = act(gate) * up` in lanes. Both activations are `g · sigmoid(z)`: SiLU with
/// `z = g`, and GELU's tanh form `0.5·g·(1 + tanh(y))` is `g · sigmoid(2y)`, with
/// `y = √(2/π)·(g + 0.044715·g³)` (no cancellation in `1 + tanh` where `y` is very
/// negative). `sigmoid(z)` is `1 / (1 + e)` for `z ≥ 0` and `e / (1 + e)` below, `e =
/// e^-|z|` ([`exp_nonpositive`]), so no lane overflows (silu(-inf) is 0, not libm's NaN)
/// and every width gives the same bits. Value by value through libm, SiLU took 5–7 µs of
/// a SmolLM2 decode layer on the Xeon and GELU 34 µs of a Gemma 3 one on this Zen 4, on
/// one thread while the others waited.
struct Gated<'a> {
    gate: &'a [f32],
    up: &'a [f32],
    act: Activation,
    out: &'a mut [f32],
}

impl LaneKernel for Gated<'_> {
    #[inline(always)]
    fn run<const W: usize>(self) {
        let n = self.out.len().min(self.gate.len()).min(self.up.len());
        let (gate, up, out) = (&self.gate[..n], &self.up[..n], &mut self.out[..n]);
        let whole = n / W * W;
        for ((g, u), o) in gate.chunks_exact(W).zip(up.chunks_exact(W)).zip(out.chunks_exact_mut(W)) {
            let (g, u): (&[f32; W], &[f32; W]) = (g.try_into().unwrap(), u.try_into().unwrap());
            *<&mut [f32; W]>::try_from(o).unwrap() = times_activated::<W>(self.act, g, u);
        }
        // The last values padded to a whole step (lane by lane, so the same bits).
        let (mut g, mut u) = ([0.0f32; W], [0.0f32; W]);
        g[..n - whole].copy_from_slice(&gate[whole..]);
        u[..n - whole].copy_from_slice(&up[whole..]);
        let r = times_activated::<W>(self.act, &g, &u);
        out[whole..].copy_from_slice(&r[..n - whole]);
    }
}

/// `act(g) · u`, lane by lane (see [`Gated`]). Plain loops: a closure (as
/// `array::from_fn` takes) is a function of its own, compiled without the caller's wide
/// lanes.
#[inline(always)]
fn times_activated<const W: usize>(act: Activation, g: &[f32; W], u: &[f32; W]) -> [f32; W] {
    // 2·√(2/π), and GELU's cubic coefficient.
    const TWO_SQRT_2_OVER_PI: f32 = 1.595_769_2;
    const CUBIC: f32 = 0.044_715;
    let mut z = *g;
    if act == Activation::GeluTanh {
        for i in 0..W {
            z[i] = TWO_SQRT_2_OVER_PI * (g[i] + CUBIC * g[i] * g[i] * g[i]);
        }
    }
    let mut e = [0.0f32; W];
    for i in 0..W {
        e[i] = -z[i].abs();
    }
    exp_nonpositive(&mut e);
    let mut out = [0.0f32; W];
    for i in 0..W {
        // Both sides computed, then chosen, so that the lanes stay in vectors. e = 0: z
        // below -87 or -inf, where the product is 0 to f32 (and -inf · 0 NaN).
        let below = if e[i] == 0.0 { 0.0 } else { g[i] * e[i] };
        let num = if z[i] >= 0.0 { g[i] } else { below };
        out[i] = num / (1.0 + e[i]) * u[i];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rms_norm_of_constant_is_weight() {
        let mut x = vec![3.0f32; 8];
        rms_norm(&mut x, &[2.0; 4], 4, 0.0);
        assert!(x.iter().all(|v| (v - 2.0).abs() < 1e-6));
    }

    #[test]
    fn activations_at_known_points() {
        let mut o = [0.0f32; 2];
        gated(&[0.0, 1.0], &[1.0, 2.0], Activation::Silu, &mut o);
        assert!((o[0]).abs() < 1e-7 && (o[1] - 2.0 * 0.731_058_6).abs() < 1e-5);
        gated(&[0.0, 1.0], &[1.0, 1.0], Activation::GeluTanh, &mut o);
        assert!((o[1] - 0.841_192).abs() < 1e-5, "{}", o[1]);
        let mut x = [1.0f32, -1.0];
        activation(&mut x, Activation::GeluTanh);
        assert!((x[0] - 0.841_192).abs() < 1e-5 && (x[1] + 0.158_808).abs() < 1e-5, "{x:?}");
    }

    /// The lane SiLU and GELU are within 4 f32 ulps of their f64 definitions over gates
    /// from -100 to 100 (GELU: plus what its f32 argument's rounding moves; 0 where `e^z`
    /// is), the same bits at every lane
    /// width, for lengths that end mid-step; NaN stays NaN, ±inf give inf and 0.
    #[test]
    fn activations_in_lanes_match_f64_and_every_width() {
        let n = 4001;
        let gate: Vec<f32> = (0..n).map(|i| (i as f32 - 2000.0) * 0.05 + (i % 7) as f32 * 1e-3).collect();
        let up: Vec<f32> = (0..n).map(|i| 1.0 + (i % 5) as f32 * 0.25).collect();
        for act in [Activation::Silu, Activation::GeluTanh] {
            let mut wide_out = vec![0.0f32; n];
            gated(&gate, &up, act, &mut wide_out);
            let mut base_out = vec![0.0f32; n];
            super::wide::run_base(Gated { gate: &gate, up: &up, act, out: &mut base_out });
            for i in 0..n {
                assert_eq!(wide_out[i].to_bits(), base_out[i].to_bits(), "{act:?} gate {}", gate[i]);
                let g = gate[i] as f64;
                // Both are g · sigmoid(z); GELU's z is twice its tanh's argument.
                let z = match act {
                    Activation::Silu => g,
                    Activation::GeluTanh => 2.0 * (2.0 / std::f64::consts::PI).sqrt() * (g + 0.044715 * g * g * g),
                };
                // GELU's 0.5·g·(1 + tanh(z/2)) in f64 would cancel to 0 where z is very
                // negative; g / (1 + e^-z) is the same function without that.
                let want = g / (1.0 + (-z).exp()) * up[i] as f64;
                let ulp = (want.abs() as f32).max(f32::MIN_POSITIVE).to_bits();
                // GELU's z is itself an f32 result, off by a few roundings; sigmoid(z)
                // moves by |z| times that, relatively, where z is very negative.
                let z_err = if act == Activation::GeluTanh { want.abs() * z.abs() * 2f64.powi(-21) } else { 0.0 };
                let tol = 4.0 * (f32::from_bits(ulp + 1) - f32::from_bits(ulp)) as f64 + z_err;
                // 0 where e^z is (z below -87): under 2^-120 of the gate.
                let vanishing = z < -87.0 && wide_out[i] == 0.0;
                assert!(
                    (wide_out[i] as f64 - want).abs() <= tol || vanishing,
                    "{act:?} gate {g}: {} vs {want}",
                    wide_out[i]
                );
            }
            let mut o = [0.0f32; 3];
            gated(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY], &[1.0; 3], act, &mut o);
            assert!(o[0].is_nan() && o[1] == f32::INFINITY && o[2] == 0.0, "{act:?} {o:?}");
        }
    }

    #[test]
    fn layer_norm_centres_scales_and_shifts() {
        // Row [1, 2, 3, 4]: mean 2.5, biased variance 1.25.
        let mut x = vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 5.0, 5.0, 5.0];
        layer_norm(&mut x[..4], &[1.0, 2.0, 1.0, 1.0], &[0.0, 0.0, 0.5, 0.0], 0.0);
        let s = 1.25f32.sqrt();
        let want = [-1.5 / s, 2.0 * -0.5 / s, 0.5 / s + 0.5, 1.5 / s];
        for (a, b) in x[..4].iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{a} {b}");
        }
        // A constant row has no spread: the output is the bias (eps keeps it finite).
        layer_norm(&mut x[4..], &[1.0; 4], &[0.25; 4], 1e-12);
        assert!(x[4..].iter().all(|v| (v - 0.25).abs() < 1e-6), "{x:?}");
    }
}
