# a5ec18d (the session start), e03c752 (a slot a thread in the pool) and 25f2324 (a pair of
# 32-value groups a kernel step), taking turns on the Xeon over 2 rounds; then 25f2324
# beside llama.cpp's CPU code at 8 threads (3 rounds) and 16 (2 rounds).
# From the repo root with .gl .bench .llama carried.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
for b in a5e e03; do xz -dc .bench/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
export VK_DRIVER_FILES=/nonexistent.json
MODELS="qwen05 smollm2" source bench/device_setup.sh > /dev/null 2>&1
for r in 1 2; do for m in smollm2 qwen05; do for t in 8 16; do for p in 8 512; do for b in kindling-a5e kindling-e03 kindling; do
  .bench/$b bench /tmp/$m.gguf --backend cpu --threads $t --prompt-tokens $p --gen-tokens 64 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.load(sys.stdin); print('r$r t$t $m p$p $b prefill %.0f decode %.1f' % (d['prefill_tok_s'], d['decode_tok_s']))" >> $R/ab.txt
done; done; done; done; done
for t in 8 16; do
  rounds=$([ $t = 8 ] && echo 3 || echo 2)
  OUT=/tmp/o/t$t BACKEND=cpu KINDLING_ARGS="--threads $t" SERVER_ARGS="-ngl 0 -t $t -tb $t" MODELS="qwen05 smollm2" ROUNDS=$rounds REPS=2 GEN=64 PROMPTS=8,512 bash bench/llama_server.sh > /tmp/o/ls$t.log 2>&1
  cp /tmp/o/t$t/table.md $R/table-t$t.md; cat /tmp/o/t$t/kindling.jsonl /tmp/o/t$t/llama.jsonl > $R/raw-t$t.jsonl 2>/dev/null
done
tail -5 /tmp/o/ls8.log > $R/ls8-tail.txt
KINDLING_CPU_PROFILE=1 .bench/kindling bench /tmp/smollm2.gguf --backend cpu --threads 8 --prompt-tokens 8 --gen-tokens 128 2>&1 | grep -v "^ *$" | head -24 > $R/profile.txt
