# Device call 1 (session 33): the KV cache in f16 (`kindling --kv-f16`; the npm package's
# new `kvCacheType: 'f16'`) against f32, on the 1.5B. Natively bench/ab.sh, the build with
# and without --kv-f16, after 512 and 4,096 tokens, two rounds; through Dawn the same wasm
# twice in one process (bench/dawn_ab.mjs, B loaded with kvCacheType 'f16'), prompts of 8,
# 512 and 4,096 tokens, four rounds of ABBA; then the floors with both settings:
# bench/dawn.sh (native and Dawn alternating) and llama.cpp's Vulkan server beside kindling
# (bench/llama_server.sh, f32 then --kv-f16; llama.cpp keeps f16 keys and values by default).
# Carried: .ab36, .gl, .dawn, .llama.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab36/gguf_stub.py .ab36/qwen15.hdr.json .bench/
xz -dc .ab36/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
xz -dc .ab36/kindling.xz > .bench/kindling; chmod +x .bench/kindling
printf '#!/bin/sh\nexec "$(dirname "$0")/kindling" "$@" --kv-f16\n' > .bench/kindling-kvf16; chmod +x .bench/kindling-kvf16
OUT=/tmp/o1 BINS="kindling kindling-kvf16" PROMPTS="512 4096" ROUNDS=2 timeout 150 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl; cat $R/ab.md
for side in a b; do
  pkg=/tmp/pkg-$side; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab36/web.tar.xz -C "$pkg/wasm"
done
LOAD_B='{"kvCacheType":"f16"}' PROMPTS="8 512 4096" REPS=4 timeout 200 bash .dawn/run.sh .dawn bench/dawn_ab.mjs /tmp/pkg-a /tmp/pkg-b \
  qwen15=/tmp/qwen15.gguf 2>> $R/dawn-stderr.txt | tee -a $R/dawn_ab.jsonl > /dev/null
python3 - $R/dawn_ab.jsonl <<'PY' | tee $R/dawn_ab.md
import json, sys
print("| model | prompt | f32 decode | f16 decode | f16 / f32 decode (median of rounds) | f32 prefill | f16 prefill | f16 / f32 prefill | decode rounds |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    r = json.loads(l)
    print(f"| {r['model']} | {r['prompt']} | {r['A']['decode_tok_s']:.1f} | {r['B']['decode_tok_s']:.1f} | {r['decode_ratio_b_over_a']:.3f} | "
          f"{r['A']['prefill_tok_s']:.0f} | {r['B']['prefill_tok_s']:.0f} | {r['prefill_ratio_b_over_a']:.3f} | {' '.join(f'{x:.2f}' for x in r['ratios'])} |")
PY
tail -3 $R/dawn-stderr.txt
# The floors: llama.cpp beside kindling with each KV type, one round of two each.
for kv in f32 f16; do
  args=; [ $kv = f16 ] && args=--kv-f16
  OUT=/tmp/ls-$kv KINDLING_ARGS="$args" ROUNDS=1 REPS=2 GEN=128 PROMPTS=8,512,4096 timeout 200 bash bench/llama_server.sh > /tmp/ls-$kv.log 2>&1
  cp /tmp/ls-$kv/table.md $R/llama-$kv-table.md; cat /tmp/ls-$kv/kindling.jsonl /tmp/ls-$kv/llama.jsonl > $R/llama-$kv-raw.jsonl 2>/dev/null
  echo "== kindling $kv beside llama.cpp"; cat $R/llama-$kv-table.md; tail -2 /tmp/ls-$kv.log
done
