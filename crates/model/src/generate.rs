//! Token-by-token generation: prefill, sample, stop on end-of-generation tokens, stop
//! strings or limits, and hand out text pieces that never split a UTF-8 character or
//! show the beginning of a stop string that may still complete.

use kindling_tokenizer::StreamDecoder;

use crate::backend::{Backend, CHAINED_STEPS};
use crate::constraint::{Constraint, ConstraintSpec};
use crate::engine::{EvalOutput, Evaluated, Model, Session};
use crate::error::{ModelError, Result};
use crate::sampler::{Sampler, SamplerConfig};

#[derive(Clone, Debug, PartialEq)]
pub struct GenerateOptions {
    /// Most tokens to generate.
    pub max_tokens: usize,
    pub sampler: SamplerConfig,
    /// Generation stops before the first occurrence of any of these strings.
    pub stop: Vec<String>,
    /// Stop at the model's end-of-generation tokens (EOS, end-of-turn).
    pub stop_at_eog: bool,
    /// What the output must be (a JSON schema, a regex, a grammar); `None`: free text.
    pub constraint: Option<ConstraintSpec>,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        GenerateOptions {
            max_tokens: 256,
            sampler: SamplerConfig::default(),
            stop: Vec::new(),
            stop_at_eog: true,
            constraint: None,
        }
    }
}

/// Why generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinishReason {
    /// The model produced an end-of-generation token.
    EndOfGeneration,
    /// A stop string appeared.
    StopString,
    /// `max_tokens` were generated.
    MaxTokens,
    /// The session's context is full.
    ContextFull,
    /// The constrained output is complete: the constraint allows nothing more, or the
    /// model ended it where the constraint allowed an end.
    ConstraintComplete,
}

impl FinishReason {
    /// The name used in JSON output and the JS API.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::EndOfGeneration => "eos",
            FinishReason::StopString => "stop",
            FinishReason::MaxTokens => "length",
            FinishReason::ContextFull => "context_full",
            // OpenAI's name for a reply that ended by itself.
            FinishReason::ConstraintComplete => "stop",
        }
    }
}

/// One generated token and the text it releases (possibly empty: half a character or
/// a possible stop-string start is held back until it resolves). The last piece may
/// carry no token: it releases the text held back when generation ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub token_id: Option<u32>,
    pub text: String,
}

/// A generation in progress. Drive it with `next` until it returns `None`.
pub struct Generation {
    options: GenerateOptions,
    sampler: Sampler,
    decoder: StreamDecoder,
    prompt: Vec<u32>,
    generated: Vec<u32>,
    /// Text released so far.
    text: String,
    /// Decoded text not yet released because a stop string may start in it.
    held: String,
    finish: Option<FinishReason>,
    /// Whether the prompt has been evaluated.
    prefilled: bool,
    /// Chained greedy decoding (`Model::can_chain`): steps submitted whose token has
    /// not been read yet (below `CHAINED_STEPS` between calls).
    in_flight: usize,
    /// `options.constraint` compiled over the model's vocabulary (`compile_constraint`,
    /// or the first step).
    constraint: Option<Constraint>,
}

impl Generation {
    pub fn new(prompt: Vec<u32>, options: GenerateOptions) -> Result<Self> {
        if prompt.is_empty() {
            return Err(ModelError::InvalidRequest("the prompt is empty: give at least one token".into()));
        }
        options.sampler.validate().map_err(ModelError::InvalidRequest)?;
        Ok(Generation {
            sampler: Sampler::new(options.sampler.clone()),
            options,
            decoder: StreamDecoder::new(false),
            prompt,
            generated: Vec::new(),
            text: String::new(),
            held: String::new(),
            finish: None,
            prefilled: false,
            in_flight: 0,
            constraint: None,
        })
    }

    /// Compiles the options' constraint over `model`'s vocabulary now, so that a bad
    /// schema, regex or grammar fails before any prompt work (`ModelError::InvalidRequest`).
    /// The first step does it otherwise.
    pub fn compile_constraint<B: Backend>(&mut self, model: &Model<B>) -> Result<()> {
        if let (None, Some(spec)) = (&self.constraint, &self.options.constraint) {
            self.constraint = Some(model.compile_constraint(spec)?);
        }
        Ok(())
    }

    fn is_constrained(&self) -> bool {
        self.options.constraint.is_some()
    }

    pub fn prompt(&self) -> &[u32] {
        &self.prompt
    }

    pub fn generated(&self) -> &[u32] {
        &self.generated
    }

    /// The text released so far (without a stop string that ended it).
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn finish_reason(&self) -> Option<FinishReason> {
        self.finish
    }

