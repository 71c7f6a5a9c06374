//! Every kernel variant the backend can compile, each under a stable, readable name
//! (`matvec_normed/q4_k/int128`, `attention_tiled/kv_f16`), so a reader, a bug report
//! or `kindling shaders` can name one and see its WGSL.

use kindling_gguf::GgmlType;

use crate::key::{KernelKey, ShaderFeatures};
use crate::tuning::INT_BATCH_DIGITS;

/// A kernel variant and whether browsers run it (the subgroup and cooperative-matrix
/// variants are native only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    pub key: KernelKey,
    pub browser: bool,
}

/// Every variant for every weight type: the plain kernels (and their integer-dot
/// forms), those with an f16 KV cache, with subgroups of 32 (with room for the
/// integer-dot staging and the integer-dot batch matmul) and on cooperative matrices. Each appears once, in a fixed
/// order.
pub fn every_variant() -> Vec<Variant> {
    let plain = KernelKey::all(&GgmlType::ALL);
    let kv_f16 = ShaderFeatures { kv_f16: true, ..Default::default() };
    let subgroups =
        ShaderFeatures { subgroup_size: 32, int_runs: 1024, int_batch: INT_BATCH_DIGITS, ..Default::default() };
    let coop = ShaderFeatures { subgroup_size: 32, coop_matrix: true, ..Default::default() };
    let with = |f: ShaderFeatures| {
        plain.iter().map(move |k| k.with_features(f)).filter(|k| k.features != ShaderFeatures::default())
    };
    let browser = plain.iter().copied().chain(with(kv_f16)).map(|key| Variant { key, browser: true });
    let native =
        with(subgroups).chain(with(coop).filter(|k| k.features.coop_matrix)).map(|key| Variant { key, browser: false });
    let mut out: Vec<Variant> = Vec::new();
    for v in browser.chain(native) {
        if !out.iter().any(|o| o.key == v.key) {
            out.push(v);
        }
    }
    out
}

/// The variant of that name (`KernelKey::name`), or the names closest to it.
pub fn find(name: &str) -> Result<Variant, Vec<String>> {
    let all = every_variant();
    if let Some(v) = all.iter().find(|v| v.key.name() == name) {
        return Ok(*v);
    }
    let mut scored: Vec<(usize, String)> = all.iter().map(|v| v.key.name()).map(|n| (distance(name, &n), n)).collect();
    scored.sort();
    let best = scored.first().map_or(0, |s| s.0);
    // The nearest few, and every name that starts with what was typed (an op alone).
    let close =
        scored.iter().filter(|(d, n)| *d <= best + 2 || n.starts_with(name)).map(|(_, n)| n.clone()).take(12).collect();
    Err(close)
}

/// Levenshtein distance over bytes (names are ASCII).
fn distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_again() {
        let all = every_variant();
        let mut names: Vec<String> = all.iter().map(|v| v.key.name()).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "two variants share a name");
        for v in &all {
            assert_eq!(find(&v.key.name()), Ok(*v));
        }
        assert!(find("matvec/q4k").unwrap_err().contains(&"matvec/q4_k".to_string()));
    }
}
