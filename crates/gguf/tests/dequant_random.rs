//! Dequantization of random blocks of every type against PyPI `gguf`
//! (`tests/scripts/dequant_ref.py random`). Required: bit-exact equality for every type.
//! Our block functions compute in f32 in exactly the reference's order (no fused
//! multiply-add), so no ulp tolerance is needed or allowed.

mod common;

use common::{first_mismatch, parse_records};
use kindling_gguf::{dequant, dequantize, dequantize_row, GgmlType, GgufError, TensorInfo, QK_K};

#[test]
fn random_blocks_match_pypi_gguf_bit_for_bit() {
    let out = kindling_testdata::run_python("dequant_ref.py", &["random", "--blocks", "64", "--seed", "1234"]);
    let (records, _) = parse_records(&out);
    let mut seen = Vec::new();
    let mut failures = Vec::new();
    for r in &records {
        let mut ours = vec![f32::NAN; r.values.len()];
        dequantize(r.ty, &r.raw, &mut ours).unwrap_or_else(|e| panic!("{}: {e}", r.name));
        if let Some(m) = first_mismatch(&ours, &r.values) {
            failures.push(format!("{}: {m}", r.ty));
        }
        assert!(r.values.iter().all(|v| v.is_finite()), "{}: reference has non-finite values", r.ty);
        seen.push(r.ty);
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    for ty in GgmlType::ALL {
        assert!(seen.contains(&ty), "no reference data for {ty}");
    }
    eprintln!("{} types, all bit-exact", seen.len());
}

#[test]
fn block_sizes_are_checked() {
    for ty in GgmlType::ALL {
        let (bb, be) = (ty.block_bytes(), ty.block_elems());
        let raw = vec![0u8; 2 * bb];
        let mut out = vec![0f32; 2 * be];
        dequantize(ty, &raw, &mut out).unwrap();
        // a partial block, a short output, a long output
        assert!(matches!(dequantize(ty, &raw[..2 * bb - 1], &mut out), Err(GgufError::DequantSize { .. })));
        assert!(matches!(dequantize(ty, &raw, &mut out[..2 * be - 1]), Err(GgufError::DequantSize { .. })));
        let mut long = vec![0f32; 3 * be];
        assert!(matches!(dequantize(ty, &raw, &mut long), Err(GgufError::DequantSize { .. })));
        let msg = dequantize(ty, &raw, &mut long).unwrap_err().to_string();
        assert!(msg.contains(ty.name()), "{msg}");
    }
}

#[test]
fn dequantize_row_picks_the_row() {
    // Q8_0, 2 rows of 64: row r, block b has d = 1.0 and q[i] = 10r + b.
    let mut data = Vec::new();
    for r in 0..2u8 {
        for b in 0..2u8 {
            data.extend_from_slice(&half::f16::from_f32(1.0).to_le_bytes());
            data.extend(std::iter::repeat_n(10 * r + b, 32));
        }
    }
    let t =
        TensorInfo { name: "t".into(), dims: vec![64, 2], ty: GgmlType::Q8_0, offset: 0, n_elems: 128, n_bytes: 136 };
    assert_eq!(t.row_bytes(), 68);
    let mut out = [0f32; 64];
    dequantize_row(&t, &data, 1, &mut out).unwrap();
    assert!(out[..32].iter().all(|&v| v == 10.0) && out[32..].iter().all(|&v| v == 11.0));
    assert!(matches!(dequantize_row(&t, &data, 2, &mut out), Err(GgufError::RowOutOfRange { .. })));
    assert!(matches!(dequantize_row(&t, &data[..100], 1, &mut out), Err(GgufError::RowOutOfRange { .. })));
    assert!(matches!(dequantize_row(&t, &data, u64::MAX, &mut out), Err(GgufError::RowOutOfRange { .. })));
}

#[test]
fn hand_checked_values() {
    // Q4_0: d = 0.5, byte j = (j % 16) | (15 - j % 16) << 4
    let mut b = [0u8; 18];
    b[..2].copy_from_slice(&half::f16::from_f32(0.5).to_le_bytes());
    for j in 0..16 {
        b[2 + j] = (j as u8) | ((15 - j as u8) << 4);
    }
    let mut y = [0f32; 32];
    dequant::legacy::q4_0_block(&b, &mut y);
    assert_eq!(y[0], -4.0);
    assert_eq!(y[15], 3.5);
    assert_eq!(y[16], 3.5);
    assert_eq!(y[31], -4.0);

    // Q8_K: d is an f32
    let mut b = [0u8; 292];
    b[..4].copy_from_slice(&0.25f32.to_le_bytes());
    b[4] = (-128i8) as u8;
    b[5 + 254] = 127;
    let mut y = [0f32; QK_K];
    dequant::kquants::q8_k_block(&b, &mut y);
    assert_eq!((y[0], y[1], y[255]), (-32.0, 0.0, 31.75));

    // BF16 is the top half of an f32
    let mut y = [0f32; 1];
    dequantize(GgmlType::BF16, &(0x3fc0u16).to_le_bytes(), &mut y).unwrap();
    assert_eq!(y[0], 1.5);
}
