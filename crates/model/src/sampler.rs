//! Token sampling on the host: repetition penalty, top-k, top-p, min-p, temperature,
//! and a seeded random draw. Same seed and logits → same token, on every platform.
//!
//! The order follows llama.cpp's default chain (penalties → top-k → top-p → min-p →
//! temperature → draw), so the knobs mean what users of llama.cpp expect.

/// Sampling settings. The defaults are greedy decoding.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplerConfig {
    /// 0 (or less) picks the most likely token; otherwise logits are divided by it.
    pub temperature: f32,
    /// Keep the k most likely tokens (0: all).
    pub top_k: usize,
    /// Keep the smallest set of tokens whose probability adds up to p (1.0: all).
    pub top_p: f32,
    /// Drop tokens less likely than `min_p × p(most likely)` (0.0: none).
    pub min_p: f32,
    /// Divide positive (multiply negative) logits of recently seen tokens (1.0: off).
    pub repetition_penalty: f32,
    /// How many recent tokens the repetition penalty looks at.
    pub repeat_last_n: usize,
    pub seed: u64,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            temperature: 0.0,
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            repetition_penalty: 1.0,
            repeat_last_n: 64,
            seed: 0,
        }
    }
}

impl SamplerConfig {
    /// Greedy decoding: the backend's argmax gives the token, no logits are read.
    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0 && self.repetition_penalty == 1.0
    }

    /// Rejects settings that cannot mean anything (NaN, negative k, p outside [0,1]).
    pub fn validate(&self) -> Result<(), String> {
        if !self.temperature.is_finite() {
            return Err(format!("temperature must be a finite number, got {}", self.temperature));
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return Err(format!("top_p must be in (0, 1], got {}", self.top_p));
        }
        if !(0.0..=1.0).contains(&self.min_p) {
            return Err(format!("min_p must be in [0, 1], got {}", self.min_p));
        }
        if !(self.repetition_penalty.is_finite() && self.repetition_penalty > 0.0) {
            return Err(format!("repetition_penalty must be positive, got {}", self.repetition_penalty));
        }
        Ok(())
    }
}

/// A sampler with its random state.
#[derive(Clone, Debug)]
pub struct Sampler {
    config: SamplerConfig,
    rng: SplitMix64,
}

impl Sampler {
    pub fn new(config: SamplerConfig) -> Self {
        let rng = SplitMix64(config.seed);
        Sampler { config, rng }
    }

    pub fn config(&self) -> &SamplerConfig {
        &self.config
    }

    /// Picks the next token from `logits` (one vocabulary row), given the tokens so far.
    pub fn sample(&mut self, logits: &[f32], history: &[u32]) -> u32 {
        let cand: Vec<(u32, f32)> = logits.iter().enumerate().map(|(i, &l)| (i as u32, l)).collect();
        self.sample_from(cand, history)
    }

    /// How many of the largest logits (with their ids) decide this step exactly, when
    /// that is few enough to be worth reading back instead of the whole row (a GPU
    /// selects them): the top k, plus one for every distinct token the repetition
    /// penalty may push down below them (a penalty only lowers logits, so no token
    /// outside that many can enter the top k). None: the step needs every logit (no
    /// top-k limit, or a penalty below 1 that raises logits).
    pub fn candidates_needed(&self, history: &[u32]) -> Option<usize> {
        let c = &self.config;
        let keep = if c.temperature <= 0.0 { 1 } else { c.top_k };
        if keep == 0 || c.repetition_penalty < 1.0 {
            return None;
        }
        let penalized = if c.repetition_penalty == 1.0 { 0 } else { recent_distinct(history, c.repeat_last_n).len() };
        Some(keep + penalized).filter(|&k| k <= MAX_CANDIDATES)
    }

    /// `sample` from the `candidates_needed` largest logits only (ids and values, any
    /// order): the same token `sample` picks from the whole row.
    pub fn sample_candidates(&mut self, candidates: &[(u32, f32)], history: &[u32]) -> u32 {
        self.sample_from(candidates.to_vec(), history)
    }

