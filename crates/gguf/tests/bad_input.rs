//! Bad input: every malformed file gets the expected error variant, never a panic, the
//! same error whole or streamed in chunks, and no allocation sized from a declared count.
//!
//! A counting global allocator records the largest single allocation made while the
//! parser runs (per thread, so parallel tests do not disturb each other). For the crafted
//! files it must stay within the input length + `SLACK`. For truncated real headers it
//! must stay within a small multiple of the input (a `Vec<String>` of tokens takes more
//! memory than the tokens take on disk), never near what the declared counts would need.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use kindling_gguf::writer::GgufWriter;
use kindling_gguf::{parse_header, Array, GgmlType, GgufError, Header, HeaderParser, Limits, Progress, Section, Value};
use kindling_testdata::RealModel;

// ---------------------------------------------------------------- counting allocator

struct Counting;

thread_local! {
    static TRACKING: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = TRACKING.try_with(|t| {
        if t.get() {
            let _ = LARGEST.try_with(|m| m.set(m.get().max(size)));
        }
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f`, returning its result and the largest single allocation it made.
fn largest_alloc<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|m| m.set(0));
    TRACKING.with(|t| t.set(true));
    let r = f();
    TRACKING.with(|t| t.set(false));
    (r, LARGEST.with(|m| m.get()))
}

#[test]
fn counting_allocator_counts() {
    let (v, largest) = largest_alloc(|| vec![0u8; 1 << 20]);
    assert_eq!((v.len(), largest), (1 << 20, 1 << 20));
    let (_, largest) = largest_alloc(|| ());
    assert_eq!(largest, 0);
}

/// Allowance on top of the input length for the crafted files (hash tables, error
/// strings, the first few elements of a vector).
const SLACK: usize = 2048;

// ---------------------------------------------------------------- harness

/// Feeds `bytes` in chunks of `size` (with or without the file length); `finish` if the
/// stream ends first.
fn feed_all(bytes: &[u8], size: usize, with_len: bool) -> Result<Header, GgufError> {
    let mut p = HeaderParser::new(Limits::default());
    if with_len {
        p = p.with_file_len(bytes.len() as u64);
    }
    for chunk in bytes.chunks(size.max(1)) {
        if let Progress::Done { header, .. } = p.feed(chunk)? {
            return Ok(header);
        }
    }
    p.finish()
}

/// Checks that `bytes` is rejected with `kind` whole and in chunks, within the
/// allocation bound; returns the error.
fn rejects(what: &str, bytes: &[u8], kind: &str) -> GgufError {
    let (r, largest) = largest_alloc(|| parse_header(bytes));
    let e = match r {
        Ok(_) => panic!("{what}: accepted"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), kind, "{what}: got {e}");
    assert!(largest <= bytes.len() + SLACK, "{what}: allocated {largest} bytes for {} bytes of input", bytes.len());
    for size in [1, 3, 16, 4096] {
        let (r, largest) = largest_alloc(|| feed_all(bytes, size, true));
        assert_eq!(r.as_ref().err(), Some(&e), "{what}: chunks of {size} disagree with the whole-file parse");
        assert!(largest <= bytes.len() + SLACK, "{what}: chunks of {size}: allocated {largest}");
        // Without the file length only the end-of-file checks can come out differently.
        let (r, largest) = largest_alloc(|| feed_all(bytes, size, false));
        match (&e, r) {
            (GgufError::Truncated { .. } | GgufError::TensorOutOfBounds { .. } | GgufError::Empty, Ok(_)) => {}
            (GgufError::Truncated { .. } | GgufError::TensorOutOfBounds { .. }, Err(e2)) => {
                assert_eq!(e2.kind(), "Truncated", "{what}: without length: {e2}")
            }
            (_, r) => assert_eq!(r.err().as_ref(), Some(&e), "{what}: chunks of {size} without file length"),
        }
        assert!(largest <= bytes.len() + SLACK, "{what}: chunks of {size} without length: allocated {largest}");
    }
    let msg = e.to_string();
    assert!(!msg.is_empty());
    e
}

fn preamble(version: u32, n_tensors: u64, n_kv: u64) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend_from_slice(&version.to_le_bytes());
    b.extend_from_slice(&n_tensors.to_le_bytes());
    b.extend_from_slice(&n_kv.to_le_bytes());
    b
}

fn put_str(b: &mut Vec<u8>, s: &[u8]) {
    b.extend_from_slice(&(s.len() as u64).to_le_bytes());
    b.extend_from_slice(s);
}

/// A valid file with one KV and one F32 tensor, to cut and patch.
fn small_valid() -> Vec<u8> {
    let mut w = GgufWriter::new(3);
    w.add_kv("general.architecture", Value::String("llama".into()));
    w.add_tensor("a", &[8], GgmlType::F32, &[0u8; 32]).unwrap();
    w.to_bytes()
}

// ---------------------------------------------------------------- preamble

#[test]
fn empty_file() {
    let e = rejects("empty", &[], "Empty");
    assert_eq!(e.to_string(), "empty file: no bytes at all");
}

#[test]
fn wrong_magic_and_other_formats() {
    let mut elf = b"\x7fELF\x02\x01\x01\x00".to_vec();
    elf.resize(64, 0);
    let e = rejects("ELF", &elf, "BadMagic");
    assert!(e.to_string().starts_with("bad magic: expected 'GGUF', found 0x7f454c46 (an ELF executable)"), "{e}");

    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    assert!(rejects("PNG", &png, "BadMagic").to_string().contains("PNG"));

    let text = b"Hello, this is not a model at all.\n".repeat(10);
    assert!(rejects("text", &text, "BadMagic").to_string().contains("(text)"));

    let mut html = b"<!DOCTYPE html><html>404 Not Found</html>".to_vec();
    html.resize(100, b' ');
    assert!(rejects("HTML error page", &html, "BadMagic").to_string().contains("HTML"));

    let mut ggjt = b"tjgg\x03\0\0\0".to_vec();
    ggjt.resize(64, 0);
    assert!(rejects("GGJT", &ggjt, "BadMagic").to_string().contains("pre-GGUF"));

    let mut bytes = small_valid();
    bytes[3] = b'X';
    rejects("GGUX", &bytes, "BadMagic");

    // Shorter than the magic.
    assert_eq!(rejects("2 bytes", b"ab", "BadMagic"), GgufError::BadMagic { found: b"ab".to_vec() });
    let e = rejects("3 bytes of GGUF", b"GGU", "Truncated");
    assert!(matches!(e, GgufError::Truncated { section: Section::Preamble, offset: 3, .. }), "{e}");
}

#[test]
fn unsupported_versions() {
    let e = rejects("v1", &preamble(1, 0, 0), "UnsupportedVersion");
    assert!(e.to_string().starts_with("unsupported version 1"), "{e}");
    let e = rejects("v99", &preamble(99, 0, 0), "UnsupportedVersion");
    assert!(e.to_string().contains("99"));
    rejects("v0", &preamble(0, 0, 0), "UnsupportedVersion");
    let e = rejects("big-endian v3", &preamble(3u32.swap_bytes(), 0, 0), "UnsupportedVersion");
    assert!(e.to_string().contains("big-endian"), "{e}");
    // v2 and v3 are fine
    for v in [2, 3] {
        let h = parse_header(&preamble(v, 0, 0)).unwrap();
        assert_eq!((h.version, h.tensors.len(), h.metadata.len(), h.data_offset), (v, 0, 0, 32));
    }
}

#[test]
fn absurd_counts() {
    for n in [u64::MAX, 1 << 40, 65_537] {
        let e = rejects("tensor count", &preamble(3, n, 0), "TooManyTensors");
        assert!(e.to_string().contains(&n.to_string()));
        rejects("kv count", &preamble(3, 0, n), "TooManyKeys");
    }
    // Within the limits but far more than the bytes: truncated, nothing allocated for them.
    let e = rejects("65536 tensors in 24 bytes", &preamble(3, 65_536, 0), "Truncated");
    assert!(matches!(e, GgufError::Truncated { section: Section::TensorTable { index: 0, count: 65_536 }, .. }));
    let e = rejects("65536 kvs in 24 bytes", &preamble(3, 0, 65_536), "Truncated");
    assert!(matches!(e, GgufError::Truncated { section: Section::Metadata { index: 0, .. }, .. }), "{e}");
}

// ---------------------------------------------------------------- strings

#[test]
fn absurd_string_lengths() {
    for len in [u64::MAX, 1 << 40, (64 << 20) + 1] {
        // as a key
        let mut b = preamble(3, 0, 1);
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(b"abcdefgh");
        let e = rejects("key length", &b, "StringTooLong");
        assert!(e.to_string().contains(&format!("string length {len} at offset 24")), "{e}");

        // as a string value
        let mut w = GgufWriter::new(3);
        let mut raw = 8u32.to_le_bytes().to_vec();
        raw.extend_from_slice(&len.to_le_bytes());
        w.add_raw_kv(b"k", &raw);
        rejects("value length", &w.to_bytes(), "StringTooLong");

        // as a tensor name
        let mut b = preamble(3, 1, 0);
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(&[0; 32]);
        rejects("tensor name length", &b, "StringTooLong");
    }
    // Under the limit but past the end of the file.
    let mut b = preamble(3, 0, 1);
    b.extend_from_slice(&(1u64 << 20).to_le_bytes());
    b.extend_from_slice(b"abc");
    let e = rejects("key past the end", &b, "Truncated");
    assert_eq!(
        e,
        GgufError::Truncated {
            section: Section::Metadata { index: 0, count: 1, key: None },
            offset: 35,
            need: (1 << 20) - 3
        }
    );
    assert_eq!(
        e.to_string(),
        "truncated: the file ends inside the metadata (key/value 1 of 1) (need at least 1048573 more bytes at offset 35)"
    );
}

#[test]
fn invalid_utf8() {
    let mut w = GgufWriter::new(3);
    w.add_raw_kv(b"bad\xff key", &[7, 0, 0, 0, 1]);
    let e = rejects("key", &w.to_bytes(), "InvalidUtf8");
    assert!(matches!(e, GgufError::InvalidUtf8 { section: Section::Metadata { key: None, .. }, offset: 24 }), "{e}");

    let mut w = GgufWriter::new(3);
    let mut raw = 8u32.to_le_bytes().to_vec();
    raw.extend_from_slice(&3u64.to_le_bytes());
    raw.extend_from_slice(b"\xc3\x28!");
    w.add_raw_kv(b"general.name", &raw);
    let e = rejects("value", &w.to_bytes(), "InvalidUtf8");
    assert!(e.to_string().contains("general.name"), "{e}");

    let mut w = GgufWriter::new(3);
    let mut raw = 9u32.to_le_bytes().to_vec();
    raw.extend_from_slice(&8u32.to_le_bytes());
    raw.extend_from_slice(&2u64.to_le_bytes());
    put_str(&mut raw, b"ok");
    put_str(&mut raw, b"\xed\xa0\x80"); // a UTF-16 surrogate
    w.add_raw_kv(b"tokenizer.ggml.tokens", &raw);
    rejects("array element", &w.to_bytes(), "InvalidUtf8");

    let mut w = GgufWriter::new(3);
    w.add_raw_tensor_info(b"w\x80", &[32], 0, 0);
    rejects("tensor name", &w.to_bytes(), "InvalidUtf8");
}

// ---------------------------------------------------------------- metadata

#[test]
fn duplicate_keys() {
    let mut w = GgufWriter::new(3);
    w.add_kv("a", Value::U32(1)).add_kv("b", Value::U32(2)).add_kv("a", Value::U8(3));
    let e = rejects("dup key", &w.to_bytes(), "DuplicateKey");
    assert_eq!(e.to_string(), "duplicate metadata key 'a'");
}

#[test]
fn unknown_value_types() {
    let mut w = GgufWriter::new(3);
    w.add_raw_kv(b"k", &13u32.to_le_bytes());
    let e = rejects("value type 13", &w.to_bytes(), "UnknownValueType");
    assert!(e.to_string().contains("id 13"));
    let mut raw = 9u32.to_le_bytes().to_vec();
    raw.extend_from_slice(&u32::MAX.to_le_bytes());
    raw.extend_from_slice(&0u64.to_le_bytes());
    let mut w = GgufWriter::new(3);
    w.add_raw_kv(b"k", &raw);
    rejects("array element type", &w.to_bytes(), "UnknownValueType");
}

fn array_kv(elem_type: u32, len: u64, payload: &[u8]) -> Vec<u8> {
    let mut raw = 9u32.to_le_bytes().to_vec();
    raw.extend_from_slice(&elem_type.to_le_bytes());
    raw.extend_from_slice(&len.to_le_bytes());
    raw.extend_from_slice(payload);
    let mut w = GgufWriter::new(3);
    w.add_raw_kv(b"arr", &raw);
    w.to_bytes()
}

#[test]
fn absurd_array_lengths() {
    for elem in [0u32, 4, 8, 9, 12] {
        for len in [u64::MAX, 1 << 40, (64 << 20) + 1] {
            let e = rejects("array length", &array_kv(elem, len, &[0; 64]), "ArrayTooLong");
            assert!(e.to_string().contains("key 'arr'"), "{e}");
        }
        // Under the limit but far past the file: rejected before any element is read.
        let e = rejects("array past the end", &array_kv(elem, 60 << 20, &[0; 64]), "Truncated");
        assert!(e.to_string().contains("key 'arr'"), "{e}");
    }
}

#[test]
fn nested_array_depth_bomb() {
    // Arrays of arrays of ... 1000 deep, each claiming one element.
    let mut payload = Vec::new();
    for _ in 0..1000 {
        payload.extend_from_slice(&9u32.to_le_bytes());
        payload.extend_from_slice(&1u64.to_le_bytes());
    }
    let e = rejects("depth bomb", &array_kv(9, 1, &payload), "ArrayTooDeep");
    assert!(e.to_string().contains("nested more than 4 deep"), "{e}");
    // Exactly 4 deep is fine.
    let mut payload = Vec::new();
    for _ in 0..2 {
        payload.extend_from_slice(&9u32.to_le_bytes());
        payload.extend_from_slice(&1u64.to_le_bytes());
    }
    payload.extend_from_slice(&0u32.to_le_bytes());
    payload.extend_from_slice(&2u64.to_le_bytes());
    payload.extend_from_slice(&[7, 8]);
    let h = parse_header(&array_kv(9, 1, &payload)).unwrap();
    let a = h.metadata.get_array("arr").unwrap();
    let expect = Array::Array(vec![Array::Array(vec![Array::Array(vec![Array::U8(vec![7, 8])])])]);
    assert_eq!(a, &expect);
    // A wide bomb: many nested arrays each claiming the maximum.
    let mut payload = Vec::new();
    for _ in 0..3 {
        payload.extend_from_slice(&9u32.to_le_bytes());
        payload.extend_from_slice(&(64u64 << 20).to_le_bytes());
    }
    rejects("wide bomb", &array_kv(9, 64 << 20, &payload), "Truncated");
}

#[test]
fn bad_alignment() {
    for (v, what) in
        [(Value::U32(0), "zero"), (Value::U32(3), "three"), (Value::U64(32), "u64"), (Value::I32(32), "i32")]
    {
        let mut w = GgufWriter::new(3);
        w.add_kv("general.alignment", v);
        let e = rejects(what, &w.to_bytes(), "BadAlignment");
        assert!(e.to_string().starts_with("general.alignment must be a nonzero power of two"), "{e}");
    }
    // A good custom alignment moves the data section and is enforced on offsets.
    let mut w = GgufWriter::new(3);
    w.alignment(256);
    w.add_tensor("a", &[8], GgmlType::F32, &[0; 32]).unwrap();
    let h = parse_header(&w.to_bytes()).unwrap();
    assert_eq!((h.alignment, h.data_offset % 256), (256, 0));
    let mut w = GgufWriter::new(3);
    w.alignment(256);
    w.add_raw_tensor_info(b"a", &[8], 0, 32);
    rejects("offset 32 with alignment 256", &w.to_bytes(), "MisalignedOffset");
}

// ---------------------------------------------------------------- tensor table

fn one_tensor(name: &[u8], dims: &[u64], type_id: u32, offset: u64) -> Vec<u8> {
    let mut w = GgufWriter::new(3);
    w.add_raw_tensor_info(name, dims, type_id, offset);
    w.to_bytes()
}

#[test]
fn bad_dims() {
    rejects("5 dims", &one_tensor(b"t", &[1, 1, 1, 1, 1], 0, 0), "TooManyDims");
    let mut b = preamble(3, 1, 0);
    put_str(&mut b, b"t");
    b.extend_from_slice(&u32::MAX.to_le_bytes());
    let e = rejects("2^32-1 dims", &b, "TooManyDims");
    assert_eq!(e.to_string(), "tensor 't' has 4294967295 dimensions; at most 4 are allowed");
    let e = rejects("zero dim", &one_tensor(b"t", &[32, 0], 0, 0), "ZeroDim");
    assert!(e.to_string().contains("[32, 0]"));
    for dims in [&[1u64 << 62, 1 << 62, 1 << 62, 1 << 62][..], &[u64::MAX], &[1 << 32, 1 << 32], &[1 << 62, 4]] {
        let e = rejects("overflowing dims", &one_tensor(b"t", dims, 0, 0), "ElementCountOverflow");
        assert!(e.to_string().contains("tensor 't'"), "{e}");
    }
    // 2^62 f32 values: the count fits an i64 but the byte size does not fit a u64.
    rejects("byte size overflow", &one_tensor(b"t", &[1 << 62], 0, 0), "ElementCountOverflow");
    // 2^60 f32 values: 2^62 bytes, far past the file.
    rejects("huge tensor", &one_tensor(b"t", &[1 << 60], 0, 0), "TensorOutOfBounds");
    let e = rejects("row not whole blocks", &one_tensor(b"t", &[33, 2], 2, 0), "RowNotBlockMultiple");
    assert_eq!(e.to_string(), "tensor 't' has row length 33, not a multiple of the Q4_0 block size 32");
}

#[test]
fn unsupported_types() {
    let e = rejects("IQ2_XXS", &one_tensor(b"blk.0.attn_q.weight", &[256, 4], 16, 0), "UnsupportedType");
    assert_eq!(e.to_string(), "tensor 'blk.0.attn_q.weight' has unsupported type IQ2_XXS (id 16)");
    let e = rejects("id 1000", &one_tensor(b"x", &[32], 1000, 0), "UnsupportedType");
    assert_eq!(e.to_string(), "tensor 'x' has unknown type id 1000");
}

#[test]
fn bad_offsets() {
    let e = rejects("misaligned", &one_tensor(b"t", &[8], 0, 4), "MisalignedOffset");
    assert_eq!(e.to_string(), "tensor 't' data offset 4 is not a multiple of the alignment 32");

    let bytes = one_tensor(b"t", &[8], 0, 1 << 20);
    let e = rejects("out of range", &bytes, "TensorOutOfBounds");
    assert!(e.to_string().contains("lies outside the file"), "{e}");
    rejects("offset near u64::MAX", &one_tensor(b"t", &[8], 0, u64::MAX - 31), "ElementCountOverflow");

    // Overlap: b starts inside a.
    let mut w = GgufWriter::new(3);
    w.add_raw_tensor_info(b"a", &[64], 0, 0).add_raw_tensor_info(b"b", &[8], 0, 128);
    let mut bytes = w.to_bytes();
    bytes.resize(bytes.len() + 512, 0);
    let e = rejects("overlap", &bytes, "Overlap");
    assert_eq!(e.to_string(), "tensors 'a' [0, 256) and 'b' [128, 160) overlap (offsets relative to the data section)");
    // Same offset twice.
    let mut w = GgufWriter::new(3);
    w.add_raw_tensor_info(b"a", &[8], 0, 64).add_raw_tensor_info(b"b", &[8], 0, 64);
    let mut bytes = w.to_bytes();
    bytes.resize(bytes.len() + 512, 0);
    rejects("same offset", &bytes, "Overlap");

    // The data section cut short.
    let bytes = small_valid();
    let e = rejects("data cut", &bytes[..bytes.len() - 1], "TensorOutOfBounds");
    assert!(e.to_string().starts_with("tensor 'a' data ["), "{e}");
}

#[test]
fn duplicate_tensors() {
    let mut w = GgufWriter::new(3);
    w.add_tensor("a", &[8], GgmlType::F32, &[0; 32]).unwrap();
    w.add_tensor("a", &[8], GgmlType::F32, &[0; 32]).unwrap();
    let e = rejects("dup tensor", &w.to_bytes(), "DuplicateTensor");
    assert_eq!(e.to_string(), "duplicate tensor name 'a'");
}

// ---------------------------------------------------------------- truncation

#[test]
fn truncated_small_file_at_every_byte() {
    let bytes = small_valid();
    let h = parse_header(&bytes).unwrap();
    let header_end = {
        let mut p = HeaderParser::new(Limits::default());
        match p.feed(&bytes).unwrap() {
            Progress::Done { .. } => p.bytes_consumed() as usize,
            Progress::NeedMore(_) => unreachable!(),
        }
    };
    for cut in 1..bytes.len() {
        let expect = if cut < header_end { "Truncated" } else { "TensorOutOfBounds" };
        let kind = if cut < 4 && bytes[..cut] != b"GGUF"[..cut] { "BadMagic" } else { expect };
        let e = rejects(&format!("cut at {cut}"), &bytes[..cut], kind);
        if let GgufError::Truncated { offset, .. } = e {
            assert_eq!(offset, cut as u64);
        }
    }
    assert_eq!(parse_header(&bytes).unwrap(), h);
}

#[test]
fn truncated_real_headers() {
    for m in RealModel::ALL {
        let file = std::fs::read(m.path()).unwrap();
        let full = parse_header(&file).unwrap();
        let header_end = {
            let mut p = HeaderParser::new(Limits::default());
            match p.feed(&file).unwrap() {
                Progress::Done { .. } => p.bytes_consumed() as usize,
                Progress::NeedMore(_) => unreachable!(),
            }
        };
        let mut cuts: Vec<usize> = (0..16).map(|i| 1 + i * (header_end - 1) / 16).collect();
        cuts.extend([4, 8, 23, 24, 25, header_end - 1]);
        cuts.sort();
        cuts.dedup();
        assert!(cuts.len() >= 20);
        let mut last_rank = (0, 0);
        let mut worst = 0f64;
        for &cut in &cuts {
            let prefix = &file[..cut];
            let (r, largest) = largest_alloc(|| parse_header(prefix));
            let e = r.unwrap_err();
            let GgufError::Truncated { section, offset, need } = &e else {
                panic!("{m:?} cut at {cut}: {e}");
            };
            assert_eq!(*offset, cut as u64);
            assert!(*need >= 1);
            let msg = e.to_string();
            assert!(msg.starts_with("truncated: the file ends inside "), "{msg}");
            // Sections come in file order as the cut moves on.
            let rank = match section {
                Section::Preamble => (0, 0),
                Section::Metadata { index, count, .. } => {
                    assert_eq!(*count, full.metadata.len() as u64);
                    (1, *index)
                }
                Section::TensorTable { index, count } => {
                    assert_eq!(*count, full.tensors.len() as u64);
                    (2, *index)
                }
            };
            assert!(rank >= last_rank, "{m:?}: cut {cut} in {section} after {last_rank:?}");
            last_rank = rank;
            if cut < 24 {
                assert_eq!(*section, Section::Preamble);
            }
            // Memory follows the bytes present, not the declared counts (Gemma 3 declares
            // 262,144 tokens: 6.3 MB of `String`s from 4.4 MB on disk).
            assert!(largest <= 3 * cut + 64 * 1024, "{m:?} cut {cut}: largest allocation {largest}");
            worst = worst.max(largest as f64 / cut as f64);

            // Streamed with the file length: the same error exactly.
            for size in [4096, 65536] {
                assert_eq!(feed_all(prefix, size, true).unwrap_err(), e, "{m:?} cut {cut} chunks {size}");
                // Without it: truncated in the same section.
                match feed_all(prefix, size, false).unwrap_err() {
                    GgufError::Truncated { section: s, offset: o, .. } => {
                        assert_eq!((&s, o), (section, cut as u64), "{m:?} cut {cut}")
                    }
                    other => panic!("{m:?} cut {cut}: {other}"),
                }
            }
        }
        assert_eq!(last_rank.0, 2, "{m:?}: the last cut should be in the tensor table");
        eprintln!("{m:?}: {} cuts; largest single allocation at most {worst:.2} x the input", cuts.len());
        // Cut inside the data section: the header is complete, a tensor is missing.
        for cut in [header_end + 1, file.len() - 1] {
            let e = parse_header(&file[..cut]).unwrap_err();
            assert_eq!(e.kind(), "TensorOutOfBounds", "{m:?} cut {cut}: {e}");
        }
    }
}

#[test]
fn parser_is_spent_after_an_error_or_done() {
    let mut p = HeaderParser::new(Limits::default());
    let e = p.feed(b"NOPE").unwrap_err();
    assert_eq!(p.feed(&small_valid()).unwrap_err(), e);
    assert_eq!(p.finish().unwrap_err(), e);

    let mut p = HeaderParser::new(Limits::default());
    assert!(matches!(p.feed(&small_valid()).unwrap(), Progress::Done { .. }));
    assert_eq!(p.feed(b"").unwrap_err(), GgufError::AlreadyDone);
    assert_eq!(p.finish().unwrap_err(), GgufError::AlreadyDone);
}

#[test]
fn custom_limits_apply() {
    let limits = Limits { max_tensors: 0, ..Limits::default() };
    let e = kindling_gguf::parse_header_with_limits(&small_valid(), limits).unwrap_err();
    assert_eq!(e, GgufError::TooManyTensors { count: 1, limit: 0 });
    let limits = Limits { max_string_len: 4, ..Limits::default() };
    let e = kindling_gguf::parse_header_with_limits(&small_valid(), limits).unwrap_err();
    assert_eq!(e.kind(), "StringTooLong");
}

/// Found by the fuzzer (a harness issue, kept as a regression test): `general.alignment`
/// stored as an f64 NaN is rejected the same way whole and streamed.
#[test]
fn nan_alignment() {
    let mut w = GgufWriter::new(2);
    w.add_kv("general.alignment", Value::F64(f64::NAN));
    let bytes = w.to_bytes();
    let e = parse_header(&bytes).unwrap_err();
    assert!(matches!(&e, GgufError::BadAlignment { found: Value::F64(x) } if x.is_nan()), "{e}");
    assert_eq!(e.to_string(), "general.alignment must be a nonzero power of two stored as u32, found f64 NaN");
    for size in [1, 5] {
        assert_eq!(format!("{:?}", feed_all(&bytes, size, true)), format!("{:?}", Err::<(), _>(e.clone())));
    }
}
