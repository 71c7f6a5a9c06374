# Device call 3: where call 2's Dawn prefill lost 12% (6,766/7,071 -> 6,119/6,102 tok/s at
# 512 tokens) while native with the browser's kernels did not move: per-kernel device times
# natively (op_timing, NO_COOP=1, trusted and CHECKED=1), and per kernel under Dawn
# (bench/dawn.mjs TRACE_GPU=1: each dispatch of a 512-token prefill timed in its own pass),
# main (273f74d) against the tiled operands. Carried: .ab, .ab4, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
for b in old new; do xz -dc .ab4/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
for checked in "" 1; do
  for b in old new old new; do
    echo "== $b CHECKED=$checked"
    CHECKED=$checked PER_KERNEL=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 /tmp/op_timing-$b 512 2>&1 | grep -v "XDG\|ttention\|Argmax\|KvStore\|AttnCombine\|kernel variants\|Vulkan"
  done
done > $R/per-op.txt 2>&1
for side in old new; do
  pkg=/tmp/pkg-$side; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"; tar -xJf ".ab/web-$side.tar.xz" -C "$pkg/wasm"
done
for side in old new old new; do
  echo "== dawn trace $side"
  TRACE_GPU=1 PROMPTS=512 REPS=1 GEN_TOKENS=8 TRACE_STEPS=4 timeout 200 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$side qwen15=/tmp/qwen15.gguf 2>> $R/stderr.txt | tee -a $R/trace-$side.jsonl | head -c 300; echo
done
