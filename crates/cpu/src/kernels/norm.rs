//! RMS norm and the gated activations.

use kindling_model::Activation;

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

/// `out = act(gate) * up`.
pub fn gated(gate: &[f32], up: &[f32], act: Activation, out: &mut [f32]) {
    match act {
        Activation::Silu => {
            for ((o, &g), &u) in out.iter_mut().zip(gate).zip(up) {
                *o = g / (1.0 + (-g).exp()) * u;
            }
        }
        Activation::GeluTanh => {
            const SQRT_2_OVER_PI: f32 = 0.797_884_6;
            for ((o, &g), &u) in out.iter_mut().zip(gate).zip(up) {
                let inner = SQRT_2_OVER_PI * (g + 0.044_715 * g * g * g);
                *o = 0.5 * g * (1.0 + inner.tanh()) * u;
            }
        }
    }
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
    }
}
