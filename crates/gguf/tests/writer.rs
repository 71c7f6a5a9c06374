//! The writer and the parser agree: every value type, arrays of arrays, every tensor
//! type, alignment, v2 and v3, whole and streamed in chunks of every size.

use kindling_gguf::writer::GgufWriter;
use kindling_gguf::{
    dequantize, parse_header, Array, GgmlType, GgufError, Header, HeaderParser, Limits, Progress, Value,
};

fn every_value() -> Vec<(String, Value)> {
    let arrays = vec![
        Array::U8(vec![0, 1, 255]),
        Array::I8(vec![-128, 0, 127]),
        Array::U16(vec![0, 65535]),
        Array::I16(vec![-32768, 32767]),
        Array::U32(vec![0, u32::MAX]),
        Array::I32(vec![i32::MIN, -1, 7]),
        Array::U64(vec![u64::MAX]),
        Array::I64(vec![i64::MIN]),
        Array::F32(vec![1.5, -0.0, f32::MIN_POSITIVE]),
        Array::F64(vec![std::f64::consts::PI]),
        Array::Bool(vec![true, false, true]),
        Array::String(vec!["".into(), "héllo".into(), "▁the".into()]),
        Array::Array(vec![Array::U8(vec![1]), Array::String(vec!["x".into()]), Array::Array(vec![])]),
        Array::U32(vec![]),
    ];
    let mut kvs: Vec<(String, Value)> = vec![
        ("u8".into(), Value::U8(200)),
        ("i8".into(), Value::I8(-3)),
        ("u16".into(), Value::U16(60000)),
        ("i16".into(), Value::I16(-30000)),
        ("u32".into(), Value::U32(4_000_000_000)),
        ("i32".into(), Value::I32(-2_000_000_000)),
        ("u64".into(), Value::U64(u64::MAX)),
        ("i64".into(), Value::I64(i64::MIN)),
        ("f32".into(), Value::F32(0.1)),
        ("f64".into(), Value::F64(-1e300)),
        ("bool".into(), Value::Bool(true)),
        ("string".into(), Value::String("{% for m in messages %}\n{{ m }}{% endfor %}".into())),
        ("".into(), Value::String(String::new())),
    ];
    for (i, a) in arrays.into_iter().enumerate() {
        kvs.push((format!("array.{i}.{}", a.type_name()), Value::Array(a)));
    }
    kvs
}

/// A tensor as written: name, dims, type, data.
type Written = (String, Vec<u64>, GgmlType, Vec<u8>);

fn build(version: u32, alignment: Option<u32>) -> (Vec<u8>, Vec<Written>) {
    let mut w = GgufWriter::new(version);
    if let Some(a) = alignment {
        w.alignment(a);
    }
    for (k, v) in every_value() {
        w.add_kv(k, v);
    }
    let mut tensors = Vec::new();
    for (i, ty) in GgmlType::ALL.into_iter().enumerate() {
        let dims = vec![2 * ty.block_elems() as u64, 3];
        let n = ty.bytes_for(dims.iter().product()).unwrap() as usize;
        let data: Vec<u8> = (0..n).map(|j| (j * 7 + i) as u8).collect();
        let name = format!("blk.{i}.{}", ty.name());
        w.add_tensor(&name, &dims, ty, &data).unwrap();
        tensors.push((name, dims, ty, data));
    }
    (w.to_bytes(), tensors)
}

