//! Arbitrary bytes into the GGUF header parser, whole and streamed.
//!
//! Input: 2 bytes choosing how to cut the stream, then the file. The file goes to
//! `parse_header` and, cut into chunks (a first chunk of a fuzzer-chosen length, then
//! chunks of a fuzzer-chosen size), to `HeaderParser::feed` with the file length: both
//! must give the same header or exactly the same error. Streamed without the file length
//! it must agree wherever the file end plays no part. Parsed tensors are dequantized, so
//! the block decoders see arbitrary bytes too. Nothing may panic.
#![no_main]

use kindling_gguf::{dequantize, parse_header, GgufError, Header, HeaderParser, Limits, Progress};
use libfuzzer_sys::fuzz_target;

fn stream(file: &[u8], first: usize, step: usize, with_len: bool) -> Result<Header, GgufError> {
    let mut p = HeaderParser::new(Limits::default());
    if with_len {
        p = p.with_file_len(file.len() as u64);
    }
    let (head, tail) = file.split_at(first.min(file.len()));
    let mut fed = 0usize;
    for chunk in std::iter::once(head).chain(tail.chunks(step)) {
        fed += chunk.len();
        match p.feed(chunk)? {
            Progress::Done { header, rest } => {
                assert!(rest <= chunk.len());
                assert_eq!(p.bytes_consumed(), (fed - rest) as u64);
                assert!(header.data_offset >= p.bytes_consumed());
                assert!(matches!(p.feed(b""), Err(GgufError::AlreadyDone)));
                return Ok(header);
            }
            Progress::NeedMore(n) => assert!(n >= 1),
        }
    }
    p.finish()
}

/// Results compared by their Debug form: metadata may hold NaNs, which `PartialEq`
/// never finds equal (both parses read the same bits, so their forms must match).
fn same<T: std::fmt::Debug, U: std::fmt::Debug>(a: &T, b: &U) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (params, file) = data.split_at(2);
    let first = params[0] as usize * file.len() / 255;
    let step = 1 + params[1] as usize;

    let whole = parse_header(file);
    let streamed = stream(file, first, step, true);
    assert!(same(&whole, &streamed), "whole-file and streamed parses disagree:\n{whole:?}\n{streamed:?}");

    let no_len = stream(file, first, step, false);
    match &whole {
        Ok(h) => assert!(same(&no_len.as_ref(), &Ok::<_, ()>(h)), "without file length: {no_len:?}"),
        // The file end decides these; without the length the parser cannot know.
        Err(GgufError::Truncated { .. } | GgufError::TensorOutOfBounds { .. }) => {}
        Err(e) => assert!(same(&no_len.as_ref(), &Err::<(), _>(e)), "without file length: {no_len:?}"),
    }

    if let Ok(h) = &whole {
        for t in h.tensors.iter().filter(|t| t.n_elems <= 1 << 16) {
            let r = h.tensor_file_range(t);
            let data = &file[r.start as usize..r.end as usize];
            let mut out = vec![0f32; t.n_elems as usize];
            dequantize(t.ty, data, &mut out).expect("a parsed tensor dequantizes");
            let mut row = vec![0f32; t.row_len() as usize];
            kindling_gguf::dequantize_row(t, data, t.n_rows() - 1, &mut row).expect("last row");
        }
    }
});
