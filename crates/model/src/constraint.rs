//! Constrained decoding: the tokens a JSON schema, a regex or a Lark grammar allows next,
//! over the model's own vocabulary, computed by llguidance.
//!
//! `ConstraintVocab` is the vocabulary as llguidance sees it (a token trie and the slices
//! its mask computation precomputes): built once per model (`Model::constraint_vocab`),
//! it is shared by every constrained generation. `Constraint` is one generation's
//! parser state: ask it for the allowed set, mask the logits, commit the sampled token.

use std::sync::Arc;

use kindling_tokenizer::Tokenizer;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, InferenceCapabilities, SimpleVob, TokEnv, TokRxInfo, TokTrie};
use llguidance::{Matcher, ParserFactory};

use crate::error::{ModelError, Result};

/// What the output must be.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstraintSpec {
    /// A JSON Schema (draft 2020-12 keywords that llguidance supports).
    JsonSchema(serde_json::Value),
    /// Any JSON object (OpenAI's `response_format: { type: 'json_object' }`).
    JsonObject,
    /// The whole output matches this regex (Rust `regex` syntax).
    Regex(String),
    /// A Lark grammar (llguidance's dialect), starting at `start`.
    Grammar(String),
}

impl ConstraintSpec {
    /// A JSON Schema given as text (a file, a JS string): invalid JSON is an invalid request.
    pub fn json_schema_text(text: &str) -> Result<Self> {
        serde_json::from_str(text)
            .map(ConstraintSpec::JsonSchema)
            .map_err(|e| ModelError::InvalidRequest(format!("the JSON schema is not valid JSON: {e}")))
    }

    fn grammar(&self) -> TopLevelGrammar {
        match self {
            ConstraintSpec::JsonSchema(schema) => TopLevelGrammar::from_json_schema(bounded_whitespace(schema.clone())),
            ConstraintSpec::JsonObject => {
                TopLevelGrammar::from_json_schema(bounded_whitespace(serde_json::json!({ "type": "object" })))
            }
            ConstraintSpec::Regex(rx) => TopLevelGrammar::from_regex(rx),
            ConstraintSpec::Grammar(lark) => TopLevelGrammar::from_lark(lark.clone()),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            ConstraintSpec::JsonSchema(_) | ConstraintSpec::JsonObject => "JSON schema",
            ConstraintSpec::Regex(_) => "regex",
            ConstraintSpec::Grammar(_) => "grammar",
        }
    }
}

/// Whitespace allowed between two JSON tokens: a newline and indentation, bounded.
/// llguidance's default admits any run, and a model that has closed the value can then
/// emit blanks until the token limit cuts it (the 1.5B did, 300 tokens of them).
pub const JSON_WHITESPACE: &str = r"[\x20\x0A\x0D\x09]{1,40}";

/// `schema` with llguidance's JSON options (`x-guidance`) bounding whitespace, unless
/// it sets them itself.
pub fn bounded_whitespace(mut schema: serde_json::Value) -> serde_json::Value {
    if let Some(o) = schema.as_object_mut() {
        o.entry("x-guidance").or_insert_with(|| serde_json::json!({ "whitespace_pattern": JSON_WHITESPACE }));
    }
    schema
}

/// The model's vocabulary for llguidance, shared between generations (cheap to clone).
#[derive(Clone)]
pub struct ConstraintVocab {
    factory: Arc<ParserFactory>,
    /// The end-of-generation ids: llguidance treats them as one EOS, allowed only where
    /// the output may end.
    eog: Arc<[u32]>,
}

impl ConstraintVocab {
    /// Every token id's bytes (control tokens as llguidance's special-token form: 0xFF
    /// then their text, so no grammar matches them as text) and the end-of-generation set.
    pub fn new(tokenizer: &Tokenizer) -> Result<Self> {
        let n = tokenizer.vocab_size();
        let words: Vec<Vec<u8>> = (0..n as u32)
            .map(|id| {
                if tokenizer.is_control(id) {
                    let mut w = vec![TokTrie::SPECIAL_TOKEN_MARKER];
                    w.extend_from_slice(tokenizer.token_piece(id, true));
                    w
                } else {
                    tokenizer.token_bytes(id).to_vec()
                }
            })
            .collect();
        let eog: Vec<u32> = tokenizer.end_of_generation_ids().iter().copied().filter(|&id| (id as usize) < n).collect();
        let first_eog = *eog.first().ok_or_else(|| {
            ModelError::InvalidRequest(
                "constrained output needs an end-of-generation token; this vocabulary has none".into(),
            )
        })?;
        let n32 = u32::try_from(n).map_err(|_| ModelError::InvalidRequest("the vocabulary is too large".into()))?;
        let trie = TokTrie::from(&TokRxInfo::new(n32, first_eog), &words).with_eos_tokens(&eog);
        // Greedy tokenization of literal text (used only for forced tokens, which we do
        // not take): the mask itself admits every token whose bytes fit.
        let env: TokEnv = Arc::new(ApproximateTokEnv::new(trie));
        let mut factory = ParserFactory::new(
            &env,
            InferenceCapabilities::default(),
            &llguidance::earley::SlicedBiasComputer::general_slices(),
        )
        .map_err(|e| ModelError::InvalidRequest(format!("cannot build the constraint vocabulary: {e}")))?;
        // Errors come back as values; llguidance's own stderr logging would only repeat them.
        factory.quiet();
        Ok(ConstraintVocab { factory: Arc::new(factory), eog: eog.into() })
    }

