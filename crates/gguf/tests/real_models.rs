//! Both real models: the header as a whole and fed in chunks, compared with what PyPI
//! `gguf.GGUFReader` reports; and real tensors dequantized bit-exactly like
//! `gguf.quants.dequantize` (`tests/scripts/dequant_ref.py --model`).

mod common;

use std::collections::HashMap;
use std::sync::OnceLock;

use common::{crc32, first_mismatch, parse_records, Record};
use kindling_gguf::{dequantize_row, parse_header, Array, GgmlType, Header, HeaderParser, Limits, Progress, Value};
use kindling_testdata::RealModel;

const ROWS: &str = "4";

struct Model {
    bytes: Vec<u8>,
    header: Header,
    records: Vec<Record>,
    /// The reference's header description (see `dequant_ref.py`).
    lines: String,
}

fn model(m: RealModel) -> &'static Model {
    static CACHE: [OnceLock<Model>; 2] = [OnceLock::new(), OnceLock::new()];
    CACHE[m as usize].get_or_init(|| {
        let path = m.path();
        let bytes = std::fs::read(&path).unwrap();
        let header = parse_header(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let out = kindling_testdata::run_python("dequant_ref.py", &["--model", path.to_str().unwrap(), "--rows", ROWS]);
        let (records, lines) = parse_records(&out);
        Model { bytes, header, records, lines }
    })
}

/// Feeds `bytes` in chunks of `size` until the header is done.
fn parse_in_chunks(bytes: &[u8], size: usize, with_len: bool) -> Header {
    let mut p = HeaderParser::new(Limits::default());
    if with_len {
        p = p.with_file_len(bytes.len() as u64);
    }
    let mut fed = 0usize;
    for chunk in bytes.chunks(size) {
        fed += chunk.len();
        match p.feed(chunk).unwrap() {
            Progress::NeedMore(n) => assert!(n >= 1),
            Progress::Done { header, rest } => {
                assert!(rest <= chunk.len());
                assert_eq!(p.bytes_consumed(), (fed - rest) as u64, "bytes_consumed = end of the tensor table");
                assert!(
                    header.data_offset >= p.bytes_consumed()
                        && header.data_offset - p.bytes_consumed() < header.alignment
                );
                assert!(matches!(p.feed(b"x"), Err(kindling_gguf::GgufError::AlreadyDone)));
                return header;
            }
        }
    }
    panic!("header not done after {fed} bytes");
}

fn check_chunked(m: RealModel) {
    let md = model(m);
    let header_end = md.header.data_offset as usize;
    for size in [1, 7, 4096, 65536] {
        // Only the header's bytes matter for speed; the file length makes the parser
        // check every tensor against the real file end.
        let h = parse_in_chunks(&md.bytes[..header_end], size, false);
        assert!(h == md.header, "{m:?}: chunks of {size} gave a different header");
        let h = parse_in_chunks(&md.bytes, size.max(4096), true);
        assert!(h == md.header, "{m:?}: chunks of {size} (file length known) gave a different header");
    }
    // One chunk with everything: Done with the data section as `rest`.
    let mut p = HeaderParser::new(Limits::default()).with_file_len(md.bytes.len() as u64);
    match p.feed(&md.bytes).unwrap() {
        Progress::Done { header, rest } => {
            assert!(header == md.header);
            assert_eq!(md.bytes.len() - rest, p.bytes_consumed() as usize);
        }
        Progress::NeedMore(n) => panic!("whole file: need {n} more"),
    }
}

/// Compares our header with the GGUFReader description lines.
fn check_against_reader(m: RealModel) {
    let md = model(m);
    let h = &md.header;
    let mut n_tensors = 0;
    let mut n_kv = 0;
    let by_name: HashMap<&str, usize> = h.tensors.iter().enumerate().map(|(i, t)| (t.name.as_str(), i)).collect();
    for line in md.lines.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f[0] {
            "V" => assert_eq!(h.version.to_string(), f[1]),
            "D" => {
                assert_eq!(h.data_offset.to_string(), f[1], "data offset");
                assert_eq!(h.alignment.to_string(), f[2], "alignment");
            }
            "T" => {
                // GGUFReader lists tensors in file order, as we do.
                let t = &h.tensors[n_tensors];
                n_tensors += 1;
                assert_eq!(t.name, f[1]);
                assert_eq!(t.ty.id().to_string(), f[2], "{}", t.name);
                assert_eq!(t.offset.to_string(), f[3], "{}", t.name);
                let dims: Vec<String> = t.dims.iter().map(|d| d.to_string()).collect();
                assert_eq!(dims.join(","), f[4], "{}", t.name);
                assert_eq!(by_name[f[1]], n_tensors - 1);
            }
            "K" => {
                let (key, vt, payload) = (f[1], f[2], f[3]);
                let (k, v) = h.metadata.iter().nth(n_kv).unwrap();
                n_kv += 1;
                assert_eq!(k, key, "metadata order");
                assert_eq!(v.value_type().id().to_string(), vt, "{key}");
                assert_eq!(describe(v), payload, "{key}");
            }
            other => panic!("unexpected line kind {other}"),
        }
    }
    assert_eq!(n_tensors, h.tensors.len());
    assert_eq!(n_kv, h.metadata.len());
}