fn check(bytes: &[u8], h: &Header, tensors: &[Written], alignment: u64) {
    let mut kvs = every_value();
    if alignment != 32 {
        kvs.insert(0, ("general.alignment".into(), Value::U32(alignment as u32)));
    }
    let ours: Vec<(String, Value)> = h.metadata.iter().map(|(k, v)| (k.to_owned(), v.clone())).collect();
    assert_eq!(ours, kvs);
    assert_eq!(h.alignment, alignment);
    assert_eq!(h.data_offset % alignment, 0);
    assert_eq!(h.tensors.len(), tensors.len());
    for (t, (name, dims, ty, data)) in h.tensors.iter().zip(tensors) {
        assert_eq!((&t.name, &t.dims, t.ty), (name, dims, *ty));
        assert_eq!(t.offset % alignment, 0);
        assert_eq!(h.tensor_file_range(t), {
            let s = h.data_offset + t.offset;
            s..s + data.len() as u64
        });
        let r = h.tensor_file_range(t);
        assert_eq!(&bytes[r.start as usize..r.end as usize], &data[..]);
        // and it dequantizes without error
        let mut out = vec![0f32; t.n_elems as usize];
        dequantize(t.ty, data, &mut out).unwrap();
    }
    assert_eq!(h.file_size_needed(), bytes.len() as u64);
}

#[test]
fn round_trip_every_type() {
    for version in [2, 3] {
        for alignment in [None, Some(1), Some(64), Some(4096)] {
            let (bytes, tensors) = build(version, alignment);
            let h = parse_header(&bytes).unwrap();
            assert_eq!(h.version, version);
            check(&bytes, &h, &tensors, alignment.map_or(32, u64::from));
            // streamed, every chunk size from 1 to 40 and a few larger ones
            for size in (1..=40).chain([63, 64, 65, 1000, 4096]) {
                for with_len in [false, true] {
                    let mut p = HeaderParser::new(Limits::default());
                    if with_len {
                        p = p.with_file_len(bytes.len() as u64);
                    }
                    let mut fed = 0;
                    let mut got = None;
                    for chunk in bytes.chunks(size) {
                        fed += chunk.len();
                        if let Progress::Done { header, rest } = p.feed(chunk).unwrap() {
                            assert_eq!(p.bytes_consumed() as usize, fed - rest);
                            got = Some(header);
                            break;
                        }
                    }
                    assert_eq!(got.as_ref(), Some(&h), "chunks of {size}");
                }
            }
        }
    }
}

#[test]
fn need_more_is_exact_for_fixed_items() {
    let (bytes, _) = build(3, None);
    let mut p = HeaderParser::new(Limits::default());
    // Nothing yet: the magic needs 4 bytes.
    assert_eq!(p.feed(&[]).unwrap(), Progress::NeedMore(4));
    assert_eq!(p.feed(&bytes[..1]).unwrap(), Progress::NeedMore(3));
    // magic ok, then version: 8 in all
    assert_eq!(p.feed(&bytes[1..4]).unwrap(), Progress::NeedMore(4));
    assert_eq!(p.feed(&bytes[4..8]).unwrap(), Progress::NeedMore(16));
    assert_eq!(p.bytes_consumed(), 8);
    // the counts, then the first key's length
    assert_eq!(p.feed(&bytes[8..24]).unwrap(), Progress::NeedMore(8));
    assert_eq!(p.bytes_consumed(), 24);
    // the first key "u8" (8 + 2 bytes), then its type (4)
    assert_eq!(p.feed(&bytes[24..32]).unwrap(), Progress::NeedMore(2));
    assert_eq!(p.feed(&bytes[32..34]).unwrap(), Progress::NeedMore(4));
    assert_eq!(p.bytes_consumed(), 24);
    // its type, then its u8 value
    assert_eq!(p.feed(&bytes[34..38]).unwrap(), Progress::NeedMore(1));
    assert_eq!(p.bytes_consumed(), 38);
}

#[test]
fn empty_header_and_data_offset() {
    let bytes = GgufWriter::new(3).to_bytes();
    assert_eq!(bytes.len(), 32, "24 bytes of preamble padded to 32");
    let h = parse_header(&bytes).unwrap();
    assert_eq!((h.data_offset, h.data_size(), h.file_size_needed()), (32, 0, 32));
    // the padding is not needed to parse a file without tensors
    assert!(parse_header(&bytes[..24]).is_ok());
}

