# Device call 3 (session 34): what a browser's safety work costs decode. Natively
# (bench/ab.sh): the default build, the browser's kernels (--no-subgroups --no-f16
# --merge-splits) and those with wgpu's run-time checks kept (--checked-shaders), prompts
# of 8 and 512, two rounds. Through Dawn (main's wasm, bench/dawn.mjs, decode after 8 and
# 512 tokens, two reps): Dawn's toggles none, disable_robustness (Tint's index clamps),
# disable_workgroup_init, both, none again; then one decode token per kernel (TRACE_GPU=1)
# without and with disable_robustness. Qwen 1.5B and 0.5B shapes. Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
xz -dc .ab39/kindling.xz > .bench/kindling; chmod +x .bench/kindling
printf '#!/bin/sh\nexec "$(dirname "$0")/kindling" "$@" --no-subgroups --no-f16 --merge-splits\n' > .bench/kindling-browser
printf '#!/bin/sh\nexec "$(dirname "$0")/kindling" "$@" --no-subgroups --no-f16 --merge-splits --checked-shaders\n' > .bench/kindling-browser-checked
chmod +x .bench/kindling-browser .bench/kindling-browser-checked
OUT=/tmp/o1 BINS="kindling kindling-browser kindling-browser-checked" PROMPTS="8 512" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call3-native-ab.md; cp /tmp/o1/ab.jsonl $R/call3-native-ab.jsonl; cp $OUT/gpu.txt $R/ 2>/dev/null || cp /tmp/o1/gpu.txt $R/
cat $R/call3-native-ab.md
pkg=/tmp/pkg-head; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"; tar -xJf .ab39/web-head.tar.xz -C "$pkg/wasm"
for t in none disable_robustness disable_workgroup_init disable_robustness,disable_workgroup_init none; do
  tog=$t; [ "$t" = none ] && tog=
  DAWN_TOGGLES=$tog PROMPTS="8 512" REPS=2 timeout 150 bash .dawn/run.sh .dawn bench/dawn.mjs $pkg \
    qwen15=/tmp/qwen15.gguf qwen05=/tmp/qwen05.gguf 2>> $R/call3-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"toggles\":\"$t\",/" >> $R/call3-dawn-toggles.jsonl
done
python3 - $R/call3-dawn-toggles.jsonl <<'PY' | tee $R/call3-dawn-toggles.md
import json, sys
print("| Dawn toggles | model | decode after 8 | after 512 | prefill 512 |")
print("|---|---|---:|---:|---:|")
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(f"| {r['toggles']} | {r['model']} | {r['p8']['decode_tok_s']:.0f} | {r['p512']['decode_tok_s']:.0f} | {r['p512']['prefill_tok_s']:.0f} |")
PY
for t in none disable_robustness; do
  tog=$t; [ "$t" = none ] && tog=
  echo "== toggles: $t"
  DAWN_TOGGLES=$tog TRACE_GPU=1 PROMPTS=512 REPS=1 GEN_TOKENS=8 TRACE_STEPS=8 timeout 150 bash .dawn/run.sh .dawn bench/dawn.mjs $pkg \
    qwen15=/tmp/qwen15.gguf 2>> $R/call3-dawn-stderr.txt | grep '"model"' | tee -a $R/call3-trace.jsonl | python3 bench/results/attention-tiles-h200/decode_trace.py
done | tee $R/call3-trace.txt
tail -3 $R/call3-dawn-stderr.txt
