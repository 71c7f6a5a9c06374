# Device call 2 (session 36): (a) matmul_wide alone under Dawn over more spans, for a
# span rule at long-prompt batches: the 1.5B's q/o and down over 1,024 rows, the 0.5B's
# down (896 × 4,864) and gate over 2,048 and 1,024, its gate and up together (9,728 rows).
# (b) The npm package's wasm end to end through Dawn: main (d8f6d04) against the gated
# f32 panel (gate and up as one matmul_wide with the activation, from 1,024 rows) and
# against that with SPLIT_K_WIDE's target at 768 (s768): each prefill's GPU time kernel
# by kernel (TRACE_GPU=1, 4,096 tokens), then main against new in one process
# (bench/dawn_ab.mjs, three ABBA rounds, prompts of 512 (the check: nothing changes
# there), 2,048 and 4,096 tokens). Carried: .ab40, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o2; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab40/gguf_stub.py .ab40/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab40/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
T=.ab40/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
W=.ab40/wide.wgsl
run() { bash .dawn/run.sh .dawn $T matmul_wide "$@" $W 2>&1 | grep -v "^$"; }
{
  for s in 2 3 4 6 8; do run 1024 1536 1536 $s; done
  for s in 4 6 8 11 12 16; do run 1024 1536 8960 $s; done
  for s in 4 6 7 8 10 12; do run 2048 896 4864 $s; done
  for s in 6 8 10 12 16; do run 1024 896 4864 $s; done
  for s in 1 2; do run 2048 4864 896 $s; done
  run 2048 9728 896 1
  for s in 1 2; do run 1024 4864 896 $s; done
  run 1024 9728 896 1
} | tee $R/call2-times.txt
for n in head new s768; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab40/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in head new s768 s768 new head; do
    TRACE_GPU=1 PROMPTS=4096 REPS=1 GEN_TOKENS=4 TRACE_STEPS=2 timeout 120 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call2-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call2-trace.jsonl
  done
done
python3 bench/results/attention-probes-h200/prefill_trace.py < $R/call2-trace.jsonl | tee $R/call2-trace.txt
for m in $MODELS; do
  PROMPTS="512 2048 4096" REPS=3 timeout 200 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-new \
    $m=/tmp/$m.gguf 2>> $R/call2-dawn-stderr.txt | tee -a $R/call2-dawn_ab.jsonl > /dev/null
done
python3 - $R/call2-dawn_ab.jsonl <<'PY' | tee $R/call2-dawn_ab.md
import json, sys
print("| model | prompt | main: prefill | new: prefill | new / main (median of rounds) | main: decode | new: decode |")
print("|---|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} |")
PY
tail -3 $R/call2-dawn-stderr.txt
