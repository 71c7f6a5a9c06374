# Device call 2 (session 30): call 1's one matmul for q, k and v took 66 µs a layer on the
# 1.5B (16 × 4 tiles in 8 spans: 512 workgroups), where q alone (384) took 30: how many
# spans it should split into (8, 6, 4, through a temporary KINDLING_MULTI_SPLITS in the
# exp build, which is call 1's new build otherwise); and why the 1.5B's 4,096-token
# prefill did not move in call 1 (its profile, old and exp). Carried: .ab, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in old exp; do xz -dc .ab/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
for v in "old 512 8" "exp 512 8" "exp 512 6" "exp 512 4" "old 4096 8" "exp 4096 8" "exp 4096 6"; do
  set -- $v
  echo "== $1 $2 splits $3" >> $R/profile.txt
  KINDLING_MULTI_SPLITS=$3 timeout 120 .bench/kindling-$1 bench /tmp/qwen15.gguf --backend gpu --prompt-tokens $2 --gen-tokens 16 --profile 2>&1 \
    | sed -n '/device time of the prefill/,/^$/p' | head -26 >> $R/profile.txt
done
grep "==\|device time\|MatmulTiled\|SplitSum\|Attention" $R/profile.txt
OUT=/tmp/o1 BINS="kindling-old kindling-exp kindling-exp:KINDLING_MULTI_SPLITS=6 kindling-exp:KINDLING_MULTI_SPLITS=4" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
