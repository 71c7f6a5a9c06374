//! `kindling shaders`: every kernel variant listed under a unique name, each name's
//! WGSL printed, and an unknown name a clear error that offers the close ones.

use std::process::{Command, Output};

fn kindling(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kindling")).args(args).output().expect("run kindling")
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "kindling failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).expect("UTF-8")
}

#[test]
fn list_names_every_variant_once() {
    let list = stdout(&kindling(&["shaders", "--list"]));
    let names: Vec<&str> = list.lines().map(|l| l.split_whitespace().next().expect("a name")).collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "names repeat");
    for want in [
        "embed/q4_k",
        "matvec_normed/q4_k/int128",
        "matvec_multi/q4_k+q5_k",
        "attention_tiled/kv_f16",
        "matmul_tiled/q4_k/sg32/coop",
        "argmax",
    ] {
        assert!(names.contains(&want), "{want} missing from --list");
    }
    // The native-only variants say so.
    assert!(list.lines().any(|l| l.starts_with("matvec/q4_k/sg32 ") && l.ends_with("native")));
}

#[test]
fn key_prints_that_variants_wgsl() {
    let wgsl = stdout(&kindling(&["shaders", "--key", "matvec_gated_normed/q4_k"]));
    assert!(wgsl.contains("struct Params"), "no generated Params");
    assert!(wgsl.contains("fn matvec_gated("), "no matvec_gated entry point");
    assert!(wgsl.contains("fn dq4("), "no Q4_K dequantization");
    let coop = stdout(&kindling(&["shaders", "--key", "attention_tiled/coop"]));
    let first = coop.lines().find(|l| !l.starts_with("//")).unwrap_or_default();
    assert_eq!(first, "enable f16;", "the cooperative-matrix module starts with its enables");
    assert!(wgsl.starts_with("// matvec_gated_normed/q4_k: entry point `matvec_gated`"), "{}", &wgsl[..200]);
    // The browser's form: the unit loop (`u += p.lanes`) counted to a constant, so Chrome's
    // compiler adds no counter of its own; natively it stays as written.
    let browser = stdout(&kindling(&["shaders", "--key", "matvec_gated_normed/q4_k/int128", "--browser"]));
    assert!(browser.contains("const BOUNDED_LOOP_CAP: u32") && browser.contains("u += p.lanes;"), "no bounded loops");
    let native = stdout(&kindling(&["shaders", "--key", "matvec_gated_normed/q4_k/int128"]));
    assert!(native.contains("for (var u = lane; u < p.k / 32u; u += p.lanes)") && !native.contains("BOUNDED_LOOP_CAP"));
}

#[test]
fn an_unknown_name_is_an_error_offering_close_ones() {
    let out = kindling(&["shaders", "--key", "matvec/q4k"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no kernel named 'matvec/q4k'") && err.contains("matvec/q4_k"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Neither --list nor --key: clap's usage error.
    assert!(!kindling(&["shaders"]).status.success());
}
