//! Models split by llama.cpp's gguf-split (shards written by tests/scripts/make_shards.py
//! with the PyPI `gguf` reader): loaded shard after shard, they give the same logits
//! as the file they were split from; shards out of order, missing or fed early are
//! refused with errors that say so.

use std::path::PathBuf;

use kindling_cpu::CpuBackend;
use kindling_e2e::{all_logits, load_cpu};
use kindling_model::{Loader, Model, ModelError, ModelOptions};
use kindling_testdata::{shards, synthetic, RealModel};

/// Feeds `files` in order, `next_shard` between them, in 1 MiB pieces.
fn load_shards(files: &[PathBuf]) -> Result<Model<CpuBackend>, ModelError> {
    let mut backend = CpuBackend::new();
    let mut loader = Loader::new(None);
    for (i, file) in files.iter().enumerate() {
        let bytes = std::fs::read(file).expect("shard");
        if i > 0 {
            loader.next_shard(Some(bytes.len() as u64))?;
        }
        for piece in bytes.chunks(1 << 20) {
            loader.feed(&mut backend, piece)?;
        }
        assert!(loader.is_shard_complete(), "shard {} complete after its last byte", i + 1);
    }
    let loaded = loader.finish()?;
    Model::new(backend, loaded, ModelOptions::default())
}

fn same_logits_as_the_whole_file(model: PathBuf, n: usize) {
    let parts = shards(&model, n);
    let ids = [1, 7, 42, 99, 3, 250];
    let mut whole = load_cpu(&model);
    let mut split = load_shards(&parts).expect("the shards load");
    assert_eq!(split.info().parameters, whole.info().parameters, "parameter count over the shards");
    assert_eq!(all_logits(&mut split, &ids), all_logits(&mut whole, &ids), "{} in {n} shards", model.display());
}

#[test]
fn a_split_model_loads_shard_after_shard_with_the_logits_of_the_whole_file() {
    same_logits_as_the_whole_file(synthetic("tiny-llama.gguf"), 3);
    same_logits_as_the_whole_file(RealModel::SmolLm2.path(), 3);
}

#[test]
fn shards_out_of_order_missing_or_early_are_refused() {
    let parts = shards(&synthetic("tiny-llama.gguf"), 3);
    let message = |r: Result<Model<CpuBackend>, ModelError>| r.err().expect("refused").to_string();

    let second_first = message(load_shards(&parts[1..2]));
    assert!(second_first.contains("shard 2 of 3") && second_first.contains("00001-of-00003"), "{second_first}");

    let skipped = message(load_shards(&[parts[0].clone(), parts[2].clone()]));
    assert!(skipped.contains("split.no") && skipped.contains("expected shard 2 of 3"), "{skipped}");

    let missing = message(load_shards(&parts[..2]));
    assert!(missing.contains("split in 3 files and only 2 were read"), "{missing}");

    // next_shard before the shard's tensors are all in: the cut is named.
    let mut backend = CpuBackend::new();
    let mut loader = Loader::new(None);
    let first = std::fs::read(&parts[0]).expect("shard");
    loader.feed(&mut backend, &first[..first.len() - 100]).expect("most of shard 1");
    let early = loader.next_shard(None).expect_err("refused").to_string();
    assert!(early.contains("shard 1 ended") && early.contains("before its tensor"), "{early}");
}
