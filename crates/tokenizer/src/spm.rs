//! SentencePiece-style tokenization (`tokenizer.ggml.model = llama`) as llama.cpp does
//! it: start from UTF-8 characters, repeatedly merge the adjacent pair whose
//! concatenation is the highest-scoring token (leftmost first on ties), then emit each
//! final piece as its token or, if it is not one, as byte tokens `<0xXX>`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::vocab::Vocab;

pub(crate) struct Spm {
    /// Token for each byte: `<0xXX>`, else the byte itself as a one-byte token.
    byte_token: [Option<u32>; 256],
}

#[derive(Clone, Copy)]
struct Sym {
    start: u32,
    len: u32,
    prev: i32,
    next: i32,
}

struct Bigram {
    score: f32,
    left: i32,
    right: i32,
    size: u32,
}

impl PartialEq for Bigram {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Bigram {}
impl PartialOrd for Bigram {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Bigram {
    /// Higher score first; among equal scores the leftmost pair first.
    fn cmp(&self, other: &Self) -> Ordering {
        self.score.partial_cmp(&other.score).unwrap_or(Ordering::Equal).then_with(|| other.left.cmp(&self.left))
    }
}

impl Spm {
    pub fn new(vocab: &Vocab) -> Spm {
        let mut byte_token = [None; 256];
        for b in 0..=255u8 {
            let hex = format!("<0x{b:02X}>");
            byte_token[b as usize] = vocab.find(hex.as_bytes()).or_else(|| vocab.find(&[b]));
        }
        Spm { byte_token }
    }

    /// Tokenizes `text` (already prefixed and with spaces escaped).
    pub fn encode(&self, vocab: &Vocab, text: &str, out: &mut Vec<u32>) {
        let bytes = text.as_bytes();
        let mut syms: Vec<Sym> = Vec::with_capacity(text.len());
        let n = text.chars().count() as i32;
        for (i, (start, c)) in text.char_indices().enumerate() {
            let i = i as i32;
            syms.push(Sym {
                start: start as u32,
                len: c.len_utf8() as u32,
                prev: i - 1,
                next: if i + 1 < n { i + 1 } else { -1 },
            });
        }
        let mut heap = BinaryHeap::with_capacity(syms.len());
        let try_add = |syms: &[Sym], heap: &mut BinaryHeap<Bigram>, l: i32, r: i32| {
            if l < 0 || r < 0 {
                return;
            }
            let (a, b) = (syms[l as usize], syms[r as usize]);
            let piece = &bytes[a.start as usize..(b.start + b.len) as usize];
            if let Some(id) = vocab.find(piece) {
                let score = vocab.scores.get(id as usize).copied().unwrap_or(0.0);
                heap.push(Bigram { score, left: l, right: r, size: a.len + b.len });
            }
        };
        for i in 1..n {
            try_add(&syms, &mut heap, i - 1, i);
        }
        while let Some(bg) = heap.pop() {
            let (a, b) = (syms[bg.left as usize], syms[bg.right as usize]);
            // Skip a pair that an earlier merge changed.
            if a.len == 0 || b.len == 0 || a.len + b.len != bg.size {
                continue;
            }
            let l = bg.left;
            syms[l as usize].len += b.len;
            syms[l as usize].next = b.next;
            syms[bg.right as usize].len = 0;
            if b.next >= 0 {
                syms[b.next as usize].prev = l;
            }
            try_add(&syms, &mut heap, a.prev, l);
            try_add(&syms, &mut heap, l, b.next);
        }
        // Every merged piece is a token by construction; a single character may not be.
        let mut i = if syms.is_empty() { -1 } else { 0 };
        while i >= 0 {
            let s = syms[i as usize];
            let piece = &bytes[s.start as usize..(s.start + s.len) as usize];
            match vocab.find(piece) {
                Some(id) => out.push(id),
                None => {
                    // llama.cpp aborts when a byte has no token; we skip it.
                    out.extend(piece.iter().filter_map(|&b| self.byte_token[b as usize]));
                }
            }
            i = s.next;
        }
    }
}
