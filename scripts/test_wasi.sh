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

# SIMD128 (what browsers run), then the portable lanes (wasm32 without simd128), each
# in its own target dir: RUSTFLAGS differ, and sharing one dir would rebuild all.
for simd in 1 0; do
  if [ "$simd" = 1 ]; then flags="$base_flags -C target-feature=+simd128"; else flags="$base_flags"; fi
  echo "== wasm32-wasip1, simd128=$simd"
  RUSTFLAGS="$flags" KINDLING_EXPECT_SIMD128=$simd CARGO_TARGET_DIR="$target_root/wasi-simd$simd" \
    cargo test --release -p kindling-cpu --target wasm32-wasip1 --lib "$@"
done
