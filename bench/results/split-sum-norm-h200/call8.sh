# Device call 8 (session 29): rms_norm reading NORM_STEP (4) of an invocation's values at
# once (its loads in flight together). The base (bca1e17's kernels) against it: the
# device time per decoded token and of a 512-token prefill by kernel (`--profile`, the 1.5B),
# then decode after 8 and 512 tokens, four rounds taking turns. Carried: .ab, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in base norm; do xz -dc .ab/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
for b in kindling-base kindling-norm kindling-base kindling-norm; do
  echo "== $b" >> $R/profile.txt
  timeout 120 .bench/$b bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 512 --gen-tokens 64 --profile 2>&1 \
    | grep "device time\|RmsNorm" >> $R/profile.txt
done
OUT=/tmp/o1 BINS="kindling-base kindling-norm" PROMPTS="8 512" ROUNDS=4 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md $R/profile.txt
python3 - $R/ab.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l); print(d['round'], d['bin'], d['prompt_tokens'], round(d['decode_tok_s'], 1), round(d['prefill_tok_s']))
PY
