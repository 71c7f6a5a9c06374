# Device call 3 (session 36): the final build (the gated f32 panel from 1,024 rows, and
# matmul_wide's spans by tuning::wide_split_k) against main (d8f6d04), and issue 29's
# browser floors on the 1.5B with it.
# (a) matmul_wide alone under Dawn at spans the new rule picks where none was measured:
#     over 512 rows the 1.5B's down (48 tiles: 11 against 16) and the 0.5B's down (28:
#     9 against 16 and 8); over 1,024 the 1.5B's q/o (96: 5 against 6).
# (b) Each prefill's GPU time kernel by kernel through Dawn (TRACE_GPU=1, prompts of 512
#     and 4,096 tokens; main, final, final, main), both Qwen models.
# (c) Main against final in one process (bench/dawn_ab.mjs, three ABBA rounds, prompts of
#     512, 2,048 and 4,096 tokens).
# (d) The floors' Dawn half (as floors-h200/call9.sh PART=dawn): bench/dawn.sh, the
#     final wasm through Dawn beside `kindling bench` natively, two rounds, the 1.5B.
# Carried: .ab40 (headers, the final CLI stripped, both wasm builds), .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o3; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench/web; cp .ab40/gguf_stub.py .ab40/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab40/$m.hdr.xz > .bench/$m.hdr; done
xz -dc .ab40/kindling.xz > .bench/kindling; chmod +x .bench/kindling
tar -xJf .ab40/web-final.tar.xz -C .bench/web 2>/dev/null
source bench/device_setup.sh
T=.ab40/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
W=.ab40/wide.wgsl
run() { bash .dawn/run.sh .dawn $T matmul_wide "$@" $W 2>&1 | grep -v "^$"; }
{
  for s in 11 16; do run 512 1536 8960 $s; done
  for s in 8 9 16; do run 512 896 4864 $s; done
  for s in 5 6; do run 1024 1536 1536 $s; done
} | tee $R/call3-times.txt
for n in head final; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab40/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in head final final head; do
    TRACE_GPU=1 PROMPTS="512 4096" REPS=1 GEN_TOKENS=4 TRACE_STEPS=2 timeout 150 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call3-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call3-trace.jsonl
  done
done
python3 bench/results/attention-probes-h200/prefill_trace.py < $R/call3-trace.jsonl > $R/call3-trace.txt
grep "GPU total" $R/call3-trace.txt
for m in $MODELS; do
  PROMPTS="512 2048 4096" REPS=3 timeout 200 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-final \
    $m=/tmp/$m.gguf 2>> $R/call3-dawn-stderr.txt | tee -a $R/call3-dawn_ab.jsonl > /dev/null
done
python3 - $R/call3-dawn_ab.jsonl <<'PY' | tee $R/call3-dawn_ab.md
import json, sys
print("| model | prompt | main: prefill | final: prefill | final / main (median of rounds) | main: decode | final: decode |")
print("|---|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} |")
PY
export OUT=/tmp/o3f; mkdir -p $OUT; export MODELS=qwen15
PROMPTS="512 4096" ROUNDS=2 timeout 300 bash bench/dawn.sh > $OUT/dawn.log 2>&1
cp $OUT/native.jsonl $R/call3-native.jsonl; cp $OUT/dawn.jsonl $R/call3-dawn.jsonl; tail -3 $OUT/stderr.txt > $R/call3-dawn-stderr-tail.txt 2>/dev/null
python3 bench/results/floors-h200/dawn_table.py $R/call3-native.jsonl $R/call3-dawn.jsonl | tee $R/call3-dawn-table.md