    fn sample_from(&mut self, mut cand: Vec<(u32, f32)>, history: &[u32]) -> u32 {
        let c = &self.config;
        if c.repetition_penalty != 1.0 {
            let seen = recent_distinct(history, c.repeat_last_n);
            for e in cand.iter_mut().filter(|e| seen.binary_search(&e.0).is_ok()) {
                e.1 = if e.1 > 0.0 { e.1 / c.repetition_penalty } else { e.1 * c.repetition_penalty };
            }
        }

        if c.temperature <= 0.0 {
            return argmax(&cand);
        }

        // Most likely first; ties by lower id so the order is deterministic.
        cand.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if c.top_k > 0 && c.top_k < cand.len() {
            cand.truncate(c.top_k);
        }
        if c.top_p < 1.0 {
            let p = softmax(&cand, 1.0);
            let mut sum = 0.0;
            let keep = p.iter().position(|&pi| {
                sum += pi;
                sum >= c.top_p as f64
            });
            cand.truncate(keep.map_or(cand.len(), |i| i + 1));
        }
        if c.min_p > 0.0 {
            let p = softmax(&cand, 1.0);
            let floor = p[0] * c.min_p as f64;
            let keep = p.iter().take_while(|&&pi| pi >= floor).count().max(1);
            cand.truncate(keep);
        }
        let p = softmax(&cand, c.temperature);
        let r = self.rng.next_f64();
        let mut acc = 0.0;
        for (i, pi) in p.iter().enumerate() {
            acc += pi;
            if r < acc {
                return cand[i].0;
            }
        }
        cand[cand.len() - 1].0
    }
}

/// The id of the largest value (the lowest id on ties, in any order of `cand`).
pub fn argmax(cand: &[(u32, f32)]) -> u32 {
    let mut best = (u32::MAX, f32::NEG_INFINITY);
    for &(id, l) in cand {
        if l > best.1 || (l == best.1 && id < best.0) {
            best = (id, l);
        }
    }
    if best.0 == u32::MAX {
        0
    } else {
        best.0
    }
}

/// Most candidates `Sampler::candidates_needed` asks for.
pub const MAX_CANDIDATES: usize = 256;

/// The distinct ids among the last `n` of `history`, sorted.
fn recent_distinct(history: &[u32], n: usize) -> Vec<u32> {
    let mut seen = history[history.len().saturating_sub(n)..].to_vec();
    seen.sort_unstable();
    seen.dedup();
    seen
}

/// Probabilities of the candidates at `temperature`, in f64 for a stable sum.
fn softmax(cand: &[(u32, f32)], temperature: f32) -> Vec<f64> {
    let t = temperature as f64;
    let max = cand.iter().map(|c| c.1 as f64).fold(f64::NEG_INFINITY, f64::max);
    let mut p: Vec<f64> = cand.iter().map(|c| ((c.1 as f64 - max) / t).exp()).collect();
    let sum: f64 = p.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        p.iter_mut().for_each(|x| *x /= sum);
    }
    p
}

