# Device call 3 (session 32): the final build (6b9a790: the merge as a browser-default
# option, merged in one pass). Its kernel tests on the H200; natively bench/ab.sh, the
# build with and without --merge-splits (the browser's setting), both Qwen shapes after
# 512 and 4,096 tokens, two rounds; then through Dawn, main's wasm (0effecf, A) against
# the final one (B) in one process (bench/dawn_ab.mjs), both Qwen shapes, prompts of 8
# (no splits: the method's check), 512 and 4,096 tokens, six rounds of ABBA.
# Carried: .ab33, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab33/gguf_stub.py .ab33/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab33/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
xz -dc .ab33/kindling.xz > .bench/kindling; chmod +x .bench/kindling
printf '#!/bin/sh\nexec "$(dirname "$0")/kindling" "$@" --merge-splits\n' > .bench/kindling-merge; chmod +x .bench/kindling-merge
xz -dc .ab33/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 200 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result\|panicked" $R/gpu_kernels.txt
OUT=/tmp/o1 BINS="kindling kindling-merge" PROMPTS="512 4096" ROUNDS=2 timeout 200 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl; cat $R/ab.md
for side in old new; do
  pkg=/tmp/pkg-$side; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf ".ab33/web-$side.tar.xz" -C "$pkg/wasm"
done
for m in qwen15 qwen05; do
  PROMPTS="8 512 4096" REPS=6 timeout 150 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-old /tmp/pkg-new \
    $m=/tmp/$m.gguf 2>> $R/dawn-stderr.txt | tee -a $R/dawn_ab.jsonl > /dev/null
done
python3 - $R/dawn_ab.jsonl <<'PY' | tee $R/dawn_ab.md
import json, sys
print("| model | prompt | main decode (median) | new decode (median) | new / main (median of rounds) | rounds |")
print("|---|---:|---:|---:|---:|---|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['decode_tok_s']:.1f} | {r['B']['decode_tok_s']:.1f} | {r['decode_ratio_b_over_a']:.3f} | {' '.join(f'{x:.2f}' for x in r['ratios'])} |")
PY
tail -3 $R/dawn-stderr.txt
