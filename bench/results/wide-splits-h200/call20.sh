# Device call 20 (session 28): main's kernels (.ab/*-old: 273f74d, whose kernels are
# 186c7bb's) against the new build: the store functions by components (61af6b9),
# matmul_wide's tiles as two-level arrays, and its dot products in up to 16 spans
# (SPLIT_K_WIDE). Per kernel under Dawn (bench/dawn.mjs TRACE_GPU=1, a 512-token prefill,
# each dispatch in its own pass; the new build first this time, then main, then the new
# again), end to end natively with the browser's kernels, then natively and through Dawn
# (bench/ab_dawn.sh) on both Qwen shapes. Carried: .ab, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for side in old new; do
  pkg=/tmp/pkg-$side; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"; tar -xJf ".ab/web-$side.tar.xz" -C "$pkg/wasm"
done
i=0
for side in new old new; do
  i=$((i + 1))
  TRACE_GPU=1 PROMPTS=512 REPS=1 GEN_TOKENS=8 TRACE_STEPS=4 timeout 200 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$side qwen15=/tmp/qwen15.gguf > /tmp/trace-$i-$side.jsonl 2>> $R/stderr.txt
  echo "== $i $side"; tail -1 /tmp/trace-$i-$side.jsonl | python3 bench/results/f32-staging-h200/trace_summary.py
done > $R/trace-summary.txt 2>&1
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 MODELS=qwen15 BINS="kindling kindling-new" EXTRA="--no-subgroups --no-f16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/native-browser-kernels-ab.md
OUT=/tmp/o2 PROMPTS="8 512 4096" ROUNDS=2 REPS=2 bash bench/ab_dawn.sh > $R/log.txt 2>&1
cp /tmp/o2/ab.md $R/ab.md; cp /tmp/o2/dawn.jsonl $R/dawn.jsonl
cat $R/trace-summary.txt $R/native-browser-kernels-ab.md $R/ab.md
python3 - $R/dawn.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'model' not in d: continue
    print(d['model'], d['build'], d['round'], {k: (round(v['prefill_tok_s']), round(v['decode_tok_s'])) for k, v in d.items() if isinstance(v, dict) and 'prefill_tok_s' in v})
PY
