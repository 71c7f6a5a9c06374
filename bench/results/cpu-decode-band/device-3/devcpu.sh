set -u
R=$OUT
xz -dc .bench/kindling-a.xz > .bench/kindling-a; chmod +x .bench/kindling-a
export VK_DRIVER_FILES=/nonexistent.json
MODELS="qwen05 smollm2" OUT=/tmp/o source bench/device_setup.sh > /dev/null 2>&1
for r in 1 2 3; do for m in smollm2 qwen05; do for t in 8 16; do for b in kindling-a kindling; do
  .bench/$b bench /tmp/$m.gguf --backend cpu --threads $t --prompt-tokens 512 --gen-tokens 16 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.load(sys.stdin); print('r$r t$t $m $b prefill-512 %.0f decode %.1f' % (d['prefill_tok_s'], d['decode_tok_s']))" >> $R/ab.txt
done; done; done; done
