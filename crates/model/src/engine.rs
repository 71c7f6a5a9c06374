//! `Model`: a loaded model on a backend, and `Session`: one conversation's KV cache.
//!
//! The model owns the backend, the weights and the activation workspace (allocated
//! once here, never in the token loop); a session owns its KV caches and the tokens
//! they hold. `eval` runs tokens through the model in batches of at most `max_batch`.

use std::sync::OnceLock;

use kindling_tokenizer::{ChatTemplate, Tokenizer};

use crate::backend::{Backend, KvSpec};
use crate::config::ModelConfig;
use crate::constraint::{Constraint, ConstraintSpec, ConstraintVocab};
use crate::embed::ModelKind;
use crate::error::{ModelError, Result};
use crate::forward::{LogitRows, Pass, Workspace};
use crate::info::ModelInfo;
use crate::loader::{LoadedModel, Loader};
use crate::weights::{ModelWeights, Weights};

/// Settings fixed when a model is built on a backend.
#[derive(Clone, Copy, Debug)]
pub struct ModelOptions {
    /// Most positions evaluated in one batch (prompt chunks are this long).
    pub max_batch: usize,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions { max_batch: 64 }
    }
}

/// What `Model::eval` returns for the evaluated tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalOutput {
    /// The logits of the last position (one vocabulary row).
    LastLogits,
    /// The logits of every position, row after row.
    AllLogits,
    /// The argmax of the last position's logits (4 bytes read back).
    LastArgmax,
    /// The k largest logits of the last position with their ids (`Backend::top_k_rows`).
    LastTopK(usize),
    /// The argmax of the last position, kept on the device for `Model::eval_chained`
    /// and read by `Model::finish_chained` (backends that `can_chain`).
    SubmitArgmax,
    /// Nothing: the tokens only go into the KV cache (a prompt evaluated in parts,
    /// `Generation::prefill_step`). Answers `Evaluated::Cached`.
    CacheOnly,
    /// Submitted, nothing read: the last position's logits stay on the device for
    /// `Model::read_submitted_logits`, or for the masked argmax of `Model::submit_masked`
    /// (backends that `can_chain_masked`), so that the host computes a constraint's mask
    /// while the device runs the tokens (a backend that computes as it records, the CPU,
    /// has them ready). Answers `Evaluated::Submitted`.
    SubmitLogits,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Evaluated {
    Logits(Vec<f32>),
    Token(u32),
    /// (id, logit), largest first.
    Candidates(Vec<(u32, f32)>),
    /// Submitted (`EvalOutput::SubmitArgmax`, `SubmitLogits`); the token comes from
    /// `finish_chained`.
    Submitted,
    /// In the KV cache, nothing read (`EvalOutput::CacheOnly`).
    Cached,
}

/// Stands in the session for a token still on the device (a chained step's input)
/// until `finish_chained` reads it; never a valid id, so prefix reuse stops there.
const UNRESOLVED: u32 = u32::MAX;

pub struct Model<B: Backend> {
    pub(crate) backend: B,
    pub(crate) config: ModelConfig,
    info: ModelInfo,
    tokenizer: Tokenizer,
    chat_template: Option<ChatTemplate>,
    pub(crate) weights: ModelWeights<B::Weight>,
    pub(crate) work: Workspace<B::Activation>,
    max_batch: usize,
    /// An encoder's KV caches (`embed.rs`), allocated at the first `embed` and reused.
    pub(crate) encoder_session: Option<Session<B>>,
    /// The vocabulary as the constraint engine sees it, built at the first constrained
    /// generation (a 152k-token vocabulary takes a while) and kept for the next.
    constraint_vocab: OnceLock<ConstraintVocab>,
    /// Constrained decoding: the logit row of the step submitted last, waiting to be
    /// read (`read_submitted_logits`) or for its masked argmax (`submit_masked`), and
    /// that of the step recorded after it, not submitted yet (`record_chained`). The same buffer for every decode step: step t's
    /// argmax runs before step t+1, which overwrites it.
    submitted_logits: Option<B::Activation>,
    recorded_logits: Option<B::Activation>,
}

