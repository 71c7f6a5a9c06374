# Device call 1 (session 34): attention_tiled (the browser's prefill attention) with tiles
# of 32 positions against 16. Per op natively with the browser's kernels (op_timing,
# NO_COOP=1, DEVICE=1: timestamp queries; NARROW_ATTN=1 keeps tiles of 16), rows of 512 and
# 2,048 at several first positions, two rounds; then end to end through Dawn, the same
# source built twice (A: tiles of 16 by default, B: 32), in one process
# (bench/dawn_ab.mjs), prompts of 512, 2,048 and 4,096 tokens, three ABBA rounds, both
# Qwen shapes. Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab39/op_timing.xz > /tmp/op_timing; chmod +x /tmp/op_timing
for round in 1 2; do
  for tiles in 16 32; do
    narrow=""; [ $tiles = 16 ] && narrow=1
    echo "== tiles of $tiles, round $round"
    NARROW_ATTN=$narrow NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 1536 3584" timeout 100 /tmp/op_timing 512 2>&1 | grep -E "attention|variants"
    NARROW_ATTN=$narrow NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 2048" timeout 100 /tmp/op_timing 2048 2>&1 | grep "attention"
  done
done > $R/call1-op_timing.txt 2>&1
timeout 60 bash .dawn/run.sh .dawn bench/results/attention-tiles-h200/limits.mjs > $R/call1-dawn-limits.txt 2>&1
for n in narrow new; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab39/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  PROMPTS="512 2048 4096" REPS=3 timeout 150 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-narrow /tmp/pkg-new \
    $m=/tmp/$m.gguf 2>> $R/dawn-stderr.txt | tee -a $R/call1-dawn_ab.jsonl > /dev/null
done
python3 - $R/call1-dawn_ab.jsonl <<'PY' | tee $R/call1-dawn_ab.md
import json, sys
print("| model | prompt | tiles of 16: prefill | 32: prefill | 32 / 16 (median of rounds) | 16: decode | 32: decode |")
print("|---|---:|---:|---:|---:|---:|---:|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} | {r['A']['decode_tok_s']:.0f} | {r['B']['decode_tok_s']:.0f} |")
PY
tail -3 $R/dawn-stderr.txt
cat $R/call1-op_timing.txt
