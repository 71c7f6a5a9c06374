set -u
R=$OUT
export VK_DRIVER_FILES=/nonexistent.json
python3 .bench/gguf_stub.py expand .bench/smollm2.hdr /tmp/smollm2.gguf > /dev/null && python3 bench/sane_floats.py /tmp/smollm2.gguf 0.02 0.06
.bench/cpu-tests decode_speed --ignored --nocapture > $R/decode_speed.txt 2>&1
KINDLING_SPEED_LAYER=896,128,4864 KINDLING_SPEED_TYPE=Q4_K KINDLING_SPEED_LAYERS=24 .bench/cpu-tests decode_speed --ignored --nocapture >> $R/decode_speed.txt 2>&1
for t in 1 2 4 8 12 16; do
  .bench/kindling bench /tmp/smollm2.gguf --backend cpu --threads $t --prompt-tokens 8 --gen-tokens 128 --json 2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.load(sys.stdin); print('t$t', round(d['prefill_tok_s']), round(d['decode_tok_s'],1))" >> $R/smol_decode.txt
done