/// One sequence's state: its KV caches and the tokens they hold.
pub struct Session<B: Backend> {
    caches: Vec<B::KvCache>,
    capacity: usize,
    tokens: Vec<u32>,
}

impl<B: Backend> Session<B> {
    /// Tokens whose keys and values are cached, in order.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// Most positions the session can hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Forgets everything after the first `n` tokens (their cache rows are overwritten
    /// by later tokens).
    pub fn truncate(&mut self, n: usize) {
        self.tokens.truncate(n);
    }

    pub(crate) fn caches_mut(&mut self) -> &mut [B::KvCache] {
        &mut self.caches
    }
}

/// The weights of a model that generates, or the error an encoder gets when asked to.
fn decoder_weights<'a, W>(weights: &'a ModelWeights<W>, cfg: &ModelConfig) -> Result<&'a Weights<W>> {
    match weights {
        ModelWeights::Decoder(w) => Ok(w),
        ModelWeights::Encoder(_) => Err(ModelError::InvalidRequest(format!(
            "{} is an embedding model ({}, an encoder): it cannot generate text; ask it for embeddings instead",
            cfg.name,
            cfg.architecture.name()
        ))),
    }
}

/// Rows of the activation workspace: `max_batch` for a decoder (prompts run in
/// chunks); an encoder runs a whole input as one batch, so its context length. The
/// fits-checks size the workspace with this.
pub fn workspace_rows(cfg: &ModelConfig, options: &ModelOptions) -> usize {
    match cfg.kind {
        ModelKind::Decoder => options.max_batch.max(1),
        ModelKind::Encoder => cfg.context_length,
    }
}

impl<B: Backend> Model<B> {
    /// Loads a whole in-memory GGUF file onto `backend`, feeding it in chunks like a
    /// stream would.
    pub fn load_from_bytes(mut backend: B, bytes: &[u8], options: ModelOptions) -> Result<Self> {
        let mut loader = Loader::new(Some(bytes.len() as u64));
        for chunk in bytes.chunks(1 << 20) {
            loader.feed(&mut backend, chunk)?;
        }
        let loaded = loader.finish()?;
        Model::new(backend, loaded, options)
    }

    /// Builds the model around weights already loaded onto `backend`.
    pub fn new(mut backend: B, loaded: LoadedModel<B::Weight>, options: ModelOptions) -> Result<Self> {
        let max_batch = workspace_rows(&loaded.config, &options);
        let work = Workspace::alloc(&mut backend, &loaded.config, max_batch)?;
        Ok(Model {
            backend,
            config: loaded.config,
            info: loaded.info,
            tokenizer: loaded.tokenizer,
            chat_template: loaded.chat_template,
            weights: loaded.weights,
            work,
            max_batch,
            encoder_session: None,
            constraint_vocab: OnceLock::new(),
            submitted_logits: None,
            recorded_logits: None,
        })
    }

    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Whether the model generates or embeds.
    pub fn kind(&self) -> ModelKind {
        self.config.kind
    }

    /// Rows the workspace holds: the longest batch (`workspace_rows`).
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The vocabulary for constrained decoding, built on first use and shared after.
    pub fn constraint_vocab(&self) -> Result<&ConstraintVocab> {
        if let Some(v) = self.constraint_vocab.get() {
            return Ok(v);
        }
        let built = ConstraintVocab::new(&self.tokenizer)?;
        Ok(self.constraint_vocab.get_or_init(|| built))
    }

    /// Compiles `spec` over this model's vocabulary (see `ConstraintVocab::compile`).
    pub fn compile_constraint(&self, spec: &ConstraintSpec) -> Result<Constraint> {
        self.constraint_vocab()?.compile(spec)
    }

    pub fn chat_template(&self) -> Option<&ChatTemplate> {
        self.chat_template.as_ref()
    }

    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// Device time per kernel since the last call (see `Backend::take_profile`).
    pub fn take_profile(&mut self) -> Option<Vec<crate::KernelTime>> {
        self.backend.take_profile()
    }

    pub fn backend_name(&self) -> String {
        self.backend.name()
    }

