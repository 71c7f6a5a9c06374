//! Pre-tokenizers for byte-level BPE: splitting text into words before merging.
//!
//! llama.cpp names a list of regexes per `tokenizer.ggml.pre`, but it does not run them
//! through a Unicode regex engine: the common ones have hand-written splitters (GPT-2,
//! Llama 3, Qwen 2), and the rest run through `std::regex` on a copy of the text where
//! each non-ASCII code point is replaced by a placeholder for its category. Both use
//! llama.cpp's own Unicode 15.1 category table and White_Space set. A Unicode regex
//! engine disagrees with that at the edges (newer Unicode versions, `\s`, unassigned
//! code points), so this module re-implements each splitter's behaviour directly,
//! on the same table (`unicode_table.rs`), rather than using a regex crate.
//!
//! Each splitter refines the segmentation left by the previous one, never crossing a
//! segment boundary; text a pattern does not match stays as pieces of its own.

use crate::unicode::{Class, Flags};
use crate::TokenizerError;

/// One stage of pre-tokenization (one regex of llama.cpp's list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Splitter {
    /// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
    Gpt2,
    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
    Llama3,
    /// As `Llama3` with `\p{N}` instead of `\p{N}{1,3}`.
    Qwen2,
    /// `\p{N}`: every number code point on its own.
    EachNumber,
    /// `\p{N}+`
    NumberRun,
    /// `[\p{P}\$\+<=>\^~\|]+`, with a backtick added when `backtick` is set.
    PunctRun { backtick: bool },
    /// `[0-9][0-9][0-9]`
    DigitTriple,
}

/// The pre-tokenizer of one vocabulary.
#[derive(Clone, Debug)]
pub(crate) struct PreTokenizer {
    splitters: &'static [Splitter],
}

/// The flags llama.cpp sets along with the pre-tokenizer type.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PreFlags {
    /// `clean_spaces = false`: decoding leaves spaces before punctuation alone.
    pub keep_spaces: bool,
    pub ignore_merges: bool,
    /// The default for `add_bos_token` when the key is absent.
    pub add_bos: bool,
    /// The type has no BOS token by default.
    pub no_bos: bool,
}

const GPT2: &[Splitter] = &[Splitter::Gpt2];
const SMOLLM: &[Splitter] = &[Splitter::EachNumber, Splitter::Gpt2];
const LLAMA3: &[Splitter] = &[Splitter::Llama3];
const QWEN2: &[Splitter] = &[Splitter::Qwen2];
const FALCON: &[Splitter] = &[Splitter::PunctRun { backtick: true }, Splitter::Gpt2, Splitter::DigitTriple];
const DEFAULT: &[Splitter] =
    &[Splitter::PunctRun { backtick: false }, Splitter::Gpt2, Splitter::NumberRun, Splitter::DigitTriple];

/// Names llama.cpp accepts whose pre-tokenizers are not implemented here.
const KNOWN_UNSUPPORTED: &[&str] = &[
    "minicpm5",
    "deepseek-llm",
    "deepseek-coder",
    "deepseek-v3",
    "spark2_5",
    "youtu",
    "jais-2",
    "gemma4",
    "granite-embed-multi-311m",
    "sarvam-moe",
    "whitespace",
    "qwen35",
    "poro-chat",
    "viking",
    "tekken",
    "bloom",
    "gpt3-finnish",
    "exaone-moe",
    "chameleon",
    "gpt-4o",
    "llama4",
    "kanana2",
    "talkie",
    "granite-embed-multi-97m",
    "tiny_aya",
    "cohere2moe",
    "superbpe",
    "bailingmoe",
    "bailingmoe2",
    "llada-moe",
    "seed-coder",
    "hunyuan-dense",
    "hy_v4",
    "joyai-llm",
    "kimi-k2",
    "ufakzeka",
    "grok-2",
    "afmoe",
    "laguna",
    "minimax-m2",
];

