//! The one error type of this crate. Every failure is a value naming what is wrong.

use std::fmt;

/// What went wrong while building a tokenizer or rendering a chat template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenizerError {
    /// A required metadata key is absent.
    MissingKey(&'static str),
    /// A metadata key holds a value of the wrong type.
    WrongType { key: &'static str, expected: &'static str, found: &'static str },
    /// `tokenizer.ggml.model` names a tokenizer this crate does not implement.
    UnsupportedModel(String),
    /// `tokenizer.ggml.pre` is not a pre-tokenizer llama.cpp knows.
    UnknownPreTokenizer(String),
    /// `tokenizer.ggml.pre` is known to llama.cpp but not implemented here.
    UnsupportedPreTokenizer(String),
    /// A per-token array (scores, token types) is shorter than the token list.
    LengthMismatch { key: &'static str, expected: usize, found: usize },
    /// The token list is empty, or too long for 32-bit ids.
    BadVocabSize(usize),
    /// Two tokens have the same text (llama.cpp refuses such a vocabulary too).
    DuplicateToken { id: u32, first: u32 },
    /// A `tokenizer.ggml.merges` entry is not `"left right"`.
    BadMerge { index: usize, entry: String },
    /// A special-token id key points past the vocabulary.
    TokenIdOutOfRange { key: &'static str, id: u64, vocab_size: usize },
    /// The vocabulary lacks a token the tokenizer cannot work without.
    MissingToken(String),
    /// The chat template failed to parse or render.
    Template(String),
    /// The chat template ran past a limit of its render (instructions, bytes of
    /// text, list items): it came with the file, and may be hostile or broken.
    TemplateBudget(String),
}

impl fmt::Display for TokenizerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingKey(k) => write!(f, "metadata key `{k}` is missing"),
            Self::WrongType { key, expected, found } => {
                write!(f, "metadata key `{key}` should be {expected}, found {found}")
            }
            Self::UnsupportedModel(m) => write!(f, "unsupported tokenizer model `{m}` (tokenizer.ggml.model)"),
            Self::UnknownPreTokenizer(p) => write!(f, "unknown pre-tokenizer type `{p}` (tokenizer.ggml.pre)"),
            Self::UnsupportedPreTokenizer(p) => {
                write!(f, "pre-tokenizer type `{p}` (tokenizer.ggml.pre) is not implemented")
            }
            Self::LengthMismatch { key, expected, found } => {
                write!(f, "`{key}` has {found} entries, the token list has {expected}")
            }
            Self::BadVocabSize(n) => write!(f, "vocabulary of {n} tokens is not usable"),
            Self::DuplicateToken { id, first } => {
                write!(f, "token {id} has the same text as token {first}")
            }
            Self::BadMerge { index, entry } => {
                write!(f, "tokenizer.ggml.merges[{index}] = {entry:?} is not two tokens separated by a space")
            }
            Self::TokenIdOutOfRange { key, id, vocab_size } => {
                write!(f, "`{key}` = {id} is outside the vocabulary of {vocab_size} tokens")
            }
            Self::MissingToken(t) => write!(f, "the vocabulary has no token {t:?}"),
            Self::Template(m) => write!(f, "chat template: {m}"),
            Self::TemplateBudget(what) => write!(
                f,
                "the model's chat template ran past its budget ({what}): the file's template may be hostile or broken"
            ),
        }
    }
}

impl std::error::Error for TokenizerError {}
