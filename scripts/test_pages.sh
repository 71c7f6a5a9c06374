#!/usr/bin/env bash
# The pages people open, tested as they use them (tests/pages/): the package's types
# against its JavaScript (tsc), the packed package in a fresh app (built by Vite and by
# webpack, served, generating in headless Chromium), and the example pages — the GPU test bench, the
# chat demo and the semantic-search demo — driven by Playwright with the system Chromium, with WebGPU (SwiftShader)
# and without, and the CPU path on threads (tests/pages/threads.test.mjs). Screenshots:
# tests/pages/artifacts/. Installs what it needs once (apt chromium; the pinned npm
# devDependencies from package-lock.json; the models; the nightly toolchain the threaded
# build needs, through scripts/build_threads.sh).
#
#   scripts/test_pages.sh                  # everything
#   KINDLING_PAGES_RUNS="types" scripts/test_pages.sh   # or: bundle, threads, on, off (any of them)
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1; }

if ! need chromium; then
  echo "== installing chromium"
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium
fi
# The dev tools at the versions package-lock.json pins (npm ci only when one is missing).
for pkg in typescript vite webpack playwright-core axe-core openai; do
  [ -f "node_modules/$pkg/package.json" ] || { echo "== npm ci"; npm ci --no-audit --no-fund --loglevel=error; break; }
done
# SmolLM2 (and Qwen2.5-Coder-0.5B) for the chat and bench pages, nomic-embed for the search page.
for m in SmolLM2-135M-Instruct.Q4_1.gguf nomic-embed-text-v1.5.f16.gguf; do
  [ -f ".cache/models/$m" ] || { bash tests/scripts/fetch_models.sh; break; }
done
# KINDLING_PREBUILT=1: www/wasm is current (scripts/test_web.sh builds it once; the WebGPU
# browser suite may be reading it beside these pages).
if [ "${KINDLING_PREBUILT:-0}" = 1 ] && [ -f www/wasm/kindling_web_bg.wasm ]; then :; else
  echo "== npm run build (wasm-pack, release)"
  npm run --silent build
fi

# The threaded CPU build (www/wasm-threads/: a pinned nightly, its own target dir; quick
# when current), for the threads test and the packed package.
echo "== npm run build:threads (the threaded CPU build)"
npm run --silent build:threads

# The GPU test bench's own wasm: the engine with its kernel checks (the `harness` feature).
echo "== npm run build:harness (the test bench's wasm)"
npm run --silent build:harness

timed() {
  local start=$SECONDS
  "$@"
  echo "== $((SECONDS - start)) s: $*"
}
for run in ${KINDLING_PAGES_RUNS:-types bundle threads on off}; do
  case $run in
    types) echo "== the package's types against its JavaScript"; timed node tests/pages/types/check.mjs ;;
    bundle) echo "== the packed package in a fresh app, built by Vite and by webpack"; timed node tests/pages/bundle/test.mjs ;;
    threads) echo "== the CPU on threads: the threaded build in a worker of an isolated page, and its fallbacks"; timed node tests/pages/threads.test.mjs ;;
    on | off) timed node tests/pages/pages.test.mjs "$run" ;;
    *) echo "unknown run '$run' (types|bundle|threads|on|off)" >&2; exit 2 ;;
  esac
done