    /// Evaluates the next `batch` tokens of the prompt into the KV cache, when more of it
    /// than that is left; returns how many prompt tokens are in the cache afterwards, or
    /// `None` once what is left fits one batch (then `next` evaluates it with the first
    /// token). `next` alone prefills too, in one call: this is for a caller that must
    /// stay responsive between batches, such as the browser's CPU path, where a call
    /// runs to its end before an abort can be heard.
    pub async fn prefill_step<B: Backend>(
        &mut self,
        model: &mut Model<B>,
        session: &mut Session<B>,
        batch: usize,
    ) -> Result<Option<usize>> {
        if self.prefilled || self.finish.is_some() {
            return Ok(None);
        }
        self.compile_constraint(model)?;
        // The prefix this prompt shares with the session (chat turns) stays cached, as in
        // `next`, which picks up from wherever this left the session.
        let common = common_prefix(session.tokens(), &self.prompt).min(self.prompt.len() - 1);
        if self.prompt.len() - common <= batch.max(1) {
            return Ok(None);
        }
        session.truncate(common);
        let end = common + batch.max(1);
        model.eval(session, &self.prompt[common..end], EvalOutput::CacheOnly).await?;
        Ok(Some(end))
    }

    /// Generates the next token. `Ok(None)` once generation has finished.
    pub async fn next<B: Backend>(&mut self, model: &mut Model<B>, session: &mut Session<B>) -> Result<Option<Piece>> {
        if self.finish.is_some() {
            return Ok(None);
        }
        if self.generated.len() >= self.options.max_tokens {
            return Ok(self.end(FinishReason::MaxTokens));
        }
        self.compile_constraint(model)?;
        // A constrained step needs the logits on the host to mask them, so steps cannot
        // run ahead of the token read-back.
        if self.sampler.config().is_greedy() && model.can_chain() && !self.is_constrained() {
            // The session already holds the last token (evaluated ahead), and the
            // inputs of the steps beyond it: the same limit as below, where the last
            // token is evaluated in this call.
            let evaluated = session.tokens().len() + 1 - self.in_flight.max(1);
            if self.prefilled && evaluated >= session.capacity() {
                self.drain(model, session).await?;
                return Ok(self.end(FinishReason::ContextFull));
            }
            let token = self.next_chained(model, session).await?;
            return self.emit(model, session, token).await;
        }
        let history_len = session.tokens().len() + usize::from(self.prefilled);
        if history_len >= session.capacity() {
            return Ok(self.end(FinishReason::ContextFull));
        }
        // The history the sampler sees (the session's tokens once this step's are in):
        // only the repetition penalty's window of it, and nothing for greedy decoding.
        let window = if self.sampler.config().is_greedy() { 0 } else { self.sampler.config().repeat_last_n };
        let history: Vec<u32> = match (self.prefilled, self.generated.last()) {
            (true, Some(&last)) => {
                let t = session.tokens();
                t[t.len().saturating_sub(window.saturating_sub(1))..].iter().copied().chain([last]).collect()
            }
            _ => self.prompt[self.prompt.len().saturating_sub(window)..].to_vec(),
        };
        // Read back as little as decides the step: a token id (greedy), the top
        // candidates, or the whole row (a constraint masks the whole row).
        //
        // TODO(issue 26, decode speed): a constrained step reads the whole logit row back
        // and computes the mask after the forward pass. The mask for this step depends
        // only on the tokens so far, so it can be computed (`Constraint::allowed`) on the
        // CPU while the device runs the forward pass, then handed to the backend as a
        // bitmask (`TokenMask::words`) that its argmax / top-k kernels read, keeping the
        // 4-byte read-back and chaining.
        let want = if self.is_constrained() {
            EvalOutput::LastLogits
        } else if self.sampler.config().is_greedy() {
            EvalOutput::LastArgmax
        } else {
            match self.sampler.candidates_needed(&history) {
                Some(k) => EvalOutput::LastTopK(k),
                None => EvalOutput::LastLogits,
            }
        };
        let evaluated = if self.prefilled {
            let last = *self.generated.last().ok_or_else(|| ModelError::InvalidRequest("nothing generated".into()))?;
            model.eval(session, &[last], want).await?
        } else {
            self.prefilled = true;
            // Reuse the cached prefix this prompt shares with the session (chat turns),
            // evaluating at least the prompt's last token to get its logits.
            let common = common_prefix(session.tokens(), &self.prompt).min(self.prompt.len() - 1);
            session.truncate(common);
            model.eval(session, &self.prompt[common..], want).await?
        };
        let token = match evaluated {
            Evaluated::Logits(mut logits) if self.is_constrained() => {
                let constraint =
                    self.constraint.as_mut().ok_or_else(|| ModelError::backend("the constraint was not compiled"))?;
                constraint.mask_logits(&mut logits)?;
                self.sampler.sample(&logits, &history)
            }
            Evaluated::Token(_) | Evaluated::Candidates(_) if self.is_constrained() => {
                return Err(ModelError::backend("a constrained step needs the logits"))
            }
            Evaluated::Token(t) => t,
            Evaluated::Logits(logits) => self.sampler.sample(&logits, &history),
            Evaluated::Candidates(c) => self.sampler.sample_candidates(&c, &history),
            Evaluated::Submitted | Evaluated::Cached => {
                return Err(ModelError::backend("a step was submitted, not read"))
            }
        };
        self.emit(model, session, token).await
    }

