#!/usr/bin/env bash
# The browser build against the native build on the lent GPU machine, in one run: the npm
# package's wasm through Dawn (Chrome's WebGPU library, Node binding) and `kindling bench`
# on wgpu/Vulkan, on the same noise-weight models. Run from the repo root there with these
# carried: .gl/ and .bench/ (as for bench/h100.sh), .dawn/ (../shared/dawn-node/prepare.sh
# .dawn) and .bench/web/ (the wasm: npm run build's www/wasm). Writes under $OUT.
# Results: $OUT/native.jsonl and $OUT/dawn.jsonl, one JSON line per run; stderr.txt.
# ROUNDS (default 2): native and Dawn alternate, so drift on the machine hits both.
# MODELS (default "smollm2 gemma3"): the carried headers (.bench/NAME.hdr) to run.
# PROMPTS (default "8 512 2048 4096"): the prompt lengths, each with 128 greedy tokens after it.
# .bench/web/ may also hold the package's JS modules as built with its wasm; else www/'s
# are used.
set -u
export MODELS=${MODELS:-smollm2 gemma3}
export PROMPTS=${PROMPTS:-8 512 2048 4096}
source bench/device_setup.sh
pkg=/tmp/kindling-pkg
mkdir -p "$pkg/wasm"
# Every module of the package (index.js imports cache.js, download.js, ... in turn).
for f in www/*.js; do
  f=$(basename "$f")
  if [ -f .bench/web/$f ]; then cp .bench/web/$f "$pkg/"; else cp www/$f "$pkg/"; fi
done
cp .bench/web/*.wasm .bench/web/kindling_web.js "$pkg/wasm/"
specs=; for m in $MODELS; do specs="$specs $m=/tmp/$m.gguf"; done
for round in $(seq "${ROUNDS:-2}"); do
  for m in $MODELS; do
    for pt in $PROMPTS; do
      echo "== native $m p$pt round $round"
      timeout 120 .bench/kindling bench /tmp/$m.gguf --backend gpu --prompt-tokens $pt --gen-tokens 128 --json \
        2>> "$OUT/stderr.txt" | tee -a "$OUT/native.jsonl"
    done
  done
  echo "== dawn round $round"
  timeout 420 bash .dawn/run.sh .dawn bench/dawn.mjs "$pkg" $specs \
    2>> "$OUT/stderr.txt" | tee -a "$OUT/dawn.jsonl"
done
