# Device call 1 (session 34): decode's hot loops written with a constant bound and a break
# (prelude's LOOP_CAP), so Tint gives them no iteration counter. main (9430c3e) against
# the new build: per kernel through Dawn (bench/dawn.mjs TRACE_GPU=1: a 512-token prompt,
# 8 decode tokens timed kernel by kernel), in the order main, new, new, main per model;
# end to end through Dawn in one process (bench/dawn_ab.mjs, A main, B new, prompts of 8,
# 512 and 4,096 tokens, three ABBA rounds); natively (bench/ab.sh, two rounds, where wgpu
# adds no counters: the check that nothing else moved). Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
for n in head new; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab39/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in head new new head; do
    echo "== $m, $b"
    TRACE_GPU=1 PROMPTS=512 REPS=1 GEN_TOKENS=8 TRACE_STEPS=8 timeout 150 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call1-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" | tee -a $R/call1-trace.jsonl | python3 bench/results/attention-tiles-h200/decode_trace.py
  done
done > $R/call1-trace.txt 2>&1
for m in $MODELS; do
  PROMPTS="8 512 4096" REPS=3 timeout 170 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-new \
    $m=/tmp/$m.gguf 2>> $R/call1-dawn-stderr.txt | tee -a $R/call1-dawn_ab.jsonl > /dev/null
done
python3 - $R/call1-dawn_ab.jsonl <<'PY' | tee $R/call1-dawn_ab.md
import json, sys
print("| model | prompt | main: decode | new: decode | new / main decode (median of rounds) | main: prefill | new: prefill | new / main prefill |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} | {r['decode_ratio_b_over_a']:.3f} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} |")
PY
xz -dc .ab39/kindling.xz > .bench/kindling; xz -dc .ab39/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" PROMPTS="8 512" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call1-native-ab.md; cp /tmp/o1/ab.jsonl $R/call1-native-ab.jsonl
cat $R/call1-native-ab.md
tail -3 $R/call1-dawn-stderr.txt
cat $R/call1-trace.txt | grep -E "==|total|Gated|AttentionRope|Q6K"