    /// A new empty session holding up to `context` positions (capped to the model's
    /// trained context length).
    pub fn new_session(&mut self, context: usize) -> Result<Session<B>> {
        let capacity = context.clamp(1, self.config.context_length);
        let spec = KvSpec { capacity, width: self.config.kv_width() };
        let caches =
            (0..self.config.block_count).map(|_| self.backend.alloc_kv_cache(spec)).collect::<Result<Vec<_>>>()?;
        Ok(Session { caches, capacity, tokens: Vec::new() })
    }

    /// Appends `tokens` to the session and returns what `output` asks for.
    pub async fn eval(&mut self, session: &mut Session<B>, tokens: &[u32], output: EvalOutput) -> Result<Evaluated> {
        let weights = decoder_weights(&self.weights, &self.config)?;
        if tokens.is_empty() {
            return Err(ModelError::InvalidRequest("nothing to evaluate: no tokens".into()));
        }
        if let Some(&bad) = tokens.iter().find(|&&t| t as usize >= self.config.vocab_size) {
            return Err(ModelError::InvalidRequest(format!(
                "token id {bad} is outside the vocabulary of {} tokens",
                self.config.vocab_size
            )));
        }
        if session.tokens.len() + tokens.len() > session.capacity {
            return Err(ModelError::InvalidRequest(format!(
                "context full: {} cached + {} new tokens exceed the session's {} positions",
                session.tokens.len(),
                tokens.len(),
                session.capacity
            )));
        }
        // A plain evaluation ends any constrained chain (its logits are overwritten).
        (self.submitted_logits, self.recorded_logits) = (None, None);
        let vocab = self.config.vocab_size;
        let mut all = Vec::new();
        let batch = match output {
            EvalOutput::AllLogits => self.max_batch.min(self.work.logits_rows),
            _ => self.max_batch,
        };
        let chunks: Vec<&[u32]> = tokens.chunks(batch).collect();
        for (i, chunk) in chunks.iter().enumerate() {
            let last_chunk = i + 1 == chunks.len();
            let rows = match output {
                EvalOutput::CacheOnly => None,
                EvalOutput::AllLogits => Some(LogitRows::All),
                _ if last_chunk => Some(LogitRows::Last),
                _ => None,
            };
            let n = chunk.len();
            self.backend.begin_batch(chunk, session.tokens.len())?;
            let mut pass = Pass {
                b: &mut self.backend,
                cfg: &self.config,
                w: weights,
                ws: &self.work,
                caches: &mut session.caches,
                capacity: session.capacity,
            };
            let logits = match rows {
                Some(rows) => Some(pass.record(n, rows)?),
                None => {
                    pass.record_body()?;
                    None
                }
            };
            session.tokens.extend_from_slice(chunk);
            match (output, logits) {
                (EvalOutput::AllLogits, Some(l)) => all.extend(self.backend.read_rows(l, n).await?),
                (EvalOutput::LastLogits, Some(l)) => return Ok(Evaluated::Logits(self.backend.read_rows(l, 1).await?)),
                (EvalOutput::LastArgmax, Some(l)) => {
                    let ids = self.backend.argmax_rows(l, 1).await?;
                    let id = ids.first().copied().ok_or_else(|| ModelError::backend("argmax returned nothing"))?;
                    return Ok(Evaluated::Token(id));
                }
                (EvalOutput::SubmitArgmax, Some(l)) => {
                    self.backend.submit_chained(l).await?;
                    return Ok(Evaluated::Submitted);
                }
                (EvalOutput::SubmitLogits, Some(l)) => {
                    self.backend.submit_recorded()?;
                    (self.submitted_logits, self.recorded_logits) = (Some(l), None);
                    return Ok(Evaluated::Submitted);
                }
                (EvalOutput::LastTopK(k), Some(l)) => {
                    let rows = self.backend.top_k_rows(l, 1, k).await?;
                    return Ok(Evaluated::Candidates(rows.into_iter().next().unwrap_or_default()));
                }
                _ => {}
            }
        }
        if output == EvalOutput::CacheOnly {
            return Ok(Evaluated::Cached);
        }
        debug_assert_eq!(all.len(), tokens.len() * vocab);
        Ok(Evaluated::Logits(all))
    }

