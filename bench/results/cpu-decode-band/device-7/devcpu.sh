set -u
R=$OUT
for b in k-parts k-parts2; do xz -dc .bench/$b.xz > .bench/$b; chmod +x .bench/$b; done
export VK_DRIVER_FILES=/nonexistent.json
MODELS="qwen05 smollm2" OUT=/tmp/o source bench/device_setup.sh > /dev/null 2>&1
for r in 1 2; do for m in smollm2 qwen05; do for t in 8 16; do for p in 8 512; do for b in kindling k-parts2 k-parts; do
  .bench/$b bench /tmp/$m.gguf --backend cpu --threads $t --prompt-tokens $p --gen-tokens 48 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.load(sys.stdin); print('r$r t$t $m p$p $b prefill %.0f decode %.1f' % (d['prefill_tok_s'], d['decode_tok_s']))" >> $R/ab.txt
done; done; done; done; done
