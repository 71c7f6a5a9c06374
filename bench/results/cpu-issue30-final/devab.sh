# The session's start (s20, 7033dc1), ea066ae (even bands, serial work, attention and SiLU) and
# this build (four bands a thread from 4 threads on), taking turns on the Xeon; then the
# winner beside llama.cpp's CPU code at 8 threads (3 rounds). .gl .bench .llama carried.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
for b in s20 ea0; do xz -dc .bench/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
export VK_DRIVER_FILES=/nonexistent.json
MODELS="qwen05 smollm2" source bench/device_setup.sh > /dev/null 2>&1
for r in 1 2; do for m in smollm2 qwen05; do for t in 8 16; do for p in 8 512; do for b in kindling-s20 kindling-ea0 kindling; do
  .bench/$b bench /tmp/$m.gguf --backend cpu --threads $t --prompt-tokens $p --gen-tokens 64 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.load(sys.stdin); print('r$r t$t $m p$p $b prefill %.0f decode %.1f' % (d['prefill_tok_s'], d['decode_tok_s']))" >> $R/ab.txt
done; done; done; done; done
OUT=/tmp/o/t8 BACKEND=cpu KINDLING_ARGS="--threads 8" SERVER_ARGS="-ngl 0 -t 8 -tb 8" MODELS="qwen05 smollm2" ROUNDS=3 REPS=2 GEN=64 PROMPTS=8,512 bash bench/llama_server.sh > /tmp/o/ls8.log 2>&1
cp /tmp/o/t8/table.md $R/table-t8.md; cat /tmp/o/t8/kindling.jsonl /tmp/o/t8/llama.jsonl > $R/raw-t8.jsonl 2>/dev/null