    /// Whether greedy decoding can chain steps on this backend (`Backend::can_chain`).
    pub fn can_chain(&self) -> bool {
        self.backend.can_chain()
    }

    /// Records and submits one greedy step whose token is the argmax the previous
    /// submitted step left on the device, its own argmax kept there too: the host
    /// records this step while the device still runs the previous one. The session
    /// holds the step's token as unresolved until `finish_chained` reads it.
    pub async fn eval_chained(&mut self, session: &mut Session<B>) -> Result<()> {
        let logits = self.record_chained_step(session)?;
        self.backend.submit_chained(logits).await
    }

    /// Whether constrained greedy decoding can chain steps on this backend
    /// (`Backend::can_chain_masked`).
    pub fn can_chain_masked(&self) -> bool {
        self.backend.can_chain_masked()
    }

    /// Records, without submitting, one step whose token is the argmax the next
    /// `submit_masked` takes: the host records it while the device still runs the step
    /// before, and `submit_masked` submits it right behind that argmax. The session holds
    /// its token as unresolved until `finish_chained` reads it.
    pub fn record_chained(&mut self, session: &mut Session<B>) -> Result<()> {
        self.recorded_logits = Some(self.record_chained_step(session)?);
        Ok(())
    }

    /// Submits the argmax over the ids `mask` allows (`TokenMask::words`) of the logits
    /// the last step left on the device (`EvalOutput::SubmitLogits`, `record_chained`),
    /// then the step recorded since (if any), which reads that argmax as its token;
    /// `finish_chained` reads the token.
    pub async fn submit_masked(&mut self, mask: &[u32]) -> Result<()> {
        let logits = self.submitted_logits.take().ok_or_else(|| ModelError::backend("no step's logits to mask"))?;
        let next = self.recorded_logits.take();
        self.backend.submit_masked_chained(logits, mask).await?;
        self.submitted_logits = next;
        Ok(())
    }

    /// Drops the step `record_chained` recorded and nobody submitted (the generation
    /// ended on the token before it), with the placeholder of its input token.
    pub fn discard_recorded(&mut self, session: &mut Session<B>) {
        if self.recorded_logits.take().is_some() {
            self.backend.discard_recorded();
            if session.tokens.last() == Some(&UNRESOLVED) {
                session.tokens.pop();
            }
        }
    }

    /// The logit row that `EvalOutput::SubmitLogits` left on the device, read back
    /// (the host computed the step's mask meanwhile).
    pub async fn read_submitted_logits(&mut self) -> Result<Vec<f32>> {
        let logits = self.submitted_logits.take().ok_or_else(|| ModelError::backend("no step's logits to read"))?;
        self.recorded_logits = None;
        self.backend.read_rows(logits, 1).await
    }

    /// The recording part of `eval_chained`; returns the logit row of the step.
    fn record_chained_step(&mut self, session: &mut Session<B>) -> Result<B::Activation> {
        let weights = decoder_weights(&self.weights, &self.config)?;
        if session.tokens.len() >= session.capacity {
            return Err(ModelError::InvalidRequest(format!(
                "context full: the session holds {} positions",
                session.capacity
            )));
        }
        self.backend.begin_chained_batch(session.tokens.len())?;
        let mut pass = Pass {
            b: &mut self.backend,
            cfg: &self.config,
            w: weights,
            ws: &self.work,
            caches: &mut session.caches,
            capacity: session.capacity,
        };
        let logits = pass.record(1, LogitRows::Last)?;
        session.tokens.push(UNRESOLVED);
        Ok(logits)
    }

    /// Reads the token of the oldest submitted step not read yet, and puts it in the
    /// session where a chained step took it as its input: the first of the trailing
    /// placeholders (the later ones are the inputs of later steps).
    pub async fn finish_chained(&mut self, session: &mut Session<B>) -> Result<u32> {
        let id = self.backend.finish_chained().await?;
        if let Some(t) = session.tokens.iter_mut().rev().take_while(|t| **t == UNRESOLVED).last() {
            *t = id;
        }
        Ok(id)
    }
}