/// llama.cpp's table from `tokenizer.ggml.pre` to regex list and flags, for the types
/// implemented here. An absent name means `default`, as in llama.cpp.
fn lookup(pre: &str) -> Result<(&'static [Splitter], PreFlags), TokenizerError> {
    let f = PreFlags::default();
    let keep = PreFlags { keep_spaces: true, ..f };
    Ok(match pre {
        "" | "default" => (DEFAULT, f),
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "falcon-h1" | "pixtral" | "midm-2.0" | "lfm2"
        | "jina-v5-nano" => (LLAMA3, PreFlags { ignore_merges: true, add_bos: true, ..f }),
        "dbrx" | "smaug-bpe" => (LLAMA3, f),
        "chatglm-bpe" => (LLAMA3, PreFlags { no_bos: true, ..f }),
        "glm4" | "glm5" => (LLAMA3, PreFlags { no_bos: true, ignore_merges: true, ..f }),
        "falcon" => (FALCON, f),
        "gpt-2" | "phi-2" | "jina-es" | "jina-de" | "gigachat" | "jina-v2-es" | "jina-v2-de" | "a.x-4.0" | "mellum"
        | "modern-bert" | "jina-v1-en" | "jina-v2-code" | "roberta-bpe" | "mpt" | "olmo" | "jais" | "exaone4" => {
            (GPT2, f)
        }
        "trillion" | "granite-docling" => (GPT2, keep),
        "starcoder" | "refact" | "codeshell" | "exaone" | "minerva-7b" | "mellum2" => (SMOLLM, f),
        "smollm" | "command-r" => (SMOLLM, keep),
        "stablelm2" | "megrez" => (QWEN2, f),
        "qwen2" | "deepseek-r1-qwen" | "kormo" | "f2llmv2" | "hunyuan" | "solar-open" => (QWEN2, keep),
        other if KNOWN_UNSUPPORTED.contains(&other) => {
            return Err(TokenizerError::UnsupportedPreTokenizer(other.to_string()))
        }
        other => return Err(TokenizerError::UnknownPreTokenizer(other.to_string())),
    })
}

pub(crate) fn pre_flags(pre: &str) -> Result<PreFlags, TokenizerError> {
    lookup(pre).map(|(_, f)| f)
}

impl PreTokenizer {
    pub fn new(pre: &str) -> Result<PreTokenizer, TokenizerError> {
        lookup(pre).map(|(splitters, _)| PreTokenizer { splitters })
    }

    /// Splits `text` into words; returns their byte ranges, in order, covering `text`.
    pub fn split(&self, text: &str) -> Vec<std::ops::Range<usize>> {
        let mut chars: Vec<char> = Vec::with_capacity(text.len());
        let mut starts: Vec<usize> = Vec::with_capacity(text.len() + 1);
        for (i, c) in text.char_indices() {
            chars.push(c);
            starts.push(i);
        }
        starts.push(text.len());
        let flags: Vec<Flags> = chars.iter().map(|&c| Flags::of(c)).collect();

        // Segment lengths in code points.
        let mut segs = vec![chars.len()];
        for &s in self.splitters {
            let mut out = Vec::with_capacity(segs.len() * 2);
            let mut start = 0;
            for &len in &segs {
                let seg = Segment { chars: &chars[start..start + len], flags: &flags[start..start + len] };
                seg.split(s, &mut out);
                start += len;
            }
            segs = out;
        }
        let mut ranges = Vec::with_capacity(segs.len());
        let mut at = 0;
        for len in segs {
            if len > 0 {
                ranges.push(starts[at]..starts[at + len]);
                at += len;
            }
        }
        ranges
    }
}

/// One segment being split: positions outside it read as "nothing".
struct Segment<'a> {
    chars: &'a [char],
    flags: &'a [Flags],
}

