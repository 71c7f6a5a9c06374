# Issue 30 on the GPU machine's Xeon: the session's start (s20, 7033dc1) against this build
# (even bands in whole rounds for the threads), alternating; then this build beside llama.cpp's
# CPU code at 8 and 16 threads. From the repo root with .gl .bench .llama carried.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
xz -dc .bench/kindling-s20.xz > .bench/kindling-s20; chmod +x .bench/kindling-s20
export VK_DRIVER_FILES=/nonexistent.json
lscpu | grep -E "Model name|^CPU\(s\)|Thread|NUMA node\(s\)|L3" > $R/cpu.txt
MODELS="qwen05 smollm2" source bench/device_setup.sh > /dev/null 2>&1
ab() {
  for r in 1 2; do for m in smollm2 qwen05; do for t in 8 16; do for p in 8 512; do for b in kindling-s20 kindling; do
    .bench/$b bench /tmp/$m.gguf --backend cpu --threads $t --prompt-tokens $p --gen-tokens 64 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.load(sys.stdin); print('r$r t$t $m p$p $b prefill %.0f decode %.1f' % (d['prefill_tok_s'], d['decode_tok_s']))" >> $R/ab.txt
  done; done; done; done; done
}
ab
for t in 8 16; do
  OUT=/tmp/o/t$t BACKEND=cpu KINDLING_ARGS="--threads $t" SERVER_ARGS="-ngl 0 -t $t -tb $t" MODELS="qwen05 smollm2" ROUNDS=2 REPS=2 GEN=64 PROMPTS=8,512 bash bench/llama_server.sh > /tmp/o/ls$t.log 2>&1
  cp /tmp/o/t$t/table.md $R/table-t$t.md; cat /tmp/o/t$t/kindling.jsonl /tmp/o/t$t/llama.jsonl > $R/raw-t$t.jsonl 2>/dev/null
done
