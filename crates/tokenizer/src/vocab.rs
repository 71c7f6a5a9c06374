//! The token table read from GGUF metadata: texts, scores, attributes, the text→id
//! index, and the special ids, with llama.cpp's defaults and fix-ups applied once.

use kindling_gguf::{Array, Metadata, Value};

use crate::TokenizerError;

/// Token attributes, the same bits llama.cpp uses (`llama_token_attr`).
pub(crate) mod attr {
    pub const UNDEFINED: u16 = 0;
    pub const UNKNOWN: u16 = 1 << 0;
    pub const UNUSED: u16 = 1 << 1;
    pub const NORMAL: u16 = 1 << 2;
    pub const CONTROL: u16 = 1 << 3;
    pub const USER_DEFINED: u16 = 1 << 4;
    pub const BYTE: u16 = 1 << 5;
    pub const LSTRIP: u16 = 1 << 7;
    pub const RSTRIP: u16 = 1 << 8;
}

/// Which algorithm `tokenizer.ggml.model` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ModelType {
    /// `gpt2`: byte-level BPE with merges and a pre-tokenizer.
    Bpe,
    /// `llama`: SentencePiece-style merges by score with byte fallback.
    Spm,
    /// `bert`: WordPiece, greedy longest match over a phantom-space vocabulary.
    Wpm,
}

pub(crate) mod key {
    pub const MODEL: &str = "tokenizer.ggml.model";
    pub const PRE: &str = "tokenizer.ggml.pre";
    pub const TOKENS: &str = "tokenizer.ggml.tokens";
    pub const SCORES: &str = "tokenizer.ggml.scores";
    pub const TOKEN_TYPE: &str = "tokenizer.ggml.token_type";
    pub const MERGES: &str = "tokenizer.ggml.merges";
    pub const ADD_BOS: &str = "tokenizer.ggml.add_bos_token";
    pub const ADD_EOS: &str = "tokenizer.ggml.add_eos_token";
    pub const ADD_SPACE_PREFIX: &str = "tokenizer.ggml.add_space_prefix";
    pub const NORMALIZER_LOWERCASE: &str = "tokenizer.ggml.normalizer.lowercase";
    pub const NORMALIZER_STRIP_ACCENTS: &str = "tokenizer.ggml.normalizer.strip_accents";
    pub const BOS: &str = "tokenizer.ggml.bos_token_id";
    pub const EOS: &str = "tokenizer.ggml.eos_token_id";
    pub const EOT: &str = "tokenizer.ggml.eot_token_id";
    pub const EOM: &str = "tokenizer.ggml.eom_token_id";
    pub const UNK: &str = "tokenizer.ggml.unknown_token_id";
    pub const SEP: &str = "tokenizer.ggml.seperator_token_id";
    pub const PAD: &str = "tokenizer.ggml.padding_token_id";
    pub const MASK: &str = "tokenizer.ggml.mask_token_id";
    pub const FIM_PRE: &str = "tokenizer.ggml.fim_pre_token_id";
    pub const FIM_SUF: &str = "tokenizer.ggml.fim_suf_token_id";
    pub const FIM_MID: &str = "tokenizer.ggml.fim_mid_token_id";
    pub const FIM_PAD: &str = "tokenizer.ggml.fim_pad_token_id";
    pub const FIM_REP: &str = "tokenizer.ggml.fim_rep_token_id";
    pub const FIM_SEP: &str = "tokenizer.ggml.fim_sep_token_id";
    pub const PREFIX: &str = "tokenizer.ggml.prefix_token_id";
    pub const SUFFIX: &str = "tokenizer.ggml.suffix_token_id";
    pub const MIDDLE: &str = "tokenizer.ggml.middle_token_id";
    pub const CHAT_TEMPLATE: &str = "tokenizer.chat_template";
    pub const GENERAL_NAME: &str = "general.name";
    pub const GENERAL_ARCH: &str = "general.architecture";
}

/// The special ids llama.cpp tracks. `None` is its `LLAMA_TOKEN_NULL`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SpecialIds {
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub eot: Option<u32>,
    pub eom: Option<u32>,
    pub unk: Option<u32>,
    pub sep: Option<u32>,
    pub pad: Option<u32>,
    pub mask: Option<u32>,
    pub fim_pre: Option<u32>,
    pub fim_suf: Option<u32>,
    pub fim_mid: Option<u32>,
    pub fim_pad: Option<u32>,
    pub fim_rep: Option<u32>,
    pub fim_sep: Option<u32>,
}

