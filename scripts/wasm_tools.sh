#!/usr/bin/env bash
# The wasm build tools, installed once: the wasm32 target, wasm-pack and wasm-bindgen-cli
# at the version of the wasm-bindgen crate in Cargo.lock (they must match exactly).
# Run by scripts/test_browser.sh and scripts/build_threads.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
have() { command -v "$1" >/dev/null 2>&1; }
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
# Built as tools that run for seconds, at opt-level 1 without LTO or debug info rather than
# as full release builds: a fresh machine compiles both, and this takes about a third less
# of its time (docs/TESTING.md).
install=(env CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
  CARGO_PROFILE_RELEASE_DEBUG=0 cargo install)
have wasm-pack || "${install[@]}" wasm-pack --locked
# --locked fails on wasm-bindgen-cli's own lock file, hence none.
wb_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if ! have wasm-bindgen || [ "$(wasm-bindgen --version | awk '{print $2}')" != "$wb_version" ]; then
  "${install[@]}" wasm-bindgen-cli --version "$wb_version"
fi
