# Issue 30's Xeon floors, a second call on the final build (814b501): beside llama.cpp's CPU code,
# 8 threads over 3 rounds, 16 over 2. From the repo root with .gl .bench .llama carried.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export VK_DRIVER_FILES=/nonexistent.json
lscpu | grep -E "Model name|^CPU\(s\)|Thread|NUMA node\(s\)|L3" > $R/cpu.txt
for t in 8 16; do
  rounds=$([ $t = 8 ] && echo 3 || echo 2)
  OUT=/tmp/o/t$t BACKEND=cpu KINDLING_ARGS="--threads $t" SERVER_ARGS="-ngl 0 -t $t -tb $t" MODELS="qwen05 smollm2" ROUNDS=$rounds REPS=2 GEN=64 PROMPTS=8,512 bash bench/llama_server.sh > /tmp/o/ls$t.log 2>&1
  cp /tmp/o/t$t/table.md $R/table-t$t.md; cat /tmp/o/t$t/kindling.jsonl /tmp/o/t$t/llama.jsonl > $R/raw-t$t.jsonl 2>/dev/null
done
