#!/usr/bin/env bash
# The checks that need no browser and no real model, after the native test run: the CPU
# kernels' portable lanes, clippy, the fuzzers and the CPU kernels as WASI wasm.
#
#   scripts/test_checks.sh [lanes] [clippy] [fuzz] [wasi]     (none named: all four)
#
# scripts/test.sh splits them over scripts/test_web.sh's two lanes so both end near the same
# time: lanes and clippy after the WebGPU browser suite (KINDLING_AFTER_WEBGPU), the fuzzers
# and WASI after the pages on the other core (KINDLING_BESIDE_WEBGPU).
set -euo pipefail
cd "$(dirname "$0")/.."

for part in ${*:-lanes clippy fuzz wasi}; do
  case $part in
    lanes)
      echo "== the CPU kernels' portable lanes (aarch64's and SIMD-less wasm's), natively"
      KINDLING_EXPECT_LANES=portable cargo test -p kindling-cpu --lib --features portable-lanes --locked ;;
    clippy)
      echo "== lints (cargo clippy, every target, warnings are errors)"
      # The harness feature: the GPU test bench's diagnostics.rs, left out of the package's wasm.
      cargo clippy --workspace --all-targets --features kindling-web/harness --locked -- -D warnings ;;
    fuzz)
      echo "== fuzzing the header parser and chat templates (scripts/fuzz.sh: ${KINDLING_FUZZ_SECONDS:-15} s a target; built with plain cargo)"
      bash scripts/fuzz.sh ;;
    wasi)
      echo "== the CPU kernels as WebAssembly with SIMD128, under Node"
      bash scripts/test_wasi.sh ;;
    *) echo "unknown check '$part' (lanes|clippy|fuzz|wasi)" >&2; exit 2 ;;
  esac
done
