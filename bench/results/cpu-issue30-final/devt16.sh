# The final build (7a3722e) beside llama.cpp's CPU code at 16 Xeon threads, 2 rounds.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export VK_DRIVER_FILES=/nonexistent.json
OUT=/tmp/o/t16 BACKEND=cpu KINDLING_ARGS="--threads 16" SERVER_ARGS="-ngl 0 -t 16 -tb 16" MODELS="qwen05 smollm2" ROUNDS=2 REPS=2 GEN=64 PROMPTS=8,512 bash bench/llama_server.sh > /tmp/o/ls16.log 2>&1
cp /tmp/o/t16/table.md $R/table-t16-final.md; cat /tmp/o/t16/kindling.jsonl /tmp/o/t16/llama.jsonl > $R/raw-t16-final.jsonl 2>/dev/null
