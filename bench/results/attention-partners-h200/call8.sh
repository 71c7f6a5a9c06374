# Device call 8: the final build with its default f32 KV cache against the same build with
# --kv-f16 (half the bytes the attention stages; the cooperative-matrix attention rounds
# keys and values to f16 anyway), prefill and decode at 512 and 4,096 tokens on both Qwen
# shapes. `kindling-kvf16` is a wrapper adding the flag. Carried: .ab1, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab1/gguf_stub.py .ab1/*.hdr.json .bench/
for m in qwen15 qwen05; do xz -dc .ab1/$m.hdr.xz > .bench/$m.hdr; done
xz -dc .ab1/kindling-v3.xz > .bench/kindling; chmod +x .bench/kindling
printf '#!/bin/sh\nexec "$(dirname "$0")/kindling" "$@" --kv-f16\n' > .bench/kindling-kvf16; chmod +x .bench/kindling-kvf16
OUT=/tmp/o1 BINS="kindling kindling-kvf16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call8-ab.md; cp /tmp/o1/ab.jsonl $R/call8-ab.jsonl; cat $R/call8-ab.md; cat /tmp/o1/errors.txt 2>/dev/null | grep -v XDG | head
