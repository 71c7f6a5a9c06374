//! Byte-level BPE (`tokenizer.ggml.model = gpt2`): GPT-2's byte↔unicode map, merge
//! ranks from `tokenizer.ggml.merges`, and llama.cpp's merge loop (lowest rank first,
//! leftmost first among equal ranks).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use kindling_gguf::{Array, Metadata, Value};

use crate::pretokenize::PreTokenizer;
use crate::vocab::{key, Vocab};
use crate::TokenizerError;

/// GPT-2's map from a byte to the printable code point that stands for it in the
/// vocabulary: printable Latin-1 bytes map to themselves, the other 68 bytes to
/// U+0100.. in byte order.
pub(crate) fn byte_to_char(b: u8) -> char {
    BYTE_CHARS[b as usize]
}

/// The inverse map: the byte a vocabulary code point stands for.
pub(crate) fn char_to_byte(c: char) -> Option<u8> {
    let cp = c as u32;
    if cp < 256 && printable(cp as u8) {
        return Some(cp as u8);
    }
    let k = cp.checked_sub(0x100)? as usize;
    NON_PRINTABLE.get(k).copied()
}

const fn printable(b: u8) -> bool {
    matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// The 68 bytes that are not printable, in order (byte `NON_PRINTABLE[k]` is U+0100 + k).
const NON_PRINTABLE: [u8; 68] = {
    let mut t = [0u8; 68];
    let (mut b, mut k) = (0usize, 0usize);
    while b < 256 {
        if !printable(b as u8) {
            t[k] = b as u8;
            k += 1;
        }
        b += 1;
    }
    t
};

const BYTE_CHARS: [char; 256] = {
    let mut t = ['\0'; 256];
    let mut b = 0usize;
    while b < 256 {
        t[b] = b as u8 as char;
        b += 1;
    }
    let mut k = 0usize;
    while k < 68 {
        t[NON_PRINTABLE[k] as usize] = match char::from_u32(0x100 + k as u32) {
            Some(c) => c,
            None => '\u{FFFD}',
        };
        k += 1;
    }
    t
};

pub(crate) struct Bpe {
    pre: PreTokenizer,
    /// Interned symbol id of each single byte (as its GPT-2 character).
    byte_symbol: [u32; 256],
    /// `(left symbol, right symbol)` → `(rank, merged symbol)`.
    merges: HashMap<u64, (u32, u32), BuildPairHasher>,
    /// Symbols below this are the vocabulary's own token ids; symbols from it up are
    /// merge parts that are not tokens (rare: a merges entry whose halves or result
    /// the vocabulary lacks).
    n_tokens: u32,
    /// The byte-level token for each byte, looked up as a one-byte string (llama.cpp's
    /// fallback for a merged symbol that is not a token).
    single_byte_token: [Option<u32>; 256],
    ignore_merges: bool,
}

/// Interns merge symbols without copying them: a symbol that is a token is its token
/// id (the vocabulary's index finds it), any other gets the next id past the
/// vocabulary. Building Qwen2.5's 151k merges this way allocates a few times instead of
/// once per string (an interning map of owned strings peaked at +36 MiB there).
struct Symbols<'v> {
    vocab: &'v Vocab,
    extra: HashMap<Box<[u8]>, u32>,
    next: u32,
}

impl Symbols<'_> {
    fn intern(&mut self, s: &[u8]) -> u32 {
        if let Some(id) = self.vocab.find(s) {
            return id;
        }
        if let Some(&id) = self.extra.get(s) {
            return id;
        }
        let id = self.next;
        self.next += 1;
        self.extra.insert(s.into(), id);
        id
    }
}

/// Hashing for the `(left, right)` symbol-pair keys: one 64-bit word, mixed with
/// MurmurHash3's finalizer (SipHash, the std default, is several times slower on the
/// merge lookups that dominate encoding; a bare multiply leaves the low bits, which
/// pick the bucket, depending on the right symbol only).
#[derive(Clone, Copy, Default)]
struct BuildPairHasher;

#[derive(Default)]
struct PairHasher(u64);

impl std::hash::BuildHasher for BuildPairHasher {
    type Hasher = PairHasher;
    fn build_hasher(&self) -> PairHasher {
        PairHasher(0)
    }
}

impl std::hash::Hasher for PairHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 ^= x;
    }
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }
}

/// A mergeable pair on the queue; the derived order (rank, then left index) is
/// llama.cpp's, and the queue pops the smallest.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    rank: u32,
    left: i32,
    right: i32,
    left_id: u32,
    right_id: u32,
    merged: u32,
}

#[derive(Clone, Copy)]
struct Sym {
    /// Byte range in the word.
    start: u32,
    len: u32,
    id: u32,
    prev: i32,
    next: i32,
}

