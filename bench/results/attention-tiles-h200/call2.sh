# Device call 2 (session 34): attention_tiled with each tile's loads issued a phase ahead
# (fetched into registers, stored into workgroup memory after the next barrier: the
# values' loads during the scores, the next keys' during the weighted sum) against main's
# (loaded right before a barrier). Per op natively with the browser's kernels (two
# op_timing builds, NO_COOP=1, DEVICE=1), rows of 512 and 2,048 at several first
# positions, two rounds; then end to end through Dawn (bench/dawn_ab.mjs: A main, B new,
# one process), prompts of 512, 2,048 and 4,096 tokens, three ABBA rounds, both Qwen
# shapes. Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
for b in head new; do xz -dc .ab39/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
for round in 1 2; do
  for b in head new; do
    echo "== $b, round $round"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 1536 3584" timeout 100 /tmp/op_timing-$b 512 2>&1 | grep "attention"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 2048" timeout 100 /tmp/op_timing-$b 2048 2>&1 | grep "attention"
  done
done > $R/call2-op_timing.txt 2>&1
for n in head new; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab39/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  PROMPTS="512 2048 4096" REPS=3 timeout 150 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-head /tmp/pkg-new \
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
cat $R/call2-op_timing.txt
