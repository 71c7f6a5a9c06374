# Device call 3 (session 30): call 2 found the q/k/v matmul faster in fewer spans (8 → 4:
# 65.8 → 57.2 µs), each span's tile writing partial sums that a second dispatch reads.
# Does that hold for every split cooperative-matrix matmul (o, down, and q/k/v)? The exp
# build is this change with two temporary knobs: KINDLING_SPLIT_TARGET (SPLIT_K_COOP's
# target, 1,024) and KINDLING_MULTI_TARGET (SPLIT_K_COOP_MULTI's, 256). Profile of the
# 1.5B's 512-token prefill per setting, then bench/ab.sh over the settings, two rounds.
# Carried: .ab, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in old exp; do xz -dc .ab/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
for v in "1024 256" "512 256" "384 256" "256 256" "1024 128" "1024 384"; do
  set -- $v
  echo "== split target $1, multi target $2" >> $R/profile.txt
  KINDLING_SPLIT_TARGET=$1 KINDLING_MULTI_TARGET=$2 timeout 120 .bench/kindling-exp bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 512 --gen-tokens 16 --profile 2>&1 \
    | sed -n '/device time of the prefill/,/^$/p' | head -26 >> $R/profile.txt
done
grep "==\|device time\|MatmulTiled\|SplitSum" $R/profile.txt
OUT=/tmp/o1 BINS="kindling-old kindling-exp kindling-exp:KINDLING_SPLIT_TARGET=512 kindling-exp:KINDLING_SPLIT_TARGET=256" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
