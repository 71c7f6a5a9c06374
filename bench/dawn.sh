#!/usr/bin/env bash
# The browser build against the native build on the lent GPU machine, in one run: the npm
# package's wasm through Dawn (Chrome's WebGPU library, Node binding) and `kindling bench`
# on wgpu/Vulkan, on the same noise-weight models. Run from the repo root there with these
# carried: .gl/ and .bench/ (as for bench/h100.sh), .dawn/ (../shared/dawn-node/prepare.sh
# .dawn) and .bench/web/ (the wasm: npm run build's www/wasm). Writes under $OUT.
# Results: $OUT/native.jsonl and $OUT/dawn.jsonl, one JSON line per run; stderr.txt.
# ROUNDS (default 2): native and Dawn alternate, so drift on the machine hits both.
set -u
source bench/device_setup.sh
pkg=/tmp/kindling-pkg
mkdir -p "$pkg/wasm"
cp www/index.js www/errors.js www/source.js "$pkg/"
cp .bench/web/* "$pkg/wasm/"
for round in $(seq "${ROUNDS:-2}"); do
  for m in smollm2 gemma3; do
    for pt in 8 512; do
      echo "== native $m p$pt round $round"
      timeout 120 .bench/kindling bench /tmp/$m.gguf --backend gpu --prompt-tokens $pt --gen-tokens 128 --json \
        2>> "$OUT/stderr.txt" | tee -a "$OUT/native.jsonl"
    done
  done
  echo "== dawn round $round"
  timeout 300 bash .dawn/run.sh .dawn bench/dawn.mjs "$pkg" smollm2=/tmp/smollm2.gguf gemma3=/tmp/gemma3.gguf \
    2>> "$OUT/stderr.txt" | tee -a "$OUT/dawn.jsonl"
done