/// The reference's payload encoding of a value.
fn describe(v: &Value) -> String {
    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
    match v {
        Value::String(s) => hex(s.as_bytes()),
        Value::F32(x) => format!("{:08x}", x.to_bits()),
        Value::F64(x) => format!("{:016x}", x.to_bits()),
        Value::Bool(b) => u8::from(*b).to_string(),
        Value::Array(a) => {
            let mut blob = Vec::new();
            match a {
                Array::String(v) => {
                    for s in v {
                        blob.extend_from_slice(&(s.len() as u64).to_le_bytes());
                        blob.extend_from_slice(s.as_bytes());
                    }
                }
                Array::I32(v) => v.iter().for_each(|x| blob.extend_from_slice(&x.to_le_bytes())),
                Array::F32(v) => v.iter().for_each(|x| blob.extend_from_slice(&x.to_le_bytes())),
                Array::U32(v) => v.iter().for_each(|x| blob.extend_from_slice(&x.to_le_bytes())),
                other => panic!("no reference encoding for {} arrays in the real models", other.type_name()),
            }
            format!("{}:{}:{}:{:08x}", a.element_type().id(), a.len(), blob.len(), crc32(&blob))
        }
        other => other.as_i64().unwrap().to_string(),
    }
}

fn check_dequant(m: RealModel, required: &[GgmlType]) {
    let md = model(m);
    let h = &md.header;
    let mut covered = Vec::new();
    for r in &md.records {
        let t = h.tensor(&r.name).unwrap_or_else(|| panic!("{m:?}: no tensor {}", r.name));
        assert_eq!(t.ty, r.ty, "{}", r.name);
        // The reference's raw bytes are the bytes at our offsets.
        let start = (h.data_offset + t.offset) as usize;
        let data = &md.bytes[start..start + t.n_bytes as usize];
        assert_eq!(&data[..r.raw.len()], &r.raw[..], "{}: raw bytes differ (offset?)", r.name);
        let rows = r.values.len() / t.row_len() as usize;
        assert!(rows >= 1);
        let mut ours = vec![f32::NAN; r.values.len()];
        for (row, out) in ours.chunks_exact_mut(t.row_len() as usize).enumerate() {
            dequantize_row(t, data, row as u64, out).unwrap();
        }
        if let Some(msg) = first_mismatch(&ours, &r.values) {
            panic!("{m:?} {} ({}): {msg}", r.name, r.ty);
        }
        covered.push(t.ty);
    }
    for ty in required {
        assert!(covered.contains(ty), "{m:?}: no {ty} tensor checked");
    }
    eprintln!("{m:?}: {} tensors, first {ROWS} rows, bit-exact", md.records.len());
}

#[test]
fn smollm2_header_facts() {
    let h = &model(RealModel::SmolLm2).header;
    assert_eq!(h.tensors.len(), 272);
    assert_eq!(h.metadata.len(), 33);
    assert_eq!(h.metadata.get_u64("llama.block_count"), Some(30));
    assert_eq!(h.metadata.get_str("general.architecture"), Some("llama"));
    assert_eq!(h.metadata.get_array("tokenizer.ggml.tokens").map(|a| a.len()), Some(49152));
    assert_eq!(h.version, 3);
    assert_eq!(h.alignment, 32);
    let t = h.tensor("token_embd.weight").unwrap();
    assert_eq!((t.dims.as_slice(), t.ty), (&[576u64, 49152][..], GgmlType::Q8_0));
    assert_eq!((t.row_len(), t.n_rows(), t.row_bytes()), (576, 49152, 612));
    assert!(h.file_size_needed() <= model(RealModel::SmolLm2).bytes.len() as u64);
}

#[test]
fn gemma3_header_facts() {
    let h = &model(RealModel::Gemma3).header;
    assert_eq!(h.tensors.len(), 236);
    assert_eq!(h.metadata.len(), 33);
    assert_eq!(h.metadata.get_u64("gemma3.block_count"), Some(18));
    assert_eq!(h.metadata.get_array("tokenizer.ggml.tokens").map(|a| a.len()), Some(262_144));
    assert!(h.file_size_needed() <= model(RealModel::Gemma3).bytes.len() as u64);
}

#[test]
fn smollm2_header_matches_gguf_reader() {
    check_against_reader(RealModel::SmolLm2);
}

#[test]
fn gemma3_header_matches_gguf_reader() {
    check_against_reader(RealModel::Gemma3);
}

#[test]
fn smollm2_chunked_parse_is_identical() {
    check_chunked(RealModel::SmolLm2);
}

#[test]
fn gemma3_chunked_parse_is_identical() {
    check_chunked(RealModel::Gemma3);
}

#[test]
fn smollm2_tensors_dequantize_like_pypi_gguf() {
    check_dequant(RealModel::SmolLm2, &[GgmlType::Q4_1, GgmlType::Q8_0, GgmlType::F32]);
}

#[test]
fn gemma3_tensors_dequantize_like_pypi_gguf() {
    check_dequant(RealModel::Gemma3, &[GgmlType::Q5_0, GgmlType::Q4K, GgmlType::Q6K, GgmlType::Q8_0, GgmlType::F32]);
}