/// The token table.
pub(crate) struct Vocab {
    /// All token texts, back to back; token `i` is `text[offsets[i]..offsets[i + 1]]`.
    text: Vec<u8>,
    offsets: Vec<u32>,
    pub scores: Vec<f32>,
    pub attrs: Vec<u16>,
    index: TokenIndex,
    pub model: ModelType,
    /// `tokenizer.ggml.pre` as written (empty when absent).
    pub pre: String,
    pub ids: SpecialIds,
    pub add_bos: bool,
    pub add_eos: bool,
    pub add_space_prefix: bool,
    /// Whether to escape spaces as U+2581 before tokenizing (SentencePiece).
    pub escape_whitespaces: bool,
    /// llama.cpp's `clean_spaces` (`clean_up_tokenization_spaces`) for decoding.
    pub clean_spaces: bool,
    /// Emit a pre-tokenized word as one token when the whole word is in the vocabulary.
    pub ignore_merges: bool,
    /// Ids that end generation, ascending.
    pub eog: Vec<u32>,
    /// WordPiece (BertNormalizer) options: lower-case the text, and strip accents
    /// (llama.cpp: both default to true, strip_accents to whatever lowercase is).
    pub lowercase: bool,
    pub strip_accents: bool,
}

impl Vocab {
    pub fn len(&self) -> usize {
        self.attrs.len()
    }

