# Device call 5 (session 36): attention_tiled's weighted sum by row quads (each
# invocation four rows × two vec4s of head_dim, a quad's four weights loaded as one vec4:
# three loads for 32 products where the rows-by-halves layout took six) against 15cd187's
# kernel. Natively per op (op_timing builds of both, NO_COOP=1 DEVICE=1: the browser's
# kernels through naga; rows of 512 and 2,048 at several first positions; two rounds in
# turns). Through Dawn: each prefill's GPU time kernel by kernel (TRACE_GPU=1, prompts of
# 512 and 4,096 tokens; builds head, new, new, head), then in one process
# (bench/dawn_ab.mjs, three ABBA rounds, 512, 2,048 and 4,096 tokens), both Qwen models.
# Carried: .ab40, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o5; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab40/gguf_stub.py .ab40/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab40/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in head new; do xz -dc .ab40/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
for round in 1 2; do
  for b in head new; do
    echo "== $b, round $round"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 1536 3584" timeout 100 /tmp/op_timing-$b 512 2>&1 | grep -E "attention"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 2048" timeout 100 /tmp/op_timing-$b 2048 2>&1 | grep -E "attention"
  done
done > $R/call5-op_timing.txt 2>&1
cat $R/call5-op_timing.txt
for n in head new; do
  f=final; [ $n = new ] && f=attn
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab40/web-$f.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in head new new head; do
    TRACE_GPU=1 PROMPTS="512 4096" REPS=1 GEN_TOKENS=4 TRACE_STEPS=2 timeout 150 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call5-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call5-trace.jsonl
  done
done
python3 bench/results/attention-probes-h200/prefill_trace.py < $R/call5-trace.jsonl > $R/call5-trace.txt
grep -E "GPU total|AttentionTiled" $R/call5-trace.txt
for m in $MODELS; do
  PROMPTS="512 2048 4096" REPS=3 timeout 200 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-new \
    $m=/tmp/$m.gguf 2>> $R/call5-dawn-stderr.txt | tee -a $R/call5-dawn_ab.jsonl > /dev/null
done
python3 - $R/call5-dawn_ab.jsonl <<'PY' | tee $R/call5-dawn_ab.md
import json, sys
print("| model | prompt | head: prefill | new: prefill | new / head (median of rounds) | head: decode | new: decode |")
print("|---|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} |")
PY
rm -f $R/call5-dawn-stderr.txt.keep