/// SplitMix64: tiny, fast and identical on every platform (no dependency needed).
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 bits.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logits() -> Vec<f32> {
        vec![1.0, 3.0, 2.5, -1.0, 0.5, 2.9]
    }

    /// Sampling from the `candidates_needed` largest logits picks exactly the token the
    /// whole row gives, whatever the penalties, ties and filters.
    #[test]
    fn candidates_decide_the_same_token_as_the_whole_row() {
        let mut state = 0x1234_5678_u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        let mut checked = 0;
        for case in 0..400 {
            let vocab = 50 + (next() % 400) as usize;
            // Coarse values: many ties, some negative (the penalty multiplies those).
            let logits: Vec<f32> = (0..vocab).map(|_| (next() % 41) as f32 * 0.25 - 5.0).collect();
            let history: Vec<u32> = (0..(next() % 80)).map(|_| next() % vocab as u32).collect();
            let config = SamplerConfig {
                temperature: [0.0, 0.7, 1.3][case % 3],
                top_k: [1, 5, 40, 0][(case / 3) % 4],
                top_p: [1.0, 0.9, 0.5][(case / 12) % 3],
                min_p: [0.0, 0.05][(case / 36) % 2],
                repetition_penalty: [1.0, 1.3, 1.1][(case / 72) % 3],
                repeat_last_n: 64,
                seed: case as u64,
            };
            let mut whole = Sampler::new(config.clone());
            let mut part = Sampler::new(config);
            let Some(k) = part.candidates_needed(&history) else { continue };
            for step in 0..4 {
                let want = whole.sample(&logits, &history);
                let got = part.sample_candidates(&crate::backend::top_k(&logits, k), &history);
                assert_eq!(got, want, "case {case} step {step}: {:?}, k {k}", part.config());
                checked += 1;
            }
        }
        assert!(checked > 800, "only {checked} steps had candidates");
    }

    #[test]
    fn candidates_are_not_enough_without_a_top_k_or_with_a_penalty_below_one() {
        let s = |temperature, top_k, repetition_penalty| {
            Sampler::new(SamplerConfig { temperature, top_k, repetition_penalty, ..Default::default() })
        };
        assert_eq!(s(1.0, 0, 1.0).candidates_needed(&[1, 2]), None);
        assert_eq!(s(1.0, 40, 0.9).candidates_needed(&[1, 2]), None);
        assert_eq!(s(1.0, 40, 1.0).candidates_needed(&[1, 2]), Some(40));
        assert_eq!(s(1.0, 40, 1.2).candidates_needed(&[1, 2, 2]), Some(42));
        assert_eq!(s(0.0, 0, 1.2).candidates_needed(&[7]), Some(2));
        assert_eq!(s(1.0, MAX_CANDIDATES, 1.2).candidates_needed(&[7]), None);
    }

    #[test]
    fn greedy_takes_the_largest_and_lowest_index_on_ties() {
        let mut s = Sampler::new(SamplerConfig::default());
        assert_eq!(s.sample(&logits(), &[]), 1);
        assert_eq!(s.sample(&[2.0, 5.0, 5.0], &[]), 1);
    }

    #[test]
    fn same_seed_same_tokens_and_different_seeds_differ() {
        let cfg = SamplerConfig { temperature: 1.5, seed: 42, ..Default::default() };
        let run = |cfg: SamplerConfig| {
            let mut s = Sampler::new(cfg);
            (0..64).map(|_| s.sample(&logits(), &[])).collect::<Vec<_>>()
        };
        assert_eq!(run(cfg.clone()), run(cfg.clone()));
        assert_ne!(run(cfg.clone()), run(SamplerConfig { seed: 7, ..cfg }));
    }

    #[test]
    fn top_k_one_is_greedy() {
        let mut s = Sampler::new(SamplerConfig { temperature: 5.0, top_k: 1, seed: 3, ..Default::default() });
        for _ in 0..32 {
            assert_eq!(s.sample(&logits(), &[]), 1);
        }
    }

    #[test]
    fn top_p_and_min_p_restrict_the_support() {
        // p ∝ exp(logits): tokens 1 (3.0), 5 (2.9) and 2 (2.5) hold most of the mass.
        let mut s = Sampler::new(SamplerConfig { temperature: 1.0, top_p: 0.5, seed: 9, ..Default::default() });
        for _ in 0..200 {
            assert!([1, 5].contains(&s.sample(&logits(), &[])));
        }
        let mut s = Sampler::new(SamplerConfig { temperature: 1.0, min_p: 0.8, seed: 9, ..Default::default() });
        for _ in 0..200 {
            assert!([1, 5].contains(&s.sample(&logits(), &[])));
        }
    }

    #[test]
    fn repetition_penalty_moves_greedy_off_a_seen_token() {
        let cfg = SamplerConfig { repetition_penalty: 1.5, ..Default::default() };
        let mut s = Sampler::new(cfg);
        // 3.0 / 1.5 = 2.0 < 2.9: token 5 wins once token 1 was seen.
        assert_eq!(s.sample(&logits(), &[1]), 5);
    }

    #[test]
    fn validate_rejects_nonsense() {
        assert!(SamplerConfig { top_p: 0.0, ..Default::default() }.validate().is_err());
        assert!(SamplerConfig { temperature: f32::NAN, ..Default::default() }.validate().is_err());
        assert!(SamplerConfig { min_p: 2.0, ..Default::default() }.validate().is_err());
        assert!(SamplerConfig::default().validate().is_ok());
    }
}