    /// The stored text of token `id` (empty for an id past the vocabulary).
    pub fn text(&self, id: u32) -> &[u8] {
        let i = id as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.text[a as usize..b as usize],
            _ => &[],
        }
    }

    pub fn attr(&self, id: u32) -> u16 {
        self.attrs.get(id as usize).copied().unwrap_or(attr::UNDEFINED)
    }

    /// llama.cpp's `text_to_token`: any token whose text is exactly `text`.
    pub fn find(&self, text: &[u8]) -> Option<u32> {
        self.index.find(text, |id| self.text(id))
    }

    pub fn from_metadata(md: &Metadata) -> Result<Vocab, TokenizerError> {
        let model_name = get_str(md, key::MODEL)?.ok_or(TokenizerError::MissingKey(key::MODEL))?;
        let pre = get_str(md, key::PRE)?.unwrap_or("").to_string();
        let model = match model_name {
            "gpt2" => ModelType::Bpe,
            "llama" => ModelType::Spm,
            "bert" => ModelType::Wpm,
            other => return Err(TokenizerError::UnsupportedModel(other.to_string())),
        };

        // The token list, scores and types.
        let tokens = match md.get(key::TOKENS) {
            None => return Err(TokenizerError::MissingKey(key::TOKENS)),
            Some(Value::Array(Array::String(v))) => v,
            Some(v) => return Err(wrong_type(key::TOKENS, "an array of strings", v)),
        };
        let n = tokens.len();
        if n == 0 || n > i32::MAX as usize {
            return Err(TokenizerError::BadVocabSize(n));
        }
        let scores = read_scores(md, n)?;
        let attrs = read_token_types(md, n)?;

        let mut text = Vec::new();
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u32);
        for (i, t) in tokens.iter().enumerate() {
            if t.is_empty() {
                // llama.cpp gives an empty token a placeholder text.
                text.extend_from_slice(format!("[EMPTY_{i}]").as_bytes());
            } else {
                text.extend_from_slice(t.as_bytes());
            }
            let end = u32::try_from(text.len()).map_err(|_| TokenizerError::BadVocabSize(n))?;
            offsets.push(end);
        }
        let mut vocab = Vocab {
            text,
            offsets,
            scores,
            attrs,
            index: TokenIndex::default(),
            model,
            pre,
            ids: SpecialIds::default(),
            add_bos: false,
            add_eos: false,
            add_space_prefix: false,
            escape_whitespaces: false,
            clean_spaces: false,
            ignore_merges: false,
            eog: Vec::new(),
            lowercase: true,
            strip_accents: true,
        };
        vocab.index = TokenIndex::build(n, |id| vocab.text(id))?;

        vocab.apply_model_defaults()?;
        if let Some(v) = get_bool(md, key::ADD_SPACE_PREFIX)? {
            vocab.add_space_prefix = v;
        }
        vocab.read_special_ids(md)?;
        if let Some(v) = get_bool(md, key::ADD_BOS)? {
            vocab.add_bos = v;
        }
        if let Some(v) = get_bool(md, key::ADD_EOS)? {
            vocab.add_eos = v;
        }
        if let Some(v) = get_bool(md, key::NORMALIZER_LOWERCASE)? {
            vocab.lowercase = v;
        }
        vocab.strip_accents = vocab.lowercase;
        if let Some(v) = get_bool(md, key::NORMALIZER_STRIP_ACCENTS)? {
            vocab.strip_accents = v;
        }
        if vocab.model == ModelType::Wpm {
            // llama.cpp's WordPiece adds BOS ([CLS]) and SEP whatever add_bos_token /
            // add_eos_token say, and emits the unknown token for a word it cannot cover;
            // without them it would assert or emit -1.
            let need = [("BOS ([CLS])", vocab.ids.bos), ("SEP", vocab.ids.sep), ("UNK", vocab.ids.unk)];
            if let Some((what, _)) = need.iter().find(|(_, id)| id.is_none()) {
                return Err(TokenizerError::MissingToken(format!("{what} (needed by the bert tokenizer)")));
            }
        } else if vocab.add_bos && vocab.ids.bos.is_none() {
            return Err(TokenizerError::MissingToken("BOS (add_bos_token is set)".into()));
        }
        if vocab.model != ModelType::Wpm && vocab.add_eos && vocab.ids.eos.is_none() {
            return Err(TokenizerError::MissingToken("EOS (add_eos_token is set)".into()));
        }
        vocab.detect_special_tokens();
        vocab.apply_name_attributes(md)?;
        Ok(vocab)
    }

    /// Defaults llama.cpp applies per tokenizer model and pre-tokenizer name, before
    /// the metadata's own keys override them.
    fn apply_model_defaults(&mut self) -> Result<(), TokenizerError> {
        let n = self.len() as u32;
        let in_vocab = |id: u32| (id < n).then_some(id);
        match self.model {
            ModelType::Spm => {
                self.ids.bos = in_vocab(1);
                self.ids.eos = in_vocab(2);
                self.ids.unk = in_vocab(0);
                self.add_space_prefix = true;
                self.escape_whitespaces = true;
                self.clean_spaces = false;
                self.add_bos = true;
                self.add_eos = false;
            }
            ModelType::Wpm => {
                self.ids.bos = in_vocab(101);
                self.ids.unk = in_vocab(100);
                self.ids.sep = in_vocab(102);
                self.ids.pad = in_vocab(0);
                self.ids.mask = in_vocab(103);
                self.add_space_prefix = false;
                self.escape_whitespaces = false;
                self.clean_spaces = true;
                self.add_bos = true;
                self.add_eos = false;
            }
            ModelType::Bpe => {
                self.ids.bos = in_vocab(11);
                self.ids.eos = in_vocab(11);
                self.add_space_prefix = false;
                self.escape_whitespaces = false;
                self.clean_spaces = true;
                let flags = crate::pretokenize::pre_flags(&self.pre)?;
                if flags.keep_spaces {
                    self.clean_spaces = false;
                }
                self.ignore_merges = flags.ignore_merges;
                self.add_bos = flags.add_bos;
                if flags.no_bos {
                    self.ids.bos = None;
                }
            }
        }
        Ok(())
    }

    fn read_special_ids(&mut self, md: &Metadata) -> Result<(), TokenizerError> {
        let n = self.len();
        type Slot = fn(&mut SpecialIds) -> &mut Option<u32>;
        let slots: [(&'static str, Slot); 17] = [
            (key::BOS, |s| &mut s.bos),
            (key::EOS, |s| &mut s.eos),
            (key::EOT, |s| &mut s.eot),
            (key::EOM, |s| &mut s.eom),
            (key::UNK, |s| &mut s.unk),
            (key::SEP, |s| &mut s.sep),
            (key::PAD, |s| &mut s.pad),
            (key::MASK, |s| &mut s.mask),
            (key::FIM_PRE, |s| &mut s.fim_pre),
            (key::FIM_SUF, |s| &mut s.fim_suf),
            (key::FIM_MID, |s| &mut s.fim_mid),
            (key::FIM_PAD, |s| &mut s.fim_pad),
            (key::FIM_REP, |s| &mut s.fim_rep),
            (key::FIM_SEP, |s| &mut s.fim_sep),
            (key::PREFIX, |s| &mut s.fim_pre),
            (key::SUFFIX, |s| &mut s.fim_suf),
            (key::MIDDLE, |s| &mut s.fim_mid),
        ];
        for (k, slot) in slots {
            let Some(v) = md.get(k) else { continue };
            let id = v.as_u64().ok_or_else(|| wrong_type(k, "a token id", v))?;
            // llama.cpp warns and keeps its default here; a file that points a special
            // id past its own vocabulary is broken, so we refuse it.
            if id >= n as u64 {
                return Err(TokenizerError::TokenIdOutOfRange { key: k, id, vocab_size: n });
            }
            *slot(&mut self.ids) = Some(id as u32);
        }
        Ok(())
    }

    /// llama.cpp finds EOT/EOM/FIM tokens and the end-of-generation set by their text,
    /// marks those tokens as control, marks control tokens named "unused" as unused, and
    /// applies a few per-family fixes. The same rules, in the same order.
    fn detect_special_tokens(&mut self) {
        const EOT: &[&str] = &[
            "<|eot_id|>",
            "<|im_end|>",
            "<|end|>",
            "<end_of_turn>",
            "<|endoftext|>",
            "<|end_of_text|>",
            "<EOT>",
            "_<EOT>",
            "[EOT]",
            "<｜end▁of▁sentence｜>",
            "<end_of_utterance>",
        ];
        const EOM: &[&str] = &["<|eom_id|>"];
        const FIM_PRE: &[&str] = &[
            "<|fim_prefix|>",
            "<fim-prefix>",
            "<fim_prefix>",
            "<｜fim▁begin｜>",
            "<PRE>",
            "▁<PRE>",
            "<|code_prefix|>",
            "<|prefix|>",
        ];
        const FIM_SUF: &[&str] = &[
            "<|fim_suffix|>",
            "<fim-suffix>",
            "<fim_suffix>",
            "<｜fim▁hole｜>",
            "<SUF>",
            "▁<SUF>",
            "<|code_suffix|>",
            "<|suffix|>",
        ];
        const FIM_MID: &[&str] = &[
            "<|fim_middle|>",
            "<fim-middle>",
            "<fim_middle>",
            "<｜fim▁end｜>",
            "<MID>",
            "▁<MID>",
            "<|code_middle|>",
            "<|middle|>",
        ];
        const FIM_PAD: &[&str] = &["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"];
        const FIM_REP: &[&str] = &["<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"];
        const FIM_SEP: &[&str] = &["<|file_sep|>"];
        const EOG: &[&str] = &[
            "<|eot_id|>",
            "<|im_end|>",
            "<|end|>",
            "<|return|>",
            "<|call|>",
            "<|flush|>",
            "<|calls|>",
            "<end_of_turn>",
            "<|endoftext|>",
            "</s>",
            "<|eom_id|>",
            "<EOT>",
            "_<EOT>",
            "[EOT]",
            "[EOS]",
            "<|end_of_text|>",
            "<end_of_utterance>",
            "<eos>",
            "<turn|>",
            "<|tool_response>",
            "<｜end▁of▁sentence｜>",
            "[e~[",
        ];

        // llama.cpp walks a hash map here, so when several candidate texts exist the
        // one it picks is unspecified; we take the one earliest in each list.
        let found = |ids: &mut Option<u32>, names: &[&str], attrs: &mut Vec<u16>, this: &Vocab| {
            if ids.is_some() {
                return;
            }
            for name in names {
                if let Some(id) = this.find(name.as_bytes()) {
                    *ids = Some(id);
                    attrs[id as usize] |= attr::CONTROL;
                    return;
                }
            }
        };
        let mut attrs = std::mem::take(&mut self.attrs);
        let mut ids = self.ids;
        found(&mut ids.eot, EOT, &mut attrs, self);
        found(&mut ids.eom, EOM, &mut attrs, self);
        found(&mut ids.fim_pre, FIM_PRE, &mut attrs, self);
        found(&mut ids.fim_suf, FIM_SUF, &mut attrs, self);
        found(&mut ids.fim_mid, FIM_MID, &mut attrs, self);
        found(&mut ids.fim_pad, FIM_PAD, &mut attrs, self);
        found(&mut ids.fim_rep, FIM_REP, &mut attrs, self);
        found(&mut ids.fim_sep, FIM_SEP, &mut attrs, self);
        self.ids = ids;

        // Control tokens whose text says "unused" are unused.
        for (id, a) in attrs.iter_mut().enumerate() {
            if *a & attr::CONTROL != 0 && contains(self.text(id as u32), b"unused") {
                *a |= attr::UNUSED;
            }
        }

        // End-of-generation set.
        let mut eog: Vec<u32> = Vec::new();
        eog.extend(ids.fim_pad);
        eog.extend(ids.fim_rep);
        eog.extend(ids.fim_sep);
        for name in EOG {
            if let Some(id) = self.find(name.as_bytes()) {
                eog.push(id);
                attrs[id as usize] |= attr::CONTROL;
            }
        }
        // gpt-oss: these are always rendered.
        for name in ["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"] {
            if let Some(id) = self.find(name.as_bytes()) {
                attrs[id as usize] = attr::USER_DEFINED;
            }
        }
        eog.extend(ids.eos);
        eog.extend(ids.eot);
        eog.extend(ids.eom);
        eog.sort_unstable();
        eog.dedup();

        let with_text = |eog: &[u32], t: &str| eog.iter().copied().find(|&id| self.text(id) == t.as_bytes());
        // o200k_harmony / solar-open: "<|end|>" ends a message, not generation.
        let has = |eog: &[u32], t: &str| with_text(eog, t).is_some();
        let harmony =
            (has(&eog, "<|return|>") && has(&eog, "<|call|>")) || (has(&eog, "<|calls|>") && has(&eog, "<|flush|>"));
        if harmony {
            if let Some(end) = with_text(&eog, "<|end|>") {
                eog.retain(|&id| id != end);
                attrs[end as usize] = attr::USER_DEFINED;
            }
        }
        // gemma4 / plamo: "</s>" is an ordinary token there.
        if has(&eog, "<|tool_response>") || has(&eog, "<|plamo:eos|>") {
            if let Some(s) = with_text(&eog, "</s>") {
                eog.retain(|&id| id != s);
                attrs[s as usize] = attr::NORMAL;
            }
        }
        self.attrs = attrs;
        self.eog = eog;
    }

    /// The lstrip/rstrip attributes llama.cpp sets by model name (they are not stored
    /// in GGUF).
    fn apply_name_attributes(&mut self, md: &Metadata) -> Result<(), TokenizerError> {
        let name = get_str(md, key::GENERAL_NAME)?.unwrap_or("").to_lowercase();
        let arch = get_str(md, key::GENERAL_ARCH)?.unwrap_or("");
        let pre = self.pre.clone();
        let set = |this: &mut Vocab, text: &str, bit: u16, on: bool| {
            if let Some(id) = this.find(text.as_bytes()) {
                let a = &mut this.attrs[id as usize];
                *a = if on { *a | bit } else { *a & !bit };
            }
        };
        if ["jina-v2-de", "jina-v2-es", "jina-v2-code"].iter().any(|p| pre.contains(p))
            || ["nomic-bert-moe", "jina-bert-v3"].iter().any(|a| arch.contains(a))
        {
            set(self, "<mask>", attr::LSTRIP, true);
        } else if name.contains("phi-3") || name.contains("phi3") {
            for a in self.attrs.iter_mut() {
                if *a & (attr::CONTROL | attr::USER_DEFINED | attr::UNKNOWN) != 0 {
                    *a |= attr::RSTRIP;
                }
            }
            set(self, "</s>", attr::RSTRIP, true);
            for t in ["<unk>", "<s>", "<|endoftext|>"] {
                set(self, t, attr::RSTRIP, false);
            }
        } else if name.contains("modern-bert") {
            set(self, "[MASK]", attr::LSTRIP, true);
        }
        Ok(())
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn wrong_type(key: &'static str, expected: &'static str, v: &Value) -> TokenizerError {
    let found = match v {
        Value::Array(a) => match a {
            Array::String(_) => "an array of strings",
            Array::F32(_) => "an array of f32",
            Array::I32(_) => "an array of i32",
            _ => "an array of another type",
        },
        other => other.type_name(),
    };
    TokenizerError::WrongType { key, expected, found }
}

pub(crate) fn get_str<'a>(md: &'a Metadata, k: &'static str) -> Result<Option<&'a str>, TokenizerError> {
    match md.get(k) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(wrong_type(k, "a string", v)),
    }
}

fn get_bool(md: &Metadata, k: &'static str) -> Result<Option<bool>, TokenizerError> {
    match md.get(k) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(wrong_type(k, "a bool", v)),
    }
}