    /// The next greedy token with steps chained on the device: the step that evaluates
    /// it is submitted before it is read (when another token may follow), so the
    /// device never waits for the host between tokens.
    async fn next_chained<B: Backend>(&mut self, model: &mut Model<B>, session: &mut Session<B>) -> Result<u32> {
        if !self.prefilled {
            self.prefilled = true;
            let common = common_prefix(session.tokens(), &self.prompt).min(self.prompt.len() - 1);
            session.truncate(common);
            model.eval(session, &self.prompt[common..], EvalOutput::SubmitArgmax).await?;
            self.in_flight = 1;
        }
        if self.in_flight == 0 {
            return Err(ModelError::backend("no decode step in flight"));
        }
        // Evaluate the tokens in flight ahead of reading the oldest, while more may follow.
        while self.in_flight < CHAINED_STEPS
            && session.tokens().len() < session.capacity()
            && self.generated.len() + self.in_flight < self.options.max_tokens
        {
            model.eval_chained(session).await?;
            self.in_flight += 1;
        }
        let token = model.finish_chained(session).await?;
        self.in_flight -= 1;
        Ok(token)
    }

    /// Collects a step still in flight (after the generation has ended).
    async fn drain<B: Backend>(&mut self, model: &mut Model<B>, session: &mut Session<B>) -> Result<()> {
        while self.in_flight > 0 {
            model.finish_chained(session).await?;
            self.in_flight -= 1;
        }
        Ok(())
    }

    /// Ends on an end-of-generation token, or appends the token and releases its text.
    async fn emit<B: Backend>(
        &mut self,
        model: &mut Model<B>,
        session: &mut Session<B>,
        token: u32,
    ) -> Result<Option<Piece>> {
        if let Some(constraint) = self.constraint.as_mut() {
            // The mask let an end-of-generation token through only where the output may end.
            if constraint.is_end_of_generation(token) {
                return Ok(self.end(FinishReason::ConstraintComplete));
            }
            constraint.commit(token)?;
        }
        if self.options.stop_at_eog && model.tokenizer().is_end_of_generation(token) {
            self.drain(model, session).await?;
            return Ok(self.end(FinishReason::EndOfGeneration));
        }
        self.generated.push(token);
        self.held.push_str(&self.decoder.push(model.tokenizer(), token));
        let mut text = self.release();
        if self.finish.is_some() {
            // A stop string ended it.
            self.drain(model, session).await?;
        } else if self.constraint.as_ref().is_some_and(Constraint::is_complete) {
            if let Some(rest) = self.end(FinishReason::ConstraintComplete) {
                text.push_str(&rest.text);
            }
        }
        Ok(Some(Piece { token_id: Some(token), text }))
    }

    /// Moves held text that can no longer start a stop string into `text`; on a full
    /// stop string, cuts there and finishes.
    fn release(&mut self) -> String {
        if let Some(at) =
            self.options.stop.iter().filter(|s| !s.is_empty()).filter_map(|s| self.held.find(s.as_str())).min()
        {
            self.held.truncate(at);
            self.finish = Some(FinishReason::StopString);
            let out = std::mem::take(&mut self.held);
            self.text.push_str(&out);
            return out;
        }
        let keep = self.options.stop.iter().map(|s| longest_suffix_prefix(&self.held, s)).max().unwrap_or(0);
        let cut = self.held.len() - keep;
        let out: String = self.held.drain(..cut).collect();
        self.text.push_str(&out);
        out
    }

    /// Finishes, releasing whatever text was held back.
    fn end(&mut self, reason: FinishReason) -> Option<Piece> {
        self.finish = Some(reason);
        let mut out = std::mem::take(&mut self.held);
        out.push_str(&self.decoder.flush());
        self.text.push_str(&out);
        if out.is_empty() {
            None
        } else {
            Some(Piece { token_id: None, text: out })
        }
    }
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Length of the longest suffix of `text` that is a proper prefix of `stop` (at a char
/// boundary of `text`).
fn longest_suffix_prefix(text: &str, stop: &str) -> usize {
    let max = stop.len().saturating_sub(1).min(text.len());
    (1..=max)
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n) && stop.as_bytes().starts_with(&text.as_bytes()[text.len() - n..])
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::longest_suffix_prefix;

    #[test]
    fn suffix_prefix_holds_back_a_possible_stop_start() {
        assert_eq!(longest_suffix_prefix("hello <|im", "<|im_end|>"), 4);
        assert_eq!(longest_suffix_prefix("hello", "<|im_end|>"), 0);
        assert_eq!(longest_suffix_prefix("ab", "abc"), 2);
        assert_eq!(longest_suffix_prefix("abc", "abc"), 0); // a full match is found elsewhere
        assert_eq!(longest_suffix_prefix("é", "\u{e9}x"), 2);
    }
}
