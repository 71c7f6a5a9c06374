# Device call 8 (session 35): the rule change end to end (tuning::wide_weight_pays: from 1,024
# rows, weights of 2 M values or more take dequantized panels too: the 1.5B's q and o).
# The npm package's wasm of main (019741a) against the change, through Dawn: the prefill's GPU
# time kernel by kernel (TRACE_GPU=1, 4,096 tokens; main, new, new, main), then in one process
# (bench/dawn_ab.mjs: A main, B new, three ABBA rounds, prompts of 512 (the check: one
# 512-row batch, nothing changes), 2,048 and 4,096 tokens). The 0.5B's q/o (896 × 896) stay
# as they were: its rows are the second check. Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o8; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for n in head new; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab39/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in head new new head; do
    TRACE_GPU=1 PROMPTS=4096 REPS=1 GEN_TOKENS=4 TRACE_STEPS=2 timeout 120 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call8-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call8-trace.jsonl
  done
done
python3 bench/results/attention-probes-h200/prefill_trace.py < $R/call8-trace.jsonl | tee $R/call8-trace.txt
for m in $MODELS; do
  PROMPTS="512 2048 4096" REPS=3 timeout 200 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-new \
    $m=/tmp/$m.gguf 2>> $R/call8-dawn-stderr.txt | tee -a $R/call8-dawn_ab.jsonl > /dev/null
done
python3 - $R/call8-dawn_ab.jsonl <<'PY' | tee $R/call8-dawn_ab.md
import json, sys
print("| model | prompt | main: prefill | new: prefill | new / main (median of rounds) | main: decode | new: decode |")
print("|---|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} |")
PY
tail -3 $R/call8-dawn-stderr.txt
