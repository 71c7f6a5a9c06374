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

/// One value through `act`.
fn act_one(g: f32, act: Activation) -> f32 {
    match act {
        Activation::Silu => g / (1.0 + (-g).exp()),
        Activation::GeluTanh => {
            const SQRT_2_OVER_PI: f32 = 0.797_884_6;
            let inner = SQRT_2_OVER_PI * (g + 0.044_715 * g * g * g);
            0.5 * g * (1.0 + inner.tanh())
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
        let mut x = [1.0f32, -1.0];
        activation(&mut x, Activation::GeluTanh);
        assert!((x[0] - 0.841_192).abs() < 1e-5 && (x[1] + 0.158_808).abs() < 1e-5, "{x:?}");
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