impl Bpe {
    pub fn new(md: &Metadata, vocab: &Vocab) -> Result<Bpe, TokenizerError> {
        let pre = PreTokenizer::new(&vocab.pre)?;
        let lines = match md.get(key::MERGES) {
            None => return Err(TokenizerError::MissingKey(key::MERGES)),
            Some(Value::Array(Array::String(v))) => v,
            Some(v) => {
                return Err(TokenizerError::WrongType {
                    key: key::MERGES,
                    expected: "an array of strings",
                    found: v.type_name(),
                })
            }
        };

        let n_tokens = u32::try_from(vocab.len()).map_err(|_| TokenizerError::BadVocabSize(vocab.len()))?;
        let mut symbols = Symbols { vocab, extra: HashMap::new(), next: n_tokens };
        let mut byte_symbol = [0u32; 256];
        for b in 0..=255u8 {
            byte_symbol[b as usize] = symbols.intern(byte_to_char(b).encode_utf8(&mut [0; 4]).as_bytes());
        }
        let mut merges = HashMap::with_capacity_and_hasher(lines.len(), BuildPairHasher);
        let mut joined: Vec<u8> = Vec::new();
        for (rank, line) in lines.iter().enumerate() {
            // llama.cpp splits at the first space after the first byte.
            let split = line.as_bytes().iter().skip(1).position(|&b| b == b' ').map(|p| p + 1);
            let Some(at) = split else {
                return Err(TokenizerError::BadMerge { index: rank, entry: line.clone() });
            };
            let (left, right) = (&line.as_bytes()[..at], &line.as_bytes()[at + 1..]);
            if right.is_empty() {
                return Err(TokenizerError::BadMerge { index: rank, entry: line.clone() });
            }
            let l = symbols.intern(left);
            let r = symbols.intern(right);
            joined.clear();
            joined.extend_from_slice(left);
            joined.extend_from_slice(right);
            let m = symbols.intern(&joined);
            // The first entry for a pair wins, as with llama.cpp's `emplace`.
            merges.entry(pair(l, r)).or_insert((rank as u32, m));
        }
        let mut single_byte_token = [None; 256];
        for b in 0..=255u8 {
            single_byte_token[b as usize] = vocab.find(&[b]);
        }
        Ok(Bpe { pre, byte_symbol, merges, n_tokens, single_byte_token, ignore_merges: vocab.ignore_merges })
    }

    /// Tokenizes one fragment of plain text (no special tokens in it).
    pub fn encode(&self, vocab: &Vocab, text: &str, out: &mut Vec<u32>) {
        let mut syms: Vec<Sym> = Vec::new();
        let mut heap: BinaryHeap<Reverse<Candidate>> = BinaryHeap::new();
        let mut encoded = String::new();
        for range in self.pre.split(text) {
            let word = &text.as_bytes()[range];
            if self.ignore_merges {
                encoded.clear();
                encoded.extend(word.iter().map(|&b| byte_to_char(b)));
                if let Some(id) = vocab.find(encoded.as_bytes()) {
                    out.push(id);
                    continue;
                }
            }
            syms.clear();
            heap.clear();
            let n = word.len() as i32;
            for (i, &b) in word.iter().enumerate() {
                let i = i as i32;
                syms.push(Sym {
                    start: i as u32,
                    len: 1,
                    id: self.byte_symbol[b as usize],
                    prev: i - 1,
                    next: if i + 1 < n { i + 1 } else { -1 },
                });
            }
            let push = |syms: &[Sym], heap: &mut BinaryHeap<_>, l: i32, r: i32| {
                if l < 0 || r < 0 {
                    return;
                }
                let (a, b) = (syms[l as usize], syms[r as usize]);
                if let Some(&(rank, merged)) = self.merges.get(&pair(a.id, b.id)) {
                    heap.push(Reverse(Candidate { rank, left: l, right: r, left_id: a.id, right_id: b.id, merged }));
                }
            };
            for i in 1..n {
                push(&syms, &mut heap, i - 1, i);
            }
            while let Some(Reverse(Candidate { left: l, right: r, left_id: lid, right_id: rid, merged, .. })) =
                heap.pop()
            {
                let (a, b) = (syms[l as usize], syms[r as usize]);
                // Skip a pair that an earlier merge changed.
                if a.len == 0 || b.len == 0 || a.id != lid || b.id != rid {
                    continue;
                }
                let left = &mut syms[l as usize];
                left.len += b.len;
                left.id = merged;
                left.next = b.next;
                syms[r as usize].len = 0;
                if b.next >= 0 {
                    syms[b.next as usize].prev = l;
                }
                let prev = syms[l as usize].prev;
                let next = syms[l as usize].next;
                push(&syms, &mut heap, prev, l);
                push(&syms, &mut heap, l, next);
            }
            for s in syms.iter().filter(|s| s.len > 0) {
                if s.id < self.n_tokens {
                    out.push(s.id);
                    continue;
                }
                // Not a token: llama.cpp looks up each byte of the symbol's GPT-2 text
                // as a one-byte string and keeps the ones that exist.
                let bytes = &word[s.start as usize..(s.start + s.len) as usize];
                for &b in bytes {
                    let mut buf = [0u8; 4];
                    for &e in byte_to_char(b).encode_utf8(&mut buf).as_bytes() {
                        if let Some(id) = self.single_byte_token[e as usize] {
                            out.push(id);
                        }
                    }
                }
            }
        }
    }
}

fn pair(l: u32, r: u32) -> u64 {
    (u64::from(l) << 32) | u64::from(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_map_round_trips() {
        for b in 0..=255u8 {
            assert_eq!(char_to_byte(byte_to_char(b)), Some(b));
        }
        assert_eq!(byte_to_char(b' '), 'Ġ');
        assert_eq!(byte_to_char(b'\n'), 'Ċ');
        assert_eq!(byte_to_char(b'a'), 'a');
        assert_eq!(char_to_byte('\u{3000}'), None);
    }
}
