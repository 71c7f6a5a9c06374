//! Splitting text on special tokens before tokenizing the rest, as llama.cpp's
//! `tokenizer_st_partition` does.
//!
//! llama.cpp takes the special tokens (control, user-defined and unknown ones) longest
//! first and, for each, cuts every raw-text fragment at the token's leftmost
//! non-overlapping occurrences. Control and unknown tokens take part only when
//! `parse_special` is set; user-defined ones always do. A token with the lstrip
//! (rstrip) attribute also swallows the ASCII whitespace before (after) it.
//!
//! This does the same in one pass over the text: a trie finds every occurrence of
//! every special token, then the occurrences are applied in llama.cpp's order (token
//! by token, left to right), each one only if all its bytes are still raw text.

use crate::vocab::{attr, Vocab};

/// A piece of the text after partitioning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fragment {
    /// Raw text to tokenize: a byte range of the input.
    Text(usize, usize),
    /// A special token found in the text.
    Token(u32),
}

pub(crate) struct SpecialMatcher {
    /// Trie over token bytes; node 0 is the root.
    nodes: Vec<Node>,
    /// Special token ids in llama.cpp's processing order (longest text first).
    order: Vec<u32>,
}

#[derive(Default)]
struct Node {
    /// Children sorted by byte.
    children: Vec<(u8, u32)>,
    /// `(rank in order, token id)` of the special token ending here.
    token: Option<(u32, u32)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Raw,
    Token,
    Dropped,
}

impl SpecialMatcher {
    pub fn new(vocab: &Vocab) -> SpecialMatcher {
        let mut order: Vec<u32> = (0..vocab.len() as u32)
            .filter(|&id| vocab.attr(id) & (attr::CONTROL | attr::USER_DEFINED | attr::UNKNOWN) != 0)
            .collect();
        // llama.cpp sorts by text length, longest first, with an unstable sort; ties
        // keep id order here.
        order.sort_by_key(|&id| std::cmp::Reverse(vocab.text(id).len()));
        let mut nodes = vec![Node::default()];
        for (rank, &id) in order.iter().enumerate() {
            let mut at = 0usize;
            for &b in vocab.text(id) {
                at = match nodes[at].children.binary_search_by_key(&b, |&(c, _)| c) {
                    Ok(i) => nodes[at].children[i].1 as usize,
                    Err(i) => {
                        let new = nodes.len();
                        nodes.push(Node::default());
                        nodes[at].children.insert(i, (b, new as u32));
                        new
                    }
                };
            }
            nodes[at].token = Some((rank as u32, id));
        }
        SpecialMatcher { nodes, order }
    }

    fn child(&self, node: usize, b: u8) -> Option<usize> {
        let ch = &self.nodes[node].children;
        ch.binary_search_by_key(&b, |&(c, _)| c).ok().map(|i| ch[i].1 as usize)
    }

    /// Splits `text` into raw-text ranges and special tokens.
    pub fn partition(&self, vocab: &Vocab, text: &str, parse_special: bool) -> Vec<Fragment> {
        let bytes = text.as_bytes();
        if bytes.is_empty() {
            return Vec::new();
        }
        // Every occurrence of every eligible special token: (rank, start, id).
        let mut found: Vec<(u32, u32, u32)> = Vec::new();
        if self.order.is_empty() {
            return vec![Fragment::Text(0, bytes.len())];
        }
        for start in 0..bytes.len() {
            let mut node = 0usize;
            for &b in &bytes[start..] {
                match self.child(node, b) {
                    Some(next) => node = next,
                    None => break,
                }
                if let Some((rank, id)) = self.nodes[node].token {
                    let a = vocab.attr(id);
                    if parse_special || a & (attr::CONTROL | attr::UNKNOWN) == 0 {
                        found.push((rank, start as u32, id));
                    }
                }
            }
        }
        if found.is_empty() {
            return vec![Fragment::Text(0, bytes.len())];
        }
        found.sort_unstable();

        let mut state = vec![State::Raw; bytes.len()];
        // Start offset → token id of each accepted occurrence.
        let mut tokens: Vec<(usize, u32)> = Vec::new();
        for &(_, start, id) in &found {
            let start = start as usize;
            let end = start + vocab.text(id).len();
            if state[start..end].iter().any(|&s| s != State::Raw) {
                continue;
            }
            state[start..end].fill(State::Token);
            tokens.push((start, id));
            let a = vocab.attr(id);
            if a & attr::LSTRIP != 0 {
                let mut i = start;
                while i > 0 && state[i - 1] == State::Raw && c_isspace(bytes[i - 1]) {
                    i -= 1;
                    state[i] = State::Dropped;
                }
            }
            if a & attr::RSTRIP != 0 {
                let mut i = end;
                while i < bytes.len() && state[i] == State::Raw && c_isspace(bytes[i]) {
                    state[i] = State::Dropped;
                    i += 1;
                }
            }
        }
        tokens.sort_unstable();

        let mut out = Vec::with_capacity(tokens.len() * 2 + 1);
        let mut next_token = tokens.iter().peekable();
        let mut i = 0;
        while i < bytes.len() {
            match state[i] {
                State::Raw => {
                    let start = i;
                    while i < bytes.len() && state[i] == State::Raw {
                        i += 1;
                    }
                    out.push(Fragment::Text(start, i));
                }
                State::Token => {
                    // Tokens are applied whole, so a token run starts at its occurrence.
                    match next_token.next() {
                        Some(&(s, id)) if s == i => {
                            out.push(Fragment::Token(id));
                            i += vocab.text(id).len();
                        }
                        _ => i += 1, // unreachable: token runs start at their occurrence
                    }
                }
                State::Dropped => i += 1,
            }
        }
        out
    }
}

/// C's `isspace` in the "C" locale: space, \t, \n, \v, \f, \r.
fn c_isspace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}
