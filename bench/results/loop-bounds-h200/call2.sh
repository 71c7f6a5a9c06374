# Device call 2 (session 34): the final build, with the prefill's loops (attention_tiled's,
# the integer-dot batch matmul's) bounded for Tint too, against main (9430c3e). Per op
# natively with the browser's kernels (op_timing NO_COOP=1 DEVICE=1: prefill attention and
# the matmuls, two builds); per kernel through Dawn (TRACE_GPU=1: a 512-token prefill and 8
# decode tokens, main then new, the 1.5B); prefill and decode through Dawn in one process
# (bench/dawn_ab.mjs, prompts of 512 and 4,096 tokens, three ABBA rounds); natively
# (bench/ab.sh, prompts of 8, 512 and 4,096, two rounds). Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
for b in head new; do xz -dc .ab39/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
for b in head new; do
  echo "== $b"
  NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 3584" timeout 100 /tmp/op_timing-$b 512 2>&1 | grep -E "prefill"
  NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 2048" timeout 100 /tmp/op_timing-$b 2048 2>&1 | grep "attention"
done > $R/call2-op_timing.txt 2>&1
for n in head new; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab39/web-$n.tar.xz -C "$pkg/wasm"
done
for b in head new; do
  TRACE_GPU=1 PROMPTS=512 REPS=1 GEN_TOKENS=8 TRACE_STEPS=8 timeout 150 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
    qwen15=/tmp/qwen15.gguf 2>> $R/call2-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call2-trace.jsonl
done
for m in $MODELS; do
  PROMPTS="512 4096" REPS=3 timeout 170 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-new \
    $m=/tmp/$m.gguf 2>> $R/call2-dawn-stderr.txt | tee -a $R/call2-dawn_ab.jsonl > /dev/null
done
python3 - $R/call2-dawn_ab.jsonl <<'PY' | tee $R/call2-dawn_ab.md
import json, sys
print("| model | prompt | main: decode | new: decode | new / main decode (median of rounds) | main: prefill | new: prefill | new / main prefill |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} | {r['decode_ratio_b_over_a']:.3f} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} |")
PY
xz -dc .ab39/kindling.xz > .bench/kindling; xz -dc .ab39/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" PROMPTS="8 512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call2-native-ab.md; cp /tmp/o1/ab.jsonl $R/call2-native-ab.jsonl
cat $R/call2-native-ab.md
tail -3 $R/call2-dawn-stderr.txt
cat $R/call2-op_timing.txt
