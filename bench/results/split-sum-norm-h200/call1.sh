# Device call 1 (session 29): main (46945aa) against the split sums taking the next
# RMS norm in (matmul_split_sum_norm): natively (default kernels, then the browser's
# kernels natively) and through Dawn (bench/ab_dawn.sh), Qwen2.5 1.5B and 0.5B shapes;
# each build's profile of a 512- and a 4,096-token prefill of the 1.5B; the new build's
# kernel tests on the H200. Carried: .ab, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 200 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result" $R/gpu_kernels.txt
for b in kindling kindling-new; do
  for pt in 512 4096; do
    echo "== $b $pt" >> $R/profile.txt
    timeout 120 .bench/$b bench /tmp/qwen15.gguf --backend gpu --prompt-tokens $pt --gen-tokens 16 --profile 2>&1 \
      | sed -n '/device time of the prefill/,/^$/p' | head -24 >> $R/profile.txt
  done
done
OUT=/tmp/o1 MODELS=qwen15 BINS="kindling kindling-new" EXTRA="--no-subgroups --no-f16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/native-browser-kernels-ab.md; cp /tmp/o1/ab.jsonl $R/native-browser-kernels-ab.jsonl
OUT=/tmp/o2 PROMPTS="512 4096" ROUNDS=2 bash bench/ab_dawn.sh > /tmp/o2-log.txt 2>&1
cp /tmp/o2/ab.md $R/ab.md; cp /tmp/o2/ab.jsonl $R/ab.jsonl; cp /tmp/o2/dawn.jsonl $R/dawn.jsonl
cat $R/native-browser-kernels-ab.md $R/ab.md
python3 - $R/dawn.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'model' not in d: continue
    print(d['model'], d['build'], d['round'], {k: (round(v['prefill_tok_s']), round(v['decode_tok_s'])) for k, v in d.items() if isinstance(v, dict) and 'prefill_tok_s' in v})
PY
grep -A14 "== " $R/profile.txt | head -120