fn read_scores(md: &Metadata, n: usize) -> Result<Vec<f32>, TokenizerError> {
    let scores = match md.get(key::SCORES) {
        None => return Ok(vec![0.0; n]),
        Some(Value::Array(Array::F32(v))) => v.clone(),
        Some(Value::Array(Array::I32(v))) => v.iter().map(|&x| x as f32).collect(),
        Some(v) => return Err(wrong_type(key::SCORES, "an array of f32 or i32", v)),
    };
    if scores.len() < n {
        return Err(TokenizerError::LengthMismatch { key: key::SCORES, expected: n, found: scores.len() });
    }
    Ok(scores[..n].to_vec())
}

fn read_token_types(md: &Metadata, n: usize) -> Result<Vec<u16>, TokenizerError> {
    let Some(v) = md.get(key::TOKEN_TYPE) else {
        return Ok(vec![attr::NORMAL; n]);
    };
    let arr = match v {
        Value::Array(
            a @ (Array::I8(_)
            | Array::U8(_)
            | Array::I16(_)
            | Array::U16(_)
            | Array::I32(_)
            | Array::U32(_)
            | Array::I64(_)
            | Array::U64(_)),
        ) => a,
        other => return Err(wrong_type(key::TOKEN_TYPE, "an array of integers", other)),
    };
    if arr.len() < n {
        return Err(TokenizerError::LengthMismatch { key: key::TOKEN_TYPE, expected: n, found: arr.len() });
    }
    Ok((0..n)
        .map(|i| match arr.get_i64(i) {
            Some(1) => attr::NORMAL,
            Some(2) => attr::UNKNOWN,
            Some(3) => attr::CONTROL,
            Some(4) => attr::USER_DEFINED,
            Some(5) => attr::UNUSED,
            Some(6) => attr::BYTE,
            _ => attr::UNDEFINED,
        })
        .collect())
}