#[test]
fn large_token_array_streams_in_64k_chunks() {
    // 262,144 strings like a real vocabulary, fed in 64 KiB chunks and byte by byte.
    let tokens: Vec<String> = (0..262_144).map(|i| format!("tok{i}")).collect();
    let mut w = GgufWriter::new(3);
    w.add_kv("tokenizer.ggml.tokens", Value::Array(Array::String(tokens.clone())));
    w.add_kv("tokenizer.ggml.scores", Value::Array(Array::F32((0..262_144).map(|i| i as f32).collect())));
    let bytes = w.to_bytes();
    for size in [65536, 1] {
        let mut p = HeaderParser::new(Limits::default());
        let mut header = None;
        for chunk in bytes.chunks(size) {
            if let Progress::Done { header: h, .. } = p.feed(chunk).unwrap() {
                header = Some(h);
                break;
            }
        }
        let h = header.unwrap();
        assert_eq!(h.metadata.get("tokenizer.ggml.tokens").and_then(|v| v.as_str_array()), Some(&tokens[..]));
        assert_eq!(h.metadata.get_array("tokenizer.ggml.scores").unwrap().get_f32(262_143), Some(262_143.0));
    }
}

#[test]
fn add_tensor_checks_the_data_size() {
    let mut w = GgufWriter::new(3);
    let e = w.add_tensor("t", &[32], GgmlType::Q4_0, &[0; 17]).err().unwrap();
    assert_eq!(e, GgufError::TensorDataSize { tensor: "t".into(), expected: Some(18), found: 17 });
    assert!(w.add_tensor("t", &[31], GgmlType::Q4_0, &[0; 18]).is_err());
    assert!(w.add_tensor("t", &[u64::MAX, 2], GgmlType::F32, &[]).is_err());
}

/// Writes the fuzz seed corpus to `fuzz/seeds/header/` (run on demand:
/// `cargo test -p kindling-gguf --test writer -- --ignored write_fuzz_seeds`). Each seed
/// is 2 chunking bytes (see `fuzz/fuzz_targets/header.rs`) followed by a file: small
/// valid files from the writer, and the first 64 KiB of each real model.
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let dir = kindling_testdata::repo_root().join("fuzz/seeds/header");
    std::fs::create_dir_all(&dir).unwrap();
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    seeds.push(("empty_v3".into(), GgufWriter::new(3).to_bytes()));
    let (all, _) = build(3, None);
    seeds.push(("every_type_v3".into(), all));
    let (all, _) = build(2, Some(64));
    seeds.push(("every_type_v2_align64".into(), all));
    let mut w = GgufWriter::new(3);
    w.add_kv("general.architecture", Value::String("llama".into()));
    w.add_kv("llama.block_count", Value::U32(1));
    w.add_kv("tokenizer.ggml.tokens", Value::Array(Array::String(vec!["<s>".into(), "a".into(), "b".into()])));
    w.add_kv("nested", Value::Array(Array::Array(vec![Array::Array(vec![Array::I16(vec![1, 2])])])));
    for ty in GgmlType::ALL {
        let n = ty.block_bytes();
        w.add_tensor(&format!("t.{}", ty.name()), &[ty.block_elems() as u64], ty, &vec![0x3c; n]).unwrap();
    }
    seeds.push(("tiny_model".into(), w.to_bytes()));
    for m in kindling_testdata::RealModel::ALL {
        let bytes = std::fs::read(m.path()).unwrap();
        seeds.push((format!("{}_64k", m.key()), bytes[..65536].to_vec()));
    }
    for (name, file) in seeds {
        for (i, params) in [[255u8, 0], [0, 63], [128, 255]].iter().enumerate() {
            let mut seed = params.to_vec();
            seed.extend_from_slice(&file);
            std::fs::write(dir.join(format!("{name}_{i}")), seed).unwrap();
        }
    }
}

#[test]
fn metadata_debug_is_deterministic() {
    let (bytes, _) = build(3, None);
    let a = format!("{:?}", parse_header(&bytes).unwrap().metadata);
    for _ in 0..4 {
        assert_eq!(format!("{:?}", parse_header(&bytes).unwrap().metadata), a);
    }
    assert!(a.starts_with("{\"u8\": U8(200), \"i8\": I8(-3),"), "{a}");
}
