#!/usr/bin/env bash
# Constrained against free decoding on the lent GPU machine (issue 26), in one run: natively
# (`kindling bench --json-schema`, wgpu/Vulkan) and the npm package's wasm through Dawn
# (bench/dawn.mjs with SCHEMAS), for the schemas in bench/schemas/, on noise-weight models of
# the real shapes (bench/device_setup.sh). Run from the repo root there with these carried:
# .gl/, .dawn/ (../shared/dawn-node/prepare.sh .dawn), and in .bench/: gguf_stub.py, the
# headers (NAME.hdr), kindling.xz (the release CLI, stripped and xz-compressed: the carry limit)
# and web/ (the wasm: npm run build's www/wasm). Writes $OUT/native.jsonl, $OUT/dawn.jsonl.
# MODELS (default "qwen15"): the headers to run. GEN (default 256): most tokens a decode runs.
# NATIVE=0: the Dawn rows alone. STUB_DIR (default .bench): where the headers, gguf_stub.py,
# kindling.xz and web/ are.
# REAL="NAME=PATH ...": real GGUF files already on the machine, run after the noise ones.
# Noise weights write junk that fills every string to its maxLength, the costliest place
# for a mask; a real model's text is what an app gets (bench/results/constrained-decode-h200.md).
# They reach the machine in parts of under 64 MiB, one per call while it stays warm:
# `split -b 52M MODEL.gguf .parts/NAME.`, then `cat .parts/NAME.NN >> /tmp/q/NAME.gguf`
# with carry [".parts/NAME.NN"], and `sha256sum` at the end.
set -u
export MODELS=${MODELS:-qwen15}
GEN=${GEN:-256}
BENCH_DIR=${STUB_DIR:-.bench}
source bench/device_setup.sh
xz -dc $BENCH_DIR/kindling.xz > /tmp/kindling && chmod +x /tmp/kindling
# name=path of every model: the noise ones rebuilt above, then the real ones.
runs=; for m in $MODELS; do runs="$runs $m=/tmp/$m.gguf"; done
runs="$runs ${REAL:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$OUT/gpu.txt" 2>&1
schemas="people company"
native() {
  [ "${NATIVE:-1}" = 1 ] || return 0
  for run in $runs; do
    for s in $schemas; do
      echo "== native $run $s"
      timeout 90 /tmp/kindling bench "${run#*=}" --backend gpu --prompt-tokens 8 --gen-tokens "$GEN" --repeat 3 --json \
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
  if [ -f $BENCH_DIR/web/$f ]; then cp $BENCH_DIR/web/$f "$pkg/"; else cp www/$f "$pkg/"; fi
done
if [ -f $BENCH_DIR/web/kindling_web_bg.wasm.xz ]; then xz -dc $BENCH_DIR/web/kindling_web_bg.wasm.xz > "$pkg/wasm/kindling_web_bg.wasm"; fi
cp $BENCH_DIR/web/*.wasm $BENCH_DIR/web/kindling_web.js "$pkg/wasm/" 2>/dev/null
echo "== dawn"
SCHEMAS="people=bench/schemas/people.json company=bench/schemas/company.json" PROMPTS=8 GEN_TOKENS=128 \
  CONSTRAINED_TOKENS="$GEN" timeout 420 bash .dawn/run.sh .dawn bench/dawn.mjs "$pkg" $runs \
  2>> "$OUT/stderr.txt" | tee -a "$OUT/dawn.jsonl"
# Native again: drift on the machine between the two.
native
