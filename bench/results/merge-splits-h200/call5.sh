# Device call 5 (session 32): fewer decode splits where the o projection merges them. The
# merge's cost grows with the splits (each matvec workgroup merges them all); at 4,096
# positions the 1.5B's 12 heads take 22 (SPLIT_TARGET_GROUPS 256 workgroups aimed at).
# An experiment build of 6b9a790 reads that target from KX_SPLIT_TARGET (a knob only in
# this build): natively, the 1.5B and 0.5B after 512 and 4,096 tokens, without and with
# --merge-splits, at 256 and 128, one round; then through Dawn in one process (bench/dawn_ab.mjs)
# the final wasm (A) against one built with the target at 128 (B). Carried: .ab35, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab35/gguf_stub.py .ab35/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab35/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
xz -dc .ab35/kindling.xz > .bench/kindling; chmod +x .bench/kindling
printf '#!/bin/sh\nexec "$(dirname "$0")/kindling" "$@" --merge-splits\n' > .bench/kindling-merge; chmod +x .bench/kindling-merge
OUT=/tmp/o1 BINS="kindling kindling-merge kindling:KX_SPLIT_TARGET=128 kindling-merge:KX_SPLIT_TARGET=128" \
  PROMPTS="512 4096" ROUNDS=1 timeout 250 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl; cat $R/ab.md
for side in new t128; do
  pkg=/tmp/pkg-$side; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf ".ab35/web-$side.tar.xz" -C "$pkg/wasm"
done
for m in qwen15 qwen05; do
  PROMPTS="512 4096" REPS=6 timeout 100 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-new /tmp/pkg-t128 \
    $m=/tmp/$m.gguf 2>> $R/dawn-stderr.txt | tee -a $R/dawn_ab.jsonl > /dev/null
done
python3 - $R/dawn_ab.jsonl <<'PY' | tee $R/dawn_ab.md
import json, sys
print("| model | prompt | target 256 decode (median) | target 128 decode (median) | 128 / 256 (median of rounds) | rounds |")
print("|---|---:|---:|---:|---:|---|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['decode_tok_s']:.1f} | {r['B']['decode_tok_s']:.1f} | {r['decode_ratio_b_over_a']:.3f} | {' '.join(f'{x:.2f}' for x in r['ratios'])} |")
PY
tail -3 $R/dawn-stderr.txt
