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

export CARGO_TARGET_WASM32_WASIP1_RUNNER="node $PWD/tests/scripts/wasi_runner.mjs"
base_flags="${RUSTFLAGS:-}"
target_root="${CARGO_TARGET_DIR:-$PWD/target}"

# SIMD128, what browsers run. (The portable lanes, what wasm32 without simd128 and aarch64
# get, are tested natively: scripts/test.sh runs kindling-cpu's tests with its
# `portable-lanes` feature.)
echo "== wasm32-wasip1, simd128"
RUSTFLAGS="$base_flags -C target-feature=+simd128" KINDLING_EXPECT_LANES=wasm-simd128 \
  CARGO_TARGET_DIR="$target_root/wasi-simd1" cargo test --release -p kindling-cpu --target wasm32-wasip1 --lib "$@"
