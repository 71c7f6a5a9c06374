# Device call 7 (session 29): calls 2 and 5 read the 1.5B's decode after a 512-token prompt
# 0.4% lower with this change, though no decode kernel changed. Main (46945aa) and the new
# build (bca1e17) each: the device time per decoded token by kernel (`--profile`), then four
# rounds of decode after 8 and after 512 tokens, taking turns. Carried: .ab, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
for b in kindling kindling-new kindling kindling-new; do
  echo "== $b" >> $R/decode-profile.txt
  timeout 120 .bench/$b bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 512 --gen-tokens 64 --profile 2>&1 \
    | sed -n '/device time per decoded token/,/^$/p' | head -14 >> $R/decode-profile.txt
done
OUT=/tmp/o1 BINS="kindling kindling-new" PROMPTS="8 512" ROUNDS=4 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md; grep "==\|device time per" $R/decode-profile.txt
python3 - $R/ab.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l); print(d['round'], d['bin'], d['prompt_tokens'], round(d['decode_tok_s'], 1), round(d['wait_ms_per_token'], 3))
PY
