# Device call 1 (session 35): attention_tiled with the block's queries staged in workgroup
# memory (32-row blocks, 28 KB; STAGED_Q) against main's (64-row blocks, queries read from
# the batch per tile). Natively per op (one op_timing build, UNSTAGED_Q=1 for main's
# kernel, NO_COOP=1 DEVICE=1: the browser's kernels through naga), rows of 512 and 2,048 at
# several first positions, two rounds in turns. Through Dawn: the prefill's GPU time kernel
# by kernel (bench/dawn.mjs TRACE_GPU=1, a 4,096-token prompt; builds main, new, new, main),
# then end to end in one process (bench/dawn_ab.mjs: A main, B new, prompts of 512, 2,048
# and 4,096 tokens, three ABBA rounds) on the 1.5B. Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab39/op_timing-new.xz > /tmp/op_timing; chmod +x /tmp/op_timing
for round in 1 2; do
  for b in main new; do
    echo "== $b, round $round"
    u=; [ $b = main ] && u=1
    env ${u:+UNSTAGED_Q=1} NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 1536 3584" timeout 100 /tmp/op_timing 512 2>&1 | grep -E "attention|kernel variants"
    env ${u:+UNSTAGED_Q=1} NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 2048" timeout 100 /tmp/op_timing 2048 2>&1 | grep -E "attention"
  done
done > $R/call1-op_timing.txt 2>&1
cat $R/call1-op_timing.txt
for n in head new; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab39/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in head new new head; do
    TRACE_GPU=1 PROMPTS=4096 REPS=1 GEN_TOKENS=4 TRACE_STEPS=2 timeout 120 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call1-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call1-trace.jsonl
  done
done
python3 bench/results/attention-probes-h200/prefill_trace.py < $R/call1-trace.jsonl | tee $R/call1-trace.txt
PROMPTS="512 2048 4096" REPS=3 timeout 200 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-new \
  qwen15=/tmp/qwen15.gguf 2>> $R/call1-dawn-stderr.txt | tee -a $R/call1-dawn_ab.jsonl > /dev/null
python3 - $R/call1-dawn_ab.jsonl <<'PY' | tee $R/call1-dawn_ab.md
import json, sys
print("| model | prompt | main: prefill | new: prefill | new / main (median of rounds) | main: decode | new: decode |")
print("|---|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} |")
PY
tail -3 $R/call1-dawn-stderr.txt
