#!/usr/bin/env bash
# The checks that need no browser and no real model, after the native test run: the CPU
# kernels' portable lanes, clippy, the fuzzers and the CPU kernels as WASI wasm.
# scripts/test.sh runs this after the WebGPU browser suite, on its core, while the other
# core finishes the pages (scripts/test_web.sh's KINDLING_AFTER_WEBGPU); it also runs alone.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== the CPU kernels' portable lanes (aarch64's and SIMD-less wasm's), natively"
KINDLING_EXPECT_LANES=portable cargo test -p kindling-cpu --lib --features portable-lanes --locked

echo "== lints (cargo clippy, every target, warnings are errors)"
# The harness feature: the GPU test bench's diagnostics.rs, left out of the package's wasm.
cargo clippy --workspace --all-targets --features kindling-web/harness --locked -- -D warnings

echo "== fuzzing the header parser and chat templates (scripts/fuzz.sh: ${KINDLING_FUZZ_SECONDS:-15} s a target; built with plain cargo)"
bash scripts/fuzz.sh

echo "== the CPU kernels as WebAssembly with SIMD128, under Node"
bash scripts/test_wasi.sh
