set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
# Issue 29's native floors with this build (the coop attention's split constants of 647a7c8
# end to end): the 1.5B beside llama.cpp's Vulkan server, prompts of 512 and 4,096.
MODELS="qwen15" ROUNDS=2 REPS=2 GEN=128 PROMPTS=8,512,4096 bash bench/llama_server.sh > /tmp/o/ls.log 2>&1
cp /tmp/o/table.md $R/table.md; cat /tmp/o/kindling.jsonl /tmp/o/llama.jsonl > $R/raw.jsonl 2>/dev/null; cp /tmp/o/gpu.txt $R/ 2>/dev/null
tail -5 /tmp/o/ls.log > $R/tail.txt
