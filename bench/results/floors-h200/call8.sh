# Device call 8 (session 36): the floors' llama.cpp half (as floors-h200/call9.sh
# PART=llama), on the machine call 7 left warm: llama.cpp's Vulkan server beside
# `kindling bench` (the session's last CLI) on the 1.5B (bench/llama_server.sh, two rounds of two,
# after 8, 512 and 4,096 tokens). Carried: .ab40 (the 1.5B header, the last CLI
# stripped), .gl, .llama.
set -u
R=$OUT; export OUT=/tmp/o8; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab40/gguf_stub.py .ab40/qwen15.hdr.json .bench/
xz -dc .ab40/qwen15.hdr.xz > .bench/qwen15.hdr
xz -dc .ab40/kindling.xz > .bench/kindling; chmod +x .bench/kindling
ROUNDS=2 REPS=2 GEN=128 PROMPTS=8,512,4096 timeout 250 bash bench/llama_server.sh > $OUT/ls.log 2>&1
cp $OUT/table.md $R/call8-llama-table.md; cat $OUT/kindling.jsonl $OUT/llama.jsonl > $R/call8-llama-raw.jsonl 2>/dev/null
tail -5 $OUT/ls.log > $R/call8-llama-tail.txt
cat $R/call8-llama-table.md
