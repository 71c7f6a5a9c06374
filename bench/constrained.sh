#!/usr/bin/env bash
# Constrained against free decoding on the lent GPU machine (issue 26), in one run: natively
# (`kindling bench --json-schema`, wgpu/Vulkan) and the npm package's wasm through Dawn
# (bench/dawn.mjs with SCHEMAS), for the schemas in bench/schemas/, on noise-weight models of
# the real shapes (bench/device_setup.sh). Run from the repo root there with these carried:
# .gl/, .dawn/ (../shared/dawn-node/prepare.sh .dawn), and in .bench/: gguf_stub.py, the
# headers (NAME.hdr), kindling.xz (the release CLI, stripped and xz-compressed: the carry limit)
# and web/ (the wasm: npm run build's www/wasm). Writes $OUT/native.jsonl, $OUT/dawn.jsonl.
# MODELS (default "qwen15"): the headers to run. GEN (default 256): most tokens a decode runs.
# NATIVE=0: the Dawn rows alone.
set -u
export MODELS=${MODELS:-qwen15}
GEN=${GEN:-256}
source bench/device_setup.sh
xz -dc .bench/kindling.xz > /tmp/kindling && chmod +x /tmp/kindling
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$OUT/gpu.txt" 2>&1
schemas="people company"
native() {
  [ "${NATIVE:-1}" = 1 ] || return 0
  for m in $MODELS; do
    for s in $schemas; do
      echo "== native $m $s"
      timeout 90 /tmp/kindling bench /tmp/$m.gguf --backend gpu --prompt-tokens 8 --gen-tokens "$GEN" --repeat 3 --json \
        --json-schema bench/schemas/$s.json --prompt "$(cat bench/schemas/$s.prompt.txt)" \
        2>> "$OUT/stderr.txt" | tee -a "$OUT/native.jsonl"
    done
  done
}
native
pkg=/tmp/kindling-pkg
mkdir -p "$pkg/wasm"
for f in www/*.js; do
  f=$(basename "$f")
  if [ -f .bench/web/$f ]; then cp .bench/web/$f "$pkg/"; else cp www/$f "$pkg/"; fi
done
if [ -f .bench/web/kindling_web_bg.wasm.xz ]; then xz -dc .bench/web/kindling_web_bg.wasm.xz > "$pkg/wasm/kindling_web_bg.wasm"; fi
cp .bench/web/*.wasm .bench/web/kindling_web.js "$pkg/wasm/" 2>/dev/null
specs=; for m in $MODELS; do specs="$specs $m=/tmp/$m.gguf"; done
echo "== dawn"
SCHEMAS="people=bench/schemas/people.json company=bench/schemas/company.json" PROMPTS=8 GEN_TOKENS=128 \
  CONSTRAINED_TOKENS="$GEN" timeout 300 bash .dawn/run.sh .dawn bench/dawn.mjs "$pkg" $specs \
  2>> "$OUT/stderr.txt" | tee -a "$OUT/dawn.jsonl"
# Native again: drift on the machine between the two.
native
