set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export VK_DRIVER_FILES=/nonexistent.json
for t in 8 16; do
  OUT=/tmp/o/t$t BACKEND=cpu KINDLING_ARGS="--threads $t" SERVER_ARGS="-ngl 0 -t $t -tb $t" MODELS="qwen05 smollm2" ROUNDS=2 REPS=2 GEN=64 PROMPTS=8,512 bash bench/llama_server.sh > /tmp/o/ls$t.log 2>&1
  cp /tmp/o/t$t/table.md $R/table-t$t.md; cat /tmp/o/t$t/kindling.jsonl /tmp/o/t$t/llama.jsonl > $R/raw-t$t.jsonl 2>/dev/null
done