    /// Compiles `spec` into a fresh parser. An invalid or unsupported schema, regex or
    /// grammar is `ModelError::InvalidRequest` with llguidance's message (which names an
    /// unsupported keyword).
    pub fn compile(&self, spec: &ConstraintSpec) -> Result<Constraint> {
        let invalid = |e: String| ModelError::InvalidRequest(format!("invalid {}: {e}", spec.kind()));
        let parser = self.factory.create_parser(spec.grammar()).map_err(|e| invalid(format!("{e:#}")))?;
        let matcher = Matcher::new(Ok(parser));
        if let Some(e) = matcher.get_error() {
            return Err(invalid(e));
        }
        Ok(Constraint { matcher, eog: self.eog.clone() })
    }
}

/// One generation's constraint state.
pub struct Constraint {
    matcher: Matcher,
    eog: Arc<[u32]>,
}

impl Constraint {
    /// The tokens allowed next (a bitmask over the vocabulary; the end-of-generation
    /// tokens are in it when the output may end here).
    pub fn allowed(&mut self) -> Result<TokenMask> {
        let vob = self.matcher.compute_mask().map_err(|e| constraint_failure(&e.to_string()))?;
        if vob.is_zero() {
            return Err(constraint_failure("no token of the vocabulary can continue the constrained output"));
        }
        Ok(TokenMask { vob, eog: self.eog.clone() })
    }

    /// Sets every logit the constraint forbids to -inf (ids past the vocabulary too:
    /// some models pad their output rows).
    pub fn mask_logits(&mut self, logits: &mut [f32]) -> Result<()> {
        self.allowed()?.apply(logits);
        Ok(())
    }

    /// Takes the token that was sampled; an end-of-generation token ends the output.
    pub fn commit(&mut self, token: u32) -> Result<()> {
        let token = if self.is_end_of_generation(token) { self.eog[0] } else { token };
        self.matcher.consume_token(token).map_err(|e| constraint_failure(&e.to_string()))
    }

    /// Whether `token` is one of the end-of-generation tokens.
    pub fn is_end_of_generation(&self, token: u32) -> bool {
        self.eog.contains(&token)
    }

    /// The output is complete: nothing more may follow (a closed JSON value, a regex
    /// that matched all it can).
    pub fn is_complete(&self) -> bool {
        self.matcher.is_stopped()
    }
}

/// The allowed next tokens.
pub struct TokenMask {
    vob: SimpleVob,
    eog: Arc<[u32]>,
}

impl TokenMask {
    pub fn is_allowed(&self, token: u32) -> bool {
        (token as usize) < self.vob.len() && self.vob.is_allowed(token)
    }

    /// How many tokens are allowed.
    pub fn count(&self) -> usize {
        self.vob.num_set()
    }

    /// The allowed set as 32-bit words, bit `id % 32` of word `id / 32` (the layout a
    /// GPU sampling kernel would read).
    pub fn words(&self) -> &[u32] {
        self.vob.as_slice()
    }

    /// Whether the output may end here (the end-of-generation tokens are allowed).
    pub fn allows_end(&self) -> bool {
        self.eog.iter().any(|&t| self.is_allowed(t))
    }

    pub fn apply(&self, logits: &mut [f32]) {
        for (id, l) in logits.iter_mut().enumerate() {
            if !self.is_allowed(id as u32) {
                *l = f32::NEG_INFINITY;
            }
        }
    }
}

/// The constraint's parser failed mid-generation (a token it did not allow, an
/// internal limit): the request cannot be completed as asked.
fn constraint_failure(message: &str) -> ModelError {
    ModelError::InvalidRequest(format!("constrained decoding failed: {message}"))
}
