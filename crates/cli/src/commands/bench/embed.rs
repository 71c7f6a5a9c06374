//! `kindling bench` on an encoder (nomic-bert, bert): embedding throughput instead of
//! decoding. `--inputs N` inputs of exactly `--input-tokens T` tokens each go through
//! `Model::embed` as one request (one warm-up, then `--repeat` timed requests, the
//! median reported): inputs/s and tokens/s, the figures bench/embed.sh sets beside
//! llama.cpp's `llama-server --embedding` and the npm package through Dawn.

use std::time::Instant;

use kindling_model::{Backend, Model};

use crate::load::Error;

/// What to embed and how often.
pub struct EmbedBench {
    pub inputs: usize,
    pub input_tokens: usize,
    pub repeat: usize,
}

/// The timed requests of one run.
pub struct EmbedFigures {
    /// Seconds of each timed request (warm-up excluded), in order.
    pub runs_s: Vec<f64>,
    /// The median of `runs_s`.
    pub seconds: f64,
    /// The first input's first 8 token ids and its last one, framing included (for
    /// the record: what was embedded).
    pub head: Vec<u32>,
    pub last: u32,
}

impl EmbedFigures {
    pub fn inputs_per_s(&self, b: &EmbedBench) -> f64 {
        b.inputs as f64 / self.seconds.max(1e-12)
    }

    pub fn tokens_per_s(&self, b: &EmbedBench) -> f64 {
        (b.inputs * b.input_tokens) as f64 / self.seconds.max(1e-12)
    }
}

/// `count` inputs of exactly `tokens` ids each, framed as the tokenizer frames a text
/// (`[CLS] ... [SEP]` for BERT: the special tokens `encode("", add_special)` gives), the
/// body ordinary (non-control, known) ids spread over the vocabulary, each input
/// starting elsewhere. Content does not change an encoder's speed; validity keeps the
/// run honest (the ids are checked like any request's).
pub fn bench_inputs<B: Backend>(model: &Model<B>, count: usize, tokens: usize) -> Result<Vec<Vec<u32>>, Error> {
    let tok = model.tokenizer();
    let framing = tok.encode("", true, false);
    let vocab = model.config().vocab_size.min(tok.vocab_size()) as u32;
    let limit = model.config().context_length.min(model.max_batch());
    if tokens <= framing.len() || tokens > limit {
        return Err(format!(
            "--input-tokens {tokens}: must be more than the {} special token(s) the tokenizer adds and at most the model's context of {limit}",
            framing.len()
        )
        .into());
    }
    if count == 0 {
        return Err("--inputs must be at least 1".into());
    }
    let ordinary = |id: u32| !tok.is_control(id) && Some(id) != tok.unk() && Some(id) != tok.pad();
    let (head, tail) = match framing.as_slice() {
        [] => (None, None),
        [one] if Some(*one) == tok.bos() => (Some(*one), None),
        [one] => (None, Some(*one)),
        [first, .., last] => (Some(*first), Some(*last)),
    };
    let body = tokens - framing.len();
    let mut n = 0u64;
    let mut next = || loop {
        let id = 1 + ((n * 7919) % u64::from(vocab.saturating_sub(1).max(1))) as u32;
        n += 1;
        if ordinary(id) {
            return id;
        }
        if n > 16 * u64::from(vocab) {
            return id; // a vocabulary of only special tokens: any id will do
        }
    };
    let inputs = (0..count)
        .map(|_| {
            let mut ids = Vec::with_capacity(tokens);
            ids.extend(head);
            ids.extend((0..body).map(|_| next()));
            ids.extend(tail);
            ids
        })
        .collect();
    Ok(inputs)
}

/// A warm-up request and `repeat` timed ones of the same inputs.
pub fn measure_embed<B: Backend>(model: &mut Model<B>, b: &EmbedBench) -> Result<EmbedFigures, Error> {
    let inputs = bench_inputs(model, b.inputs, b.input_tokens)?;
    let mut runs_s = Vec::new();
    for rep in 0..b.repeat.max(1) + 1 {
        let t = Instant::now();
        let vectors = pollster::block_on(model.embed(&inputs, false))?;
        let s = t.elapsed().as_secs_f64();
        if vectors.len() != inputs.len() {
            return Err(format!("{} vectors for {} inputs", vectors.len(), inputs.len()).into());
        }
        if rep > 0 {
            runs_s.push(s); // rep 0 warms up: pipelines, the encoder's session
        }
    }
    let mut sorted = runs_s.clone();
    sorted.sort_by(f64::total_cmp);
    let seconds = sorted[sorted.len() / 2];
    let first = &inputs[0];
    Ok(EmbedFigures { runs_s, seconds, head: first.iter().copied().take(8).collect(), last: first[first.len() - 1] })
}
