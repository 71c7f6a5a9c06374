# Device call 3 (session 31): issue 29's native floors, the final build beside llama.cpp's
# Vulkan server in one run (bench/llama_server.sh, the 1.5B, prompts of 8, 512, 2,048 and
# 4,096 tokens, two rounds of two). BUILD names the binary in .ab31. Carried: .ab31, .gl, .llama.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab31/$m.hdr.xz > .bench/$m.hdr; done
xz -dc .ab31/kindling-${BUILD:-order}.xz > .bench/kindling; chmod +x .bench/kindling
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
MODELS=qwen15 ROUNDS=2 REPS=2 GEN=128 PROMPTS=8,512,2048,4096 bash bench/llama_server.sh > $OUT/ls.log 2>&1
cp $OUT/table.md $R/llama-table.md; cat $OUT/kindling.jsonl $OUT/llama.jsonl > $R/llama-raw.jsonl 2>/dev/null
tail -5 $OUT/ls.log > $R/llama-tail.txt
cat $R/llama-table.md
