# The final build (771923b) on the Xeon: one thread's kernel speed before (a5ec18d) and after;
# a5ec18d against this build taking turns, 2 rounds; then this build beside llama.cpp's CPU
# code at 8 threads (3 rounds) and 16 (2 rounds). From the repo root with .gl .bench .llama carried.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
for b in speed-old speed-new; do
  echo "== $b" >> $R/kernel-speed.txt
  taskset -c 0 .bench/$b kernel_speed --ignored --nocapture 2>&1 | grep -E "^(Q|prep)" | grep -v prefetch >> $R/kernel-speed.txt
done
xz -dc .bench/kindling-a5e.xz > .bench/kindling-a5e; chmod +x .bench/kindling-a5e
export VK_DRIVER_FILES=/nonexistent.json
MODELS="qwen05 smollm2" source bench/device_setup.sh > /dev/null 2>&1
for r in 1 2; do for m in smollm2 qwen05; do for t in 8 16; do for p in 8 512; do for b in kindling-a5e kindling; do
  .bench/$b bench /tmp/$m.gguf --backend cpu --threads $t --prompt-tokens $p --gen-tokens 64 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.load(sys.stdin); print('r$r t$t $m p$p $b prefill %.0f decode %.1f' % (d['prefill_tok_s'], d['decode_tok_s']))" >> $R/ab.txt
done; done; done; done; done
for t in 8 16; do
  rounds=$([ $t = 8 ] && echo 3 || echo 2)
  OUT=/tmp/o/t$t BACKEND=cpu KINDLING_ARGS="--threads $t" SERVER_ARGS="-ngl 0 -t $t -tb $t" MODELS="qwen05 smollm2" ROUNDS=$rounds REPS=2 GEN=64 PROMPTS=8,512 bash bench/llama_server.sh > /tmp/o/ls$t.log 2>&1
  cp /tmp/o/t$t/table.md $R/table-t$t.md; cat /tmp/o/t$t/kindling.jsonl /tmp/o/t$t/llama.jsonl > $R/raw-t$t.jsonl 2>/dev/null
done
