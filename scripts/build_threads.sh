#!/usr/bin/env bash
# The threaded WebAssembly build (npm run build:threads) into www/wasm-threads/: the CPU
# kernels on a rayon pool of Web Workers that share the engine's memory (www/threads.js
# starts it on cross-origin-isolated pages; the plain build in www/wasm/ serves the rest).
#
# Shared memory needs std rebuilt with atomics, which only a nightly toolchain does
# (-Z build-std): a pinned nightly with rust-src, installed here if missing. Its own
# target dir, so the plain build's artifacts are not rebuilt under other flags.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/wasm_tools.sh
NIGHTLY=${KINDLING_NIGHTLY:-nightly-2026-05-19}
installed() { rustup component list --toolchain "$NIGHTLY" --installed 2>/dev/null; }
if ! installed | grep -q '^rust-src'; then
  echo "== installing $NIGHTLY with rust-src (for -Z build-std)"
  rustup toolchain install "$NIGHTLY" --profile minimal --component rust-src
fi

# RUSTFLAGS replaces .cargo/config.toml's wasm flags, so they are repeated here (SIMD128,
# getrandom's backend). The linker makes the memory shared and imported (each pool
# worker instantiates the module on the same memory), exports the thread-local storage
# hooks wasm-bindgen's thread support calls, and lets the memory grow to wasm32's 4 GiB as
# the plain build's does (a shared memory declares its maximum up front).
link=(--shared-memory --import-memory --max-memory=4294967296
  --export=__wasm_init_tls --export=__tls_size --export=__tls_align --export=__tls_base)
RUSTFLAGS='-C target-feature=+atomics,+bulk-memory,+mutable-globals,+simd128 --cfg getrandom_backend="wasm_js"'
for a in "${link[@]}"; do RUSTFLAGS+=" -C link-arg=$a"; done
export RUSTFLAGS
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}/wasm-threads
# --mode force: wasm-pack would otherwise insist on the nightly's prebuilt wasm32 std,
# which the mirror lacks and build-std replaces.
# KINDLING_THREADS_NICE: the build's priority (scripts/test.sh runs it beside the native tests).
nice -n "${KINDLING_THREADS_NICE:-0}" rustup run "$NIGHTLY" wasm-pack build crates/web --target web --release --no-pack --mode force \
  --out-dir ../../www/wasm-threads --out-name kindling_web -- -Z build-std=panic_abort,std

# wasm-bindgen-rayon's worker script finds the engine's module as `import('../../..')`, a
# folder, which bundlers resolve through a package.json and browsers cannot: point it at
# the module file, which both resolve.
helpers=$(find www/wasm-threads/snippets -name workerHelpers.js)
[ "$(echo "$helpers" | wc -l)" = 1 ] && grep -q "import('../../..')" "$helpers" || {
  echo "error: wasm-bindgen-rayon's workerHelpers.js is not where or what this script expects: $helpers" >&2
  exit 1
}
sed -i "s#import('../../..')#import('../../../kindling_web.js')#" "$helpers"
echo '# npm ships this folder; the .gitignore beside keeps it out of git' > www/wasm-threads/.npmignore
