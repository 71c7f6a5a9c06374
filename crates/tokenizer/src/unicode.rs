//! Code point classes as llama.cpp's pre-tokenizer sees them (Unicode 15.1 general
//! categories folded into eight classes, plus the White_Space property).

use crate::unicode_norm_table::{LOWER, NFD_FIRST};
use crate::unicode_table::RANGES;

/// A code point's general-category class. `Undefined` is an unassigned code point
/// (category Cn); surrogates, private use and format characters are `Control`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Undefined = 0,
    Number = 1,
    Letter = 2,
    Separator = 3,
    Mark = 4,
    Punctuation = 5,
    Symbol = 6,
    Control = 7,
}

impl Class {
    fn from_bits(bits: u32) -> Class {
        match bits & 7 {
            0 => Class::Undefined,
            1 => Class::Number,
            2 => Class::Letter,
            3 => Class::Separator,
            4 => Class::Mark,
            5 => Class::Punctuation,
            6 => Class::Symbol,
            _ => Class::Control,
        }
    }
}

/// The class of one code point.
pub(crate) fn class(c: char) -> Class {
    let cp = c as u32;
    // `RANGES` starts at code point 0, so the partition point is at least 1.
    let i = RANGES.partition_point(|&r| (r >> 3) <= cp);
    Class::from_bits(RANGES[i.saturating_sub(1)])
}

/// What the splitters need to know about one code point, looked up once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Flags {
    pub class: Class,
    /// Unicode White_Space (the same 25 code points llama.cpp lists).
    pub whitespace: bool,
}

impl Flags {
    pub fn of(c: char) -> Flags {
        // Rust's `char::is_whitespace` is exactly the White_Space property.
        Flags { class: class(c), whitespace: c.is_whitespace() }
    }
    pub fn is_letter(self) -> bool {
        self.class == Class::Letter
    }
    pub fn is_number(self) -> bool {
        self.class == Class::Number
    }
}

/// llama.cpp's `unicode_tolower`: the simple (one code point) lower-case mapping.
pub(crate) fn to_lower(c: char) -> char {
    let cp = c as u32;
    match LOWER.binary_search_by_key(&cp, |&(from, _)| from) {
        Ok(i) => char::from_u32(LOWER[i].1).unwrap_or(c),
        Err(_) => c,
    }
}

/// llama.cpp's `unicode_cpts_normalize_nfd` for one code point: the first code point of
/// its canonical decomposition (the marks after it are dropped, not kept).
pub(crate) fn nfd_first(c: char) -> char {
    let cp = c as u32;
    let i = NFD_FIRST.partition_point(|&(first, _, _)| first <= cp);
    match i.checked_sub(1).map(|i| NFD_FIRST[i]) {
        Some((_, last, to)) if cp <= last => char::from_u32(to).unwrap_or(c),
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(class('a'), Class::Letter);
        assert_eq!(class('7'), Class::Number);
        assert_eq!(class(' '), Class::Separator);
        assert_eq!(class('\n'), Class::Control);
        assert_eq!(class('!'), Class::Punctuation);
        assert_eq!(class('$'), Class::Symbol);
        assert_eq!(class('\u{301}'), Class::Mark);
        assert_eq!(class('中'), Class::Letter);
        assert_eq!(class('😀'), Class::Symbol);
        assert_eq!(class('\u{378}'), Class::Undefined);
        // Unicode 15.1 additions are known, Unicode 16 ones are not.
        assert_eq!(class('\u{2EBF0}'), Class::Letter);
        assert_eq!(class('\u{1FADC}'), Class::Undefined);
        assert_eq!(class('\u{10FFFF}'), Class::Undefined);
        assert_eq!(class('\u{E000}'), Class::Control);
    }

    #[test]
    fn lower_and_nfd_first() {
        assert_eq!(to_lower('A'), 'a');
        assert_eq!(to_lower('É'), 'é');
        assert_eq!(to_lower('Ж'), 'ж');
        assert_eq!(to_lower('\u{130}'), 'i'); // simple mapping, not the full "i̇"
        assert_eq!(to_lower('ß'), 'ß');
        assert_eq!(to_lower('中'), '中');
        assert_eq!(nfd_first('é'), 'e');
        assert_eq!(nfd_first('Å'), 'A');
        assert_eq!(nfd_first('ǖ'), 'u'); // two marks deep
        assert_eq!(nfd_first('가'), '\u{1100}'); // Hangul syllable -> its leading jamo
        assert_eq!(nfd_first('a'), 'a');
        assert_eq!(nfd_first('ﬁ'), 'ﬁ'); // compatibility only: NFD keeps it
    }

    #[test]
    fn whitespace_is_llamas_set() {
        // llama.cpp's list: \t..\r, space, U+0085, U+00A0, U+1680, U+2000..U+200A,
        // U+2028, U+2029, U+202F, U+205F, U+3000.
        let mut want: Vec<u32> = (0x09..=0x0D).chain([0x20, 0x85, 0xA0, 0x1680]).collect();
        want.extend(0x2000..=0x200A);
        want.extend([0x2028, 0x2029, 0x202F, 0x205F, 0x3000]);
        let got: Vec<u32> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|&c| Flags::of(c).whitespace)
            .map(|c| c as u32)
            .collect();
        assert_eq!(got, want);
    }
}
