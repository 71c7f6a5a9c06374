//! WordPiece tokenization (`tokenizer.ggml.model = bert`) as llama.cpp's WPM tokenizer
//! does it.
//!
//! The GGUF vocabulary is the converter's "phantom space" form of a BERT `vocab.txt`: a
//! word-start piece `hello` is stored as `▁hello`, a continuation piece `##ing` as `ing`,
//! and control tokens (`[CLS]`, `[SEP]`, ...) as they are. So a word is matched as
//! `▁` + word, greedily, longest piece first, from left to right; a word with any
//! position no piece covers becomes one unknown token.
//!
//! Before that the text is cut into words the way llama.cpp's `preprocess` does (a
//! simplified BertNormalizer + BertPreTokenizer): with `strip_accents` every code point
//! becomes the first code point of its NFD form and marks are dropped; whitespace ends a
//! word; NUL, U+FFFD and control / format characters vanish; with `lowercase` the rest
//! is lower-cased one code point at a time; punctuation, ASCII symbols and CJK
//! ideographs are words of one character.

use crate::unicode::{nfd_first, to_lower, Class, Flags};
use crate::vocab::Vocab;

/// U+2581, the phantom space the converter puts before word-start pieces.
const PHANTOM: &str = "\u{2581}";

pub(crate) struct WordPiece {
    /// The longest token text in bytes: no longer piece can match.
    max_token_len: usize,
    unk: u32,
}

impl WordPiece {
    /// `unk` is the unknown token's id (checked present when the vocabulary was read).
    pub fn new(vocab: &Vocab, unk: u32) -> WordPiece {
        let max_token_len = (0..vocab.len() as u32).map(|id| vocab.text(id).len()).max().unwrap_or(0);
        WordPiece { max_token_len, unk }
    }

    /// Tokenizes one raw-text fragment (special tokens already split out), appending ids.
    pub fn encode(&self, vocab: &Vocab, text: &str, out: &mut Vec<u32>) {
        let mut word = String::from(PHANTOM);
        for w in words(text, vocab.lowercase, vocab.strip_accents) {
            word.truncate(PHANTOM.len());
            word.push_str(&w);
            self.encode_word(vocab, word.as_bytes(), out);
        }
    }

    /// Greedy longest match over `▁word`; all or nothing.
    fn encode_word(&self, vocab: &Vocab, word: &[u8], out: &mut Vec<u32>) {
        let start = out.len();
        let n = word.len();
        let mut i = 0;
        while i < n {
            // Byte ranges, as llama.cpp: a piece that matched is valid UTF-8, so it
            // starts and ends on character boundaries whenever `i` does.
            let longest = n.min(i + self.max_token_len);
            match (i + 1..=longest).rev().find_map(|j| vocab.find(&word[i..j]).map(|id| (id, j))) {
                Some((id, j)) => {
                    out.push(id);
                    i = j;
                }
                None => {
                    out.truncate(start);
                    break;
                }
            }
        }
        if out.len() == start {
            out.push(self.unk);
        }
    }
}

/// llama.cpp's `llm_tokenizer_wpm_session::preprocess`: the words of `text`.
pub(crate) fn words(text: &str, lowercase: bool, strip_accents: bool) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        let c = if strip_accents { nfd_first(c) } else { c };
        let flags = Flags::of(c);
        if flags.whitespace {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c == '\0' || c == '\u{FFFD}' || flags.class == Class::Control {
            continue;
        }
        if strip_accents && flags.class == Class::Mark {
            continue;
        }
        let s = if lowercase { to_lower(c) } else { c };
        let alone = flags.class == Class::Punctuation
            || ((c as u32) < 0x7F && flags.class == Class::Symbol)
            || is_chinese_char(c as u32);
        if alone {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            words.push(s.to_string());
        } else {
            cur.push(s);
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The CJK ideograph blocks BERT splits into single characters (the same ranges as
/// llama.cpp, which follows Hugging Face's Rust tokenizers, 0x2B920 included).
fn is_chinese_char(cp: u32) -> bool {
    matches!(cp,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::words;

    fn w(text: &str) -> Vec<String> {
        words(text, true, true)
    }

    #[test]
    fn splits_like_bert() {
        assert_eq!(w("Hello, World!"), ["hello", ",", "world", "!"]);
        assert_eq!(w("  a\tb\nc  "), ["a", "b", "c"]);
        assert_eq!(w("Crème Brûlée"), ["creme", "brulee"]);
        assert_eq!(w("東京abc"), ["東", "京", "abc"]);
        // A non-ASCII symbol stays inside its word; an ASCII one stands alone.
        assert_eq!(w("a😀b a$b"), ["a😀b", "a", "$", "b"]);
        // Control and format characters vanish without ending the word.
        assert_eq!(w("a\u{200B}b\u{0}c"), ["abc"]);
        assert!(w("").is_empty());
        assert!(w(" \n ").is_empty());
    }

    #[test]
    fn options_off_keep_case_and_accents() {
        assert_eq!(words("Crème", false, false), ["Crème"]);
        // Accents stripped but case kept.
        assert_eq!(words("Crème", false, true), ["Creme"]);
    }
}
