//! Streaming detokenization that never emits half a UTF-8 character.

use crate::Tokenizer;

/// Turns generated ids into text one id at a time.
///
/// Each `push` returns the text that became complete: bytes of a character split
/// across tokens wait until the character is whole. Bytes that can never become valid
/// UTF-8 come out as U+FFFD, exactly as [`String::from_utf8_lossy`] would replace them,
/// so the concatenation of every `push` and the final [`flush`](Self::flush) equals the
/// lossy decoding of all the bytes at once.
///
/// The decoder holds no reference to the tokenizer (so it can live beside it in a
/// struct); pass the tokenizer to `push`. Pieces are concatenated as llama.cpp's
/// `token_to_piece` gives them, with the first piece's leading space removed when the
/// vocabulary adds a space prefix. Unlike [`Tokenizer::decode`] it does not apply
/// `clean_spaces` (llama.cpp's own streaming does not either); for the vocabularies
/// that keep spaces (SmolLM2, Gemma, Qwen 2, ...) the two agree.
#[derive(Clone, Debug, Default)]
pub struct StreamDecoder {
    pending: Vec<u8>,
    render_special: bool,
    started: bool,
}

impl StreamDecoder {
    /// A decoder; `render_special` renders control tokens as their text.
    pub fn new(render_special: bool) -> StreamDecoder {
        StreamDecoder { pending: Vec::new(), render_special, started: false }
    }

    /// Adds one token; returns the text completed by it (often empty).
    pub fn push(&mut self, tokenizer: &Tokenizer, id: u32) -> String {
        let mut piece = tokenizer.token_piece(id, self.render_special);
        if !self.started {
            self.started = true;
            if tokenizer.adds_space_prefix() {
                piece = piece.strip_prefix(b" ").unwrap_or(piece);
            }
        }
        self.push_bytes(piece)
    }

    /// Adds raw bytes; returns the text they complete.
    pub fn push_bytes(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        let mut consumed = 0;
        loop {
            let rest = &self.pending[consumed..];
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    consumed = self.pending.len();
                    break;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // `valid` bytes are UTF-8 by the error's own account.
                    out.push_str(std::str::from_utf8(&rest[..valid]).unwrap_or_default());
                    match e.error_len() {
                        Some(bad) => {
                            out.push('\u{FFFD}');
                            consumed += valid + bad;
                        }
                        None => {
                            // An incomplete character at the end: wait for more bytes.
                            consumed += valid;
                            break;
                        }
                    }
                }
            }
        }
        self.pending.drain(..consumed);
        out
    }

    /// Ends the stream: whatever incomplete character is left comes out as U+FFFD.
    pub fn flush(&mut self) -> String {
        let out = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        self.started = false;
        out
    }

    /// Bytes held back, waiting for the rest of a character.
    pub fn pending(&self) -> &[u8] {
        &self.pending
    }
}
