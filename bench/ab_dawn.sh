#!/usr/bin/env bash
# A/B of two builds, native and in the browser, on the lent GPU machine in one call, from
# compressed builds carried in .ab/ (all of it fits the carry limit beside .dawn and .gl):
#   kindling-old.xz, kindling-new.xz   stripped release CLIs (xz)
#   op_timing-new.xz                   optional: per-op timing of the new build, run first
#                                      under each OP_VARIANTS entry (env assignments, ',' between)
#   web-old.tar.xz, web-new.tar.xz     kindling_web.js and kindling_web_bg.wasm of each build
#   NAME.hdr.xz, NAME.hdr.json, gguf_stub.py   the model headers (noise weights; timing only)
# Native: bench/ab.sh over BINS (default "kindling kindling-new"; entries may set variables,
# as bench/ab.sh says); then Dawn: the two wasm builds take
# turns for ROUNDS rounds (bench/dawn.mjs, the package's JS from www/). MODELS (default
# qwen15), PROMPTS (default "8 512 4096"), ROUNDS (default 2). Writes under $OUT.
set -u
export MODELS=${MODELS:-qwen15} PROMPTS=${PROMPTS:-8 512 4096} ROUNDS=${ROUNDS:-2}
mkdir -p .bench
cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc ".ab/$m.hdr.xz" > ".bench/$m.hdr"; done
for b in kindling-old kindling-new op_timing-new; do
  [ -f ".ab/$b.xz" ] && xz -dc ".ab/$b.xz" > ".bench/${b/-old/}" && chmod +x ".bench/${b/-old/}"
done
source bench/device_setup.sh
if [ -x .bench/op_timing-new ]; then
  for v in ${OP_VARIANTS:-NO_COOP=1}; do
    echo "== op_timing $v"
    env ${v//,/ } QWEN_ONLY=1 PREFILL_ONLY=1 DEVICE=1 timeout 120 .bench/op_timing-new 512 2>&1 | tee -a "$OUT/op_timing.txt"
  done
  mv .bench/op_timing-new .bench/op_timing-new.done   # bench/ab.sh would run it again
fi
BINS=${BINS:-kindling kindling-new} bash bench/ab.sh
specs=; for m in $MODELS; do specs="$specs $m=/tmp/$m.gguf"; done
for side in old new; do
  pkg=/tmp/pkg-$side
  mkdir -p "$pkg/wasm"
  cp www/*.js "$pkg/"
  tar -xJf ".ab/web-$side.tar.xz" -C "$pkg/wasm"
done
for round in $(seq "$ROUNDS"); do
  for side in old new; do
    echo "== dawn $side round $round"
    timeout 300 bash .dawn/run.sh .dawn bench/dawn.mjs "/tmp/pkg-$side" $specs 2>> "$OUT/stderr.txt" \
      | sed "s/^{/{\"build\":\"$side\",\"round\":$round,/" | tee -a "$OUT/dawn.jsonl"
  done
done