/// An open-addressing hash table from token text to id that stores only ids: the
/// texts stay in the vocabulary's one buffer.
#[derive(Default)]
struct TokenIndex {
    /// `id + 1` per slot, 0 for empty; the length is a power of two.
    slots: Vec<u32>,
}

impl TokenIndex {
    fn build<'a>(n: usize, text: impl Fn(u32) -> &'a [u8]) -> Result<TokenIndex, TokenizerError> {
        let size = (n * 2).next_power_of_two().max(2);
        let mut index = TokenIndex { slots: vec![0; size] };
        let mask = size - 1;
        for id in 0..n as u32 {
            let t = text(id);
            let mut i = hash(t) as usize & mask;
            loop {
                match index.slots[i] {
                    0 => {
                        index.slots[i] = id + 1;
                        break;
                    }
                    other if text(other - 1) == t => {
                        return Err(TokenizerError::DuplicateToken { id, first: other - 1 });
                    }
                    _ => i = (i + 1) & mask,
                }
            }
        }
        Ok(index)
    }

    fn find<'a>(&self, t: &[u8], text: impl Fn(u32) -> &'a [u8]) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = hash(t) as usize & mask;
        loop {
            match self.slots[i] {
                0 => return None,
                s if text(s - 1) == t => return Some(s - 1),
                _ => i = (i + 1) & mask,
            }
        }
    }
}

/// A fast non-cryptographic hash (FxHash-style over 8-byte words).
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    // Mix the high bits down: the table indexes with the low ones.
    h ^ (h >> 29) ^ (h >> 47)
}
