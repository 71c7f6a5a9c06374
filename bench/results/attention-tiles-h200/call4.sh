# Device call 4 (session 34): call 3's per-kernel decode trace again, in turns: main's wasm
# through Dawn (bench/dawn.mjs TRACE_GPU=1: a 512-token prompt, then 8 decode tokens each
# timed kernel by kernel, every dispatch in a pass of its own), Dawn's robustness on
# (a browser's setting) and off (disable_robustness: no index clamps from Tint), in the
# order on, off, off, on for each Qwen shape (one process each). Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
pkg=/tmp/pkg-head; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"; tar -xJf .ab39/web-head.tar.xz -C "$pkg/wasm"
for m in $MODELS; do
  for t in none disable_robustness disable_robustness none; do
    tog=$t; [ "$t" = none ] && tog=
    echo "== $m, toggles: $t"
    DAWN_TOGGLES=$tog TRACE_GPU=1 PROMPTS=512 REPS=1 GEN_TOKENS=8 TRACE_STEPS=8 timeout 150 bash .dawn/run.sh .dawn bench/dawn.mjs $pkg \
      $m=/tmp/$m.gguf 2>> $R/call4-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"toggles\":\"$t\",/" | tee -a $R/call4-trace.jsonl | python3 bench/results/attention-tiles-h200/decode_trace.py
  done
done | tee $R/call4-trace.txt
tail -3 $R/call4-dawn-stderr.txt
