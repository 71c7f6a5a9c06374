# Device call 2 (session 35): two smaller changes to main's attention_tiled.
#   E: the scores' products summed per component (pa0 += x * k0), the components once
#      after the loop, where dot() chained four dependent operations a product;
#   EF: E, and load_tile's position and vec4 by a shift and a mask where head_dim / 4 is
#      a power of two (an integer division and remainder per vec4 in main).
# The driver's statistics of each module (pipeline_stats, naga's SPIR-V); per op natively
# (op_timing NO_COOP=1 DEVICE=1; main's kernel is call 1's build with UNSTAGED_Q=1), two
# rounds in turns; through Dawn the prefill's GPU time kernel by kernel (TRACE_GPU=1, a
# 4,096-token prompt; builds in the order main, E, EF, EF, E, main); then end to end in
# one process (bench/dawn_ab.mjs: A main, B EF, three ABBA rounds). Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab39/pipeline_stats.xz > /tmp/pstats; chmod +x /tmp/pstats
for v in main E EF; do
  echo "== $v"; WGSL=.ab39/wgsl/$v.wgsl ENTRY=attention_tiled timeout 60 /tmp/pstats 2>&1 | tail -20
done > $R/call2-registers.txt 2>&1
cat $R/call2-registers.txt
for v in new E EF; do xz -dc .ab39/op_timing-$v.xz > /tmp/op_timing-$v; chmod +x /tmp/op_timing-$v; done
for round in 1 2; do
  for b in new E EF; do
    echo "== $b (new: main's kernel, UNSTAGED_Q=1), round $round"
    UNSTAGED_Q=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 3584" timeout 100 /tmp/op_timing-$b 512 2>&1 | grep -E "attention"
    UNSTAGED_Q=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 2048" timeout 100 /tmp/op_timing-$b 2048 2>&1 | grep -E "attention"
  done
done > $R/call2-op_timing.txt 2>&1
cat $R/call2-op_timing.txt
for n in head E EF; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab39/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in head E EF EF E head; do
    TRACE_GPU=1 PROMPTS=4096 REPS=1 GEN_TOKENS=4 TRACE_STEPS=2 timeout 120 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call2-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call2-trace.jsonl
  done
done
python3 bench/results/attention-probes-h200/prefill_trace.py < $R/call2-trace.jsonl | grep -E "total|Attention" | tee $R/call2-trace.txt
for m in $MODELS; do
  PROMPTS="512 4096" REPS=3 timeout 150 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-EF \
    $m=/tmp/$m.gguf 2>> $R/call2-dawn-stderr.txt | tee -a $R/call2-dawn_ab.jsonl > /dev/null
done
python3 - $R/call2-dawn_ab.jsonl <<'PY' | tee $R/call2-dawn_ab.md
import json, sys
print("| model | prompt | main: prefill | EF: prefill | EF / main (median of rounds) | main: decode | EF: decode |")
print("|---|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} |")
PY
tail -3 $R/call2-dawn-stderr.txt
