set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
xz -dc .bench/kindling-old.xz > .bench/kindling-old; chmod +x .bench/kindling-old
export VK_DRIVER_FILES=/nonexistent.json
for t in 8 16; do
  OUT=/tmp/o/t$t BACKEND=cpu KINDLING_ARGS="--threads $t" SERVER_ARGS="-ngl 0 -t $t -tb $t" MODELS="qwen05 smollm2" ROUNDS=2 REPS=2 GEN=64 PROMPTS=8,512 bash bench/llama_server.sh > /tmp/o/ls$t.log 2>&1
  cp /tmp/o/t$t/table.md $R/table-t$t.md; cat /tmp/o/t$t/kindling.jsonl /tmp/o/t$t/llama.jsonl > $R/raw-t$t.jsonl 2>/dev/null
done
for r in 1 2; do for m in smollm2 qwen05; do for t in 8 16; do for b in kindling-old kindling; do
  .bench/$b bench /tmp/$m.gguf --backend cpu --threads $t --prompt-tokens 512 --gen-tokens 32 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.load(sys.stdin); print('r$r t$t $m $b prefill-512 %.0f decode-after-512 %.1f' % (d['prefill_tok_s'], d['decode_tok_s']))" >> $R/ab.txt
done; done; done; done