impl Segment<'_> {
    fn len(&self) -> usize {
        self.chars.len()
    }
    fn cpt(&self, i: usize) -> Option<char> {
        self.chars.get(i).copied()
    }
    fn flags(&self, i: usize) -> Option<Flags> {
        self.flags.get(i).copied()
    }
    fn letter(&self, i: usize) -> bool {
        self.flags(i).is_some_and(Flags::is_letter)
    }
    fn number(&self, i: usize) -> bool {
        self.flags(i).is_some_and(Flags::is_number)
    }
    fn space(&self, i: usize) -> bool {
        self.flags(i).is_some_and(|f| f.whitespace)
    }
    /// Inside the segment and none of whitespace, letter, number.
    fn other(&self, i: usize) -> bool {
        self.flags(i).is_some_and(|f| !f.whitespace && !f.is_letter() && !f.is_number())
    }

    fn split(&self, s: Splitter, out: &mut Vec<usize>) {
        match s {
            Splitter::Gpt2 => self.split_gpt2(out),
            Splitter::Llama3 => self.split_llama3(out, true),
            Splitter::Qwen2 => self.split_llama3(out, false),
            Splitter::EachNumber => self.split_class(out, false, is_number_collapsed),
            Splitter::NumberRun => self.split_class(out, true, is_number_collapsed),
            Splitter::PunctRun { backtick } => self.split_class(out, true, move |c, f| {
                (c == '`' && backtick)
                    || matches!(c, '$' | '+' | '<' | '=' | '>' | '^' | '~' | '|')
                    || (!f.whitespace && f.class == Class::Punctuation)
            }),
            Splitter::DigitTriple => self.split_digit_triples(out),
        }
    }

    /// Runs (or single code points, when `runs` is false) matching `pred` become
    /// pieces, and so does the text between them.
    fn split_class(&self, out: &mut Vec<usize>, runs: bool, pred: impl Fn(char, Flags) -> bool) {
        let mut gap = 0;
        let mut i = 0;
        while i < self.len() {
            if pred(self.chars[i], self.flags[i]) {
                if gap > 0 {
                    out.push(gap);
                    gap = 0;
                }
                let start = i;
                i += 1;
                while runs && i < self.len() && pred(self.chars[i], self.flags[i]) {
                    i += 1;
                }
                out.push(i - start);
            } else {
                gap += 1;
                i += 1;
            }
        }
        if gap > 0 {
            out.push(gap);
        }
    }

    fn split_digit_triples(&self, out: &mut Vec<usize>) {
        let digit = |i: usize| self.cpt(i).is_some_and(|c| c.is_ascii_digit());
        let mut gap = 0;
        let mut i = 0;
        while i < self.len() {
            if digit(i) && digit(i + 1) && digit(i + 2) {
                if gap > 0 {
                    out.push(gap);
                    gap = 0;
                }
                out.push(3);
                i += 3;
            } else {
                gap += 1;
                i += 1;
            }
        }
        if gap > 0 {
            out.push(gap);
        }
    }

    /// Length of a contraction (`'s`, `'t`, `'m`, `'d`, `'re`, `'ve`, `'ll`) at `pos`, or 0.
    fn contraction(&self, pos: usize, fold_case: bool) -> usize {
        if self.cpt(pos) != Some('\'') || pos + 1 >= self.len() {
            return 0;
        }
        let low = |i: usize| {
            let c = self.cpt(i).unwrap_or('\0');
            if fold_case {
                c.to_ascii_lowercase()
            } else {
                c
            }
        };
        let c1 = low(pos + 1);
        if matches!(c1, 's' | 't' | 'm' | 'd') {
            return 2;
        }
        if pos + 2 < self.len() {
            let c2 = low(pos + 2);
            if matches!((c1, c2), ('r', 'e') | ('v', 'e') | ('l', 'l')) {
                return 3;
            }
        }
        0
    }

    /// Whitespace handling shared by both hand-written splitters: a run of whitespace
    /// followed by more text leaves its last code point for the next word.
    fn whitespace_run(&self, pos: usize) -> usize {
        let mut n = 0;
        while self.space(pos + n) {
            n += 1;
        }
        if n > 1 && pos + n < self.len() {
            n - 1
        } else {
            n.max(1)
        }
    }

    fn split_gpt2(&self, out: &mut Vec<usize>) {
        let mut pos = 0;
        while pos < self.len() {
            let start = pos;
            let c = self.chars[pos];
            let k = self.contraction(pos, false);
            if k > 0 {
                pos += k;
            } else {
                // An optional leading space, then a run of one kind.
                let lead = usize::from(c == ' ');
                let at = pos + lead;
                if self.letter(at) {
                    pos = at;
                    while self.letter(pos) {
                        pos += 1;
                    }
                } else if self.number(at) {
                    pos = at;
                    while self.number(pos) {
                        pos += 1;
                    }
                } else if self.other(at) {
                    pos = at;
                    while self.other(pos) {
                        pos += 1;
                    }
                } else {
                    pos += self.whitespace_run(pos);
                }
            }
            out.push(pos - start);
        }
    }

    fn split_llama3(&self, out: &mut Vec<usize>, number_triples: bool) {
        let mut pos = 0;
        while pos < self.len() {
            let c = self.chars[pos];
            let f = self.flags[pos];
            let k = self.contraction(pos, true);
            if k > 0 {
                out.push(k);
                pos += k;
                continue;
            }
            // [^\r\n\p{L}\p{N}]?\p{L}+
            if !(c == '\r' || c == '\n' || f.is_number()) && (f.is_letter() || self.letter(pos + 1)) {
                let start = pos;
                pos += 1;
                while self.letter(pos) {
                    pos += 1;
                }
                out.push(pos - start);
                continue;
            }
            // \p{N}{1,3} or \p{N}
            if f.is_number() {
                let start = pos;
                if number_triples {
                    let mut group = pos;
                    while self.number(pos) {
                        pos += 1;
                        if pos - group >= 3 {
                            out.push(pos - group);
                            group = pos;
                        }
                    }
                    if pos > group {
                        out.push(pos - group);
                    }
                } else {
                    pos += 1;
                    out.push(pos - start);
                }
                continue;
            }
            // ` ?[^\s\p{L}\p{N}]+[\r\n]*`; a lone space at the segment's end lands here too.
            let at = pos + usize::from(c == ' ');
            let next_plain = match self.flags(at) {
                Some(g) => !g.whitespace && !g.is_letter() && !g.is_number(),
                None => true,
            };
            if next_plain {
                let start = pos;
                pos = at;
                while self.other(pos) {
                    pos += 1;
                }
                while matches!(self.cpt(pos), Some('\r' | '\n')) {
                    pos += 1;
                }
                out.push(pos - start);
                continue;
            }
            // \s*[\r\n]+ : whitespace up to and including the last \r or \n of the run.
            let mut n = 0;
            let mut last_nl = None;
            while self.space(pos + n) {
                if matches!(self.chars[pos + n], '\r' | '\n') {
                    last_nl = Some(n + 1);
                }
                n += 1;
            }
            let len = match last_nl {
                Some(l) => l,
                None => self.whitespace_run(pos),
            };
            out.push(len);
            pos += len;
        }
    }
}

