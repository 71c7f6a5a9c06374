#!/usr/bin/env bash
# Runs the CPU backend's unit tests as WebAssembly with SIMD128 under Node (V8, the
# engine of Chromium), so the `core::arch::wasm32` kernels are tested, not only
# compiled. Tests that need model files or Python are native-only (cfg'd out).
#
#   ./scripts/test_wasi.sh            # needs rustup and node >= 18
set -euo pipefail
cd "$(dirname "$0")/.."

rustup target add wasm32-wasip1 >/dev/null
command -v node >/dev/null || { echo "test_wasi.sh: node is required (apt-get install nodejs)" >&2; exit 1; }

export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+simd128"
export CARGO_TARGET_WASM32_WASIP1_RUNNER="node $PWD/tests/scripts/wasi_runner.mjs"
# A separate target dir: RUSTFLAGS differ from the native build's, which would
# otherwise be rebuilt from scratch after every wasm run.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/wasi-simd128"

cargo test --release -p kindling-cpu --target wasm32-wasip1 "$@"
