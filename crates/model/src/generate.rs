//! Token-by-token generation: prefill, sample, stop on end-of-generation tokens, stop
//! strings or limits, and hand out text pieces that never split a UTF-8 character or
//! show the beginning of a stop string that may still complete.

use kindling_tokenizer::StreamDecoder;

use crate::backend::{Backend, CHAINED_STEPS};
use crate::clock::Instant;
use crate::constraint::{Constraint, ConstraintSpec, TokenMask};
use crate::engine::{EvalOutput, Evaluated, Model, Session};
use crate::error::{ModelError, Result};
use crate::sampler::{Sampler, SamplerConfig};
use crate::tools::{self, ToolCall, ToolCallGrammar, CALL_OPENER, JSON_FENCE};

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
    /// The model may call tools: free text (or `constraint`) until it writes the call
    /// opener, then only calls that follow the grammar; with `forced` set, a call from
    /// the first token (`constraint` is then ignored).
    pub tool_calls: Option<ToolCallGrammar>,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        GenerateOptions {
            max_tokens: 256,
            sampler: SamplerConfig::default(),
            stop: Vec::new(),
            stop_at_eog: true,
            constraint: None,
            tool_calls: None,
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
    /// The reply ended after calling tools (`Generation::tool_calls`).
    ToolCalls,
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
            FinishReason::ToolCalls => "tool_calls",
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
    /// Constrained chained decoding (`next_masked`): a step was submitted whose logits
    /// wait on the device for their masked argmax.
    masked_pending: bool,
    /// And the step after it is recorded, not submitted (it reads that argmax).
    recorded_ahead: bool,
    /// Whether greedy decoding may chain steps on the device (`set_chaining`).
    chaining: bool,
    /// The constraint in force: `options.constraint` (or a forced tool call) compiled
    /// over the model's vocabulary (`compile_constraint`, or the first step), or the
    /// tool-call grammar once the model opened a call.
    constraint: Option<Constraint>,
    /// The tool-call grammar compiled ahead, waiting for the model to open a call.
    tool_constraint: Option<Constraint>,
    /// The grammar of a reply that is bare JSON calls (`ToolCallGrammar::at_reply_start`),
    /// compiled ahead, for a reply that begins as JSON.
    reply_start_constraint: Option<Constraint>,
    /// The reply from its first tool-call opener on (held apart from the text).
    tool_text: Option<String>,
    /// The calls complete in `tool_text`, parsed again only when a piece could have
    /// closed one (not every token: callers ask after each step).
    calls: Vec<ToolCall>,
    /// Whether the constraints were compiled.
    compiled: bool,
    /// Host time in `Constraint::allowed` and `commit` (ms).
    constraint_ms: f64,
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
            masked_pending: false,
            recorded_ahead: false,
            chaining: true,
            constraint: None,
            tool_constraint: None,
            reply_start_constraint: None,
            tool_text: None,
            calls: Vec::new(),
            compiled: false,
            constraint_ms: 0.0,
        })
    }

    /// Compiles the options' constraint over `model`'s vocabulary now, so that a bad
    /// schema, regex or grammar fails before any prompt work (`ModelError::InvalidRequest`).
    /// The first step does it otherwise.
    pub fn compile_constraint<B: Backend>(&mut self, model: &Model<B>) -> Result<()> {
        if self.compiled {
            return Ok(());
        }
        match &self.options.tool_calls {
            Some(ToolCallGrammar { forced: Some(spec), .. }) => {
                self.constraint = Some(model.compile_constraint(spec)?);
                self.tool_text = Some(String::new());
            }
            Some(ToolCallGrammar { after_opener, at_reply_start, .. }) => {
                self.tool_constraint = Some(model.compile_constraint(after_opener)?);
                self.reply_start_constraint = Some(model.compile_constraint(at_reply_start)?);
            }
            None => {}
        }
        if let (None, Some(spec)) = (&self.constraint, &self.options.constraint) {
            self.constraint = Some(model.compile_constraint(spec)?);
        }
        self.compiled = true;
        Ok(())
    }

    /// Whether a constraint masks the logits (from the start, or since a tool call opened).
    fn is_constrained(&self) -> bool {
        self.constraint.is_some() || (!self.compiled && self.options.constraint.is_some())
    }

    /// Whether the model may open a tool call that is not open yet (its opener is held
    /// back from the text like a stop string's beginning).
    fn awaits_tool_call(&self) -> bool {
        self.tool_constraint.is_some() && self.tool_text.is_none()
    }

    /// The tool calls complete so far (a call cut short by the token limit is not).
    pub fn tool_calls(&self) -> &[ToolCall] {
        &self.calls
    }

    /// Appends decoded text to the tool calls; parses them again when it may have closed
    /// one (a call ends in `}` or, tagged, in `>`).
    fn push_tool_text(&mut self, text: &str) {
        if let Some(calls) = self.tool_text.as_mut() {
            calls.push_str(text);
            if text.contains(['}', '>']) {
                self.calls = tools::parse_calls(calls);
            }
        }
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
        // Constrained greedy decoding chained on the device, the mask computed on the
        // host while the device runs the step's forward pass (`next_masked`).
        if self.chaining && self.is_constrained() && self.sampler.config().is_greedy() && model.can_chain_masked() {
            let piece = match self.next_masked(model, session).await? {
                Some(token) => self.emit(model, session, token).await,
                None => Ok(self.end(FinishReason::ContextFull)),
            };
            if self.recorded_ahead && (self.finish.is_some() || piece.is_err()) {
                model.discard_recorded(session);
                self.recorded_ahead = false;
            }
            return piece;
        }
        if self.chaining && self.sampler.config().is_greedy() && model.can_chain() && !self.is_constrained() {
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
        // candidates, or the whole row. A constrained step here (sampled, or on a backend
        // that does not chain masked steps) submits the step, computes its mask while the
        // device runs it (the mask depends only on the tokens before), then reads the
        // whole row to mask it.
        let want = if self.is_constrained() {
            EvalOutput::SubmitLogits
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
            Evaluated::Submitted if self.is_constrained() => {
                let mask = self.next_mask()?;
                let mut logits = model.read_submitted_logits().await?;
                mask.apply(&mut logits);
                self.sampler.sample(&logits, &history)
            }
            Evaluated::Logits(_) | Evaluated::Token(_) | Evaluated::Candidates(_) if self.is_constrained() => {
                return Err(ModelError::backend("a constrained step is submitted, not read"))
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

    /// The next constrained greedy token with steps chained on the device
    /// (`Model::can_chain_masked`); `None` when the context is full.
    ///
    /// Step t's mask depends on every token before it, so it can only be computed once
    /// step t-1's token is on the host, but it does not need step t's logits: the host
    /// computes it while the device runs step t's forward pass, then submits step t's
    /// masked argmax with step t+1 (recorded during the previous call) right behind it
    /// (`Model::submit_masked`), records step t+2 while that token comes back, and
    /// reads the token. The device waits for the host only when the mask, the recording
    /// and the host's share of a token take longer than a forward pass; 4 bytes are
    /// read back per token, as in unconstrained greedy decoding.
    async fn next_masked<B: Backend>(&mut self, model: &mut Model<B>, session: &mut Session<B>) -> Result<Option<u32>> {
        if !self.masked_pending {
            // The first constrained step: the prompt, or the last token when a
            // constraint began mid-reply (a tool call opened) or the steps chained
            // ahead stopped at the end of the context.
            // The context ends a generation where the unchained steps' limit does.
            if self.prefilled {
                if session.tokens().len() + 1 >= session.capacity() {
                    return Ok(None);
                }
                let last =
                    *self.generated.last().ok_or_else(|| ModelError::InvalidRequest("nothing generated".into()))?;
                model.eval(session, &[last], EvalOutput::SubmitLogits).await?;
            } else {
                self.prefilled = true;
                let common = common_prefix(session.tokens(), &self.prompt).min(self.prompt.len() - 1);
                session.truncate(common);
                model.eval(session, &self.prompt[common..], EvalOutput::SubmitLogits).await?;
            }
            self.masked_pending = true;
        }
        let mask = self.next_mask()?;
        // The step after this one (its token is this step's argmax), when one may
        // follow: recorded ahead by the previous call, or now.
        let more = self.recorded_ahead || self.may_record_step(session, 1);
        if more && !self.recorded_ahead {
            model.record_chained(session)?;
        }
        self.recorded_ahead = false;
        self.masked_pending = false;
        model.submit_masked(mask.words()).await?;
        self.masked_pending = more;
        // And the step after that, recorded while the device runs this step's argmax
        // and its token comes back, so that the next call has only its mask to compute
        // before it submits. Dropped unrun if the generation ends first (`next`).
        if more && self.may_record_step(session, 2) {
            model.record_chained(session)?;
            self.recorded_ahead = true;
        }
        model.finish_chained(session).await.map(Some)
    }

    /// Whether a masked step `ahead` steps after the one whose mask is being computed
    /// may be recorded: it would generate a token within `max_tokens`, and its input
    /// fits in the context (the session holds the inputs recorded so far).
    fn may_record_step<B: Backend>(&self, session: &Session<B>, ahead: usize) -> bool {
        self.generated.len() + ahead < self.options.max_tokens && session.tokens().len() + 1 < session.capacity()
    }

    /// The tokens the constraint allows next, its host time counted (`constraint_time`).
    fn next_mask(&mut self) -> Result<TokenMask> {
        let constraint =
            self.constraint.as_mut().ok_or_else(|| ModelError::backend("the constraint was not compiled"))?;
        let start = Instant::now();
        let mask = constraint.allowed();
        self.constraint_ms += start.elapsed().as_secs_f64() * 1e3;
        mask
    }

    /// Host time spent in the constraint so far (computing its masks and taking its
    /// tokens), in milliseconds: what a constrained step costs beyond a free one, unless
    /// the device hides it (on the GPU the mask is computed while the step's forward pass
    /// runs).
    pub fn constraint_time(&self) -> f64 {
        self.constraint_ms
    }

    /// Whether greedy decoding may chain steps on the device (on by default, where the
    /// backend can). Off, every step reads its token back (a constrained one, its logit
    /// row) before the next is recorded: for tests and benchmarks that compare the two.
    pub fn set_chaining(&mut self, on: bool) {
        self.chaining = on;
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
            let start = Instant::now();
            constraint.commit(token)?;
            self.constraint_ms += start.elapsed().as_secs_f64() * 1e3;
        }
        if self.options.stop_at_eog && model.tokenizer().is_end_of_generation(token) {
            self.drain(model, session).await?;
            return Ok(self.end(FinishReason::EndOfGeneration));
        }
        self.generated.push(token);
        let decoded = self.decoder.push(model.tokenizer(), token);
        if self.tool_text.is_some() {
            // Inside tool calls: their text is not the reply's.
            self.push_tool_text(&decoded);
            if self.constraint.as_ref().is_some_and(Constraint::is_complete) {
                self.end(FinishReason::ToolCalls);
            }
            return Ok(Some(Piece { token_id: Some(token), text: String::new() }));
        }
        self.held.push_str(&decoded);
        if self.awaits_tool_call() && self.held.ends_with(CALL_OPENER) {
            return self.open_tool_call(model, session, token).await.map(Some);
        }
        if self.reply_may_be_bare_calls() {
            let start = self.held.trim_start();
            if start.starts_with('{') || start.starts_with(JSON_FENCE) {
                return self.restart_as_tool_calls(model, session).await.map(Some);
            }
        }
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

    /// The model wrote the tool-call opener (`token` ends it): the text before it is the
    /// reply's last, and from here on only calls that follow the tool-call grammar are
    /// allowed. Steps chained ahead ran unmasked: their tokens are dropped, and the
    /// session is cut back so that the next step evaluates `token` under the mask.
    async fn open_tool_call<B: Backend>(
        &mut self,
        model: &mut Model<B>,
        session: &mut Session<B>,
        token: u32,
    ) -> Result<Piece> {
        if self.in_flight > 0 {
            self.drain(model, session).await?;
            session.truncate(self.prompt.len() + self.generated.len() - 1);
        }
        self.constraint = self.tool_constraint.take();
        let text = self.held[..self.held.len() - CALL_OPENER.len()].to_string();
        self.held.clear();
        self.text.push_str(&text);
        self.tool_text = Some(CALL_OPENER.to_string());
        Ok(Piece { token_id: Some(token), text })
    }

    /// Whether the reply, nothing of it released yet, may still turn out to be bare JSON
    /// tool calls (see `tools`).
    fn reply_may_be_bare_calls(&self) -> bool {
        self.awaits_tool_call() && self.reply_start_constraint.is_some() && self.text.is_empty()
    }

    /// The reply began as a JSON object or fence while tools may be called: it is taken
    /// back (nothing of it was released) and generated again from its start under the
    /// grammar of bare calls, which the prompt's last token is evaluated again for.
    async fn restart_as_tool_calls<B: Backend>(
        &mut self,
        model: &mut Model<B>,
        session: &mut Session<B>,
    ) -> Result<Piece> {
        self.drain(model, session).await?;
        self.prefilled = false;
        self.generated.clear();
        self.held.clear();
        self.decoder = StreamDecoder::new(false);
        self.tool_constraint = None;
        self.constraint = self.reply_start_constraint.take();
        self.tool_text = Some(String::new());
        Ok(Piece { token_id: None, text: String::new() })
    }

    /// Moves held text that can no longer start a stop string (or a tool call) into
    /// `text`; on a full stop string, cuts there and finishes.
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
        if self.reply_may_be_bare_calls() && JSON_FENCE.starts_with(self.held.trim_start()) {
            // Whitespace or the start of a fence: wait for what follows.
            return String::new();
        }
        let opener = self.awaits_tool_call().then_some(CALL_OPENER);
        let keep = self
            .options
            .stop
            .iter()
            .map(String::as_str)
            .chain(opener)
            .map(|s| longest_suffix_prefix(&self.held, s))
            .max()
            .unwrap_or(0);
        let cut = self.held.len() - keep;
        let out: String = self.held.drain(..cut).collect();
        self.text.push_str(&out);
        out
    }

    /// Finishes, releasing whatever text was held back.
    fn end(&mut self, reason: FinishReason) -> Option<Piece> {
        if self.tool_text.is_some() {
            let rest = self.decoder.flush();
            self.push_tool_text(&rest);
            // Ended by itself after its calls (a cut-short call keeps `length`).
            let ended = matches!(reason, FinishReason::EndOfGeneration | FinishReason::ConstraintComplete);
            self.finish = Some(if ended { FinishReason::ToolCalls } else { reason });
            return None;
        }
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