/// `\p{N}` as llama.cpp's collapsed-text regex sees it: an ASCII digit, or a non-ASCII
/// number that is not whitespace.
fn is_number_collapsed(c: char, f: Flags) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && !f.whitespace && f.class == Class::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words<'a>(pre: &str, text: &'a str) -> Vec<&'a str> {
        let p = PreTokenizer::new(pre).unwrap();
        p.split(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn gpt2_words() {
        assert_eq!(
            words("gpt-2", "Hello world's  end!!\n\n x"),
            ["Hello", " world", "'s", " ", " end", "!!", "\n\n", " x"]
        );
        assert_eq!(words("gpt-2", "a   "), ["a", "   "]);
        assert_eq!(words("gpt-2", " 123abc"), [" 123", "abc"]);
    }

    #[test]
    fn smollm_splits_digits() {
        assert_eq!(words("smollm", "x 2024"), ["x", " ", "2", "0", "2", "4"]);
    }

    #[test]
    fn llama3_words() {
        assert_eq!(
            words("llama-bpe", "Hello WORLD'S 1234567 ok?\r\n\n  hi"),
            ["Hello", " WORLD", "'S", " ", "123", "456", "7", " ok", "?\r\n\n", " ", " hi"]
        );
        assert_eq!(words("qwen2", "12 a"), ["1", "2", " a"]);
    }

    #[test]
    fn default_words() {
        assert_eq!(words("default", "a+b=12345, ok"), ["a", "+", "b", "=", "123", "45", ",", " ok"]);
    }

    #[test]
    fn unknown_and_unsupported() {
        assert!(matches!(PreTokenizer::new("nope"), Err(TokenizerError::UnknownPreTokenizer(_))));
        assert!(matches!(PreTokenizer::new("tekken"), Err(TokenizerError::UnsupportedPreTokenizer(_))));
    }
}
