//! Token → bytes (llama.cpp's `token_to_piece`) and ids → text (`llama_detokenize`).

use crate::bpe::char_to_byte;
use crate::vocab::{attr, ModelType, Vocab};

/// The bytes of every token, computed once (llama.cpp's piece cache).
pub(crate) struct Pieces {
    bytes: Vec<u8>,
    offsets: Vec<u32>,
}

impl Pieces {
    pub fn new(vocab: &Vocab) -> Pieces {
        let mut bytes = Vec::with_capacity(vocab.len() * 6);
        let mut offsets = Vec::with_capacity(vocab.len() + 1);
        offsets.push(0);
        for id in 0..vocab.len() as u32 {
            piece_of(vocab, id, &mut bytes);
            offsets.push(u32::try_from(bytes.len()).unwrap_or(u32::MAX));
        }
        Pieces { bytes, offsets }
    }

    /// The piece with special tokens rendered; empty for an id past the vocabulary.
    pub fn get(&self, id: u32) -> &[u8] {
        let i = id as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.bytes.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// llama.cpp's `token_to_piece(special = true)` for one token, appended to `out`.
fn piece_of(vocab: &Vocab, id: u32, out: &mut Vec<u8>) {
    let a = vocab.attr(id);
    let text = vocab.text(id);
    if a & (attr::UNKNOWN | attr::CONTROL | attr::USER_DEFINED) != 0 {
        out.extend_from_slice(text);
    } else if a & attr::NORMAL != 0 {
        match vocab.model {
            ModelType::Spm | ModelType::Wpm => unescape_whitespace(text, out),
            ModelType::Bpe => decode_byte_level(text, out),
        }
    } else if a & attr::BYTE != 0 {
        out.push(byte_token_value(text));
    }
    // Undefined and unused tokens render as nothing.
}

/// `▁` (U+2581) back to a space.
fn unescape_whitespace(text: &[u8], out: &mut Vec<u8>) {
    const ESC: &[u8] = "\u{2581}".as_bytes();
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(ESC) {
            out.push(b' ');
            i += ESC.len();
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
}

/// GPT-2 byte-level text back to bytes. A code point outside the byte map becomes
/// llama.cpp's `[UNK_BYTE_0x..]` marker.
fn decode_byte_level(text: &[u8], out: &mut Vec<u8>) {
    for c in String::from_utf8_lossy(text).chars() {
        match char_to_byte(c) {
            Some(b) => out.push(b),
            None => {
                out.extend_from_slice(b"[UNK_BYTE_0x");
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.extend_from_slice(format!("{b:02x}").as_bytes());
                }
                out.extend_from_slice(text);
                out.push(b']');
            }
        }
    }
}

/// The byte of a `<0xXX>` token: the hex digits at offset 3, parsed like `strtol`
/// (as many hex digits as there are, up to two; 0 when none).
fn byte_token_value(text: &[u8]) -> u8 {
    let mut v: u32 = 0;
    for &c in text.iter().skip(3).take(2) {
        match (c as char).to_digit(16) {
            Some(d) => v = v * 16 + d,
            None => break,
        }
    }
    v as u8
}

/// Whether a token renders only when special tokens are asked for.
pub(crate) fn is_special_rendered(vocab: &Vocab, id: u32) -> bool {
    vocab.attr(id) & (attr::UNKNOWN | attr::CONTROL) != 0
}

/// llama.cpp's `llama_detokenize(remove_special = false, unparse_special = special)`
/// on bytes: concatenated pieces, one leading space of the first piece removed when
/// the vocabulary adds a space prefix, then the `clean_spaces` passes.
pub(crate) fn detokenize(vocab: &Vocab, pieces: &Pieces, ids: &[u32], special: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, &id) in ids.iter().enumerate() {
        if !special && is_special_rendered(vocab, id) {
            continue;
        }
        let mut p = pieces.get(id);
        if i == 0 && vocab.add_space_prefix {
            if let Some(rest) = p.strip_prefix(b" ") {
                p = rest;
            }
        }
        out.extend_from_slice(p);
    }
    if vocab.clean_spaces {
        clean_spaces(&mut out);
    }
    out
}

/// The three `clean_up_tokenization_spaces` passes llama.cpp applies to BPE output
/// (except for the pre-tokenizers that turn them off).
fn clean_spaces(text: &mut Vec<u8>) {
    // " ?", " !", " .", " ,": drop the space.
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    for (i, &x) in text.iter().enumerate() {
        if i > 0 && text[i - 1] == b' ' && matches!(x, b'?' | b'!' | b'.' | b',') {
            out.pop();
        }
        out.push(x);
    }
    // " ' ": drop both spaces around a lone apostrophe. llama.cpp zeroes the skipped
    // space in place, which the next step then sees.
    let mut t = std::mem::take(&mut out);
    let mut i = 0;
    while i < t.len() {
        let x = t[i];
        if i > 0 && x == b'\'' && i + 1 < t.len() && t[i - 1] == b' ' && t[i + 1] == b' ' {
            out.pop();
            t[i + 1] = 0;
            out.push(x);
            i += 2;
            continue;
        }
        out.push(x);
        i += 1;
    }
    // " 's", " 'm", " 're", " 've": drop the space.
    let t = std::mem::take(&mut out);
    for (i, &x) in t.iter().enumerate() {
        if i > 0 && t[i - 1] == b' ' && x == b'\'' && i + 1 < t.len() {
            let x1 = t[i + 1];
            let x2 = t.get(i + 2).copied();
            let drop = matches!(x1, b's' | b'm') || matches!((x1, x2), (b'r', Some(b'e')) | (b'v', Some(b'e')));
            if drop {
                out.pop();
            }
        }
        out.push(x);
    }
    *text = out;
}
