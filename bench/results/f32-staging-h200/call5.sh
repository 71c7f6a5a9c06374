# Device call 5: dequant_rows and tile_rows with each subgroup's 32 units as 8 row quads x one
# step's 4 value quads (call 4: along a row quad's values was slower still). Main (273f74d) against it:
# per-kernel device times natively with the browser's kernels (op_timing, NO_COOP=1), per
# kernel under Dawn (bench/dawn.mjs TRACE_GPU=1, a 512-token prefill, each dispatch in its
# own pass), then end to end natively with the browser's kernels and through Dawn
# (bench/ab_dawn.sh). Carried: .ab, .ab4, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
for b in old new; do xz -dc .ab4/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
for b in old new old new; do
  echo "== $b"
  PER_KERNEL=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 /tmp/op_timing-$b 512 2>&1 | grep -v "XDG\|ttention\|Argmax\|KvStore\|AttnCombine\|kernel variants\|Vulkan"
done > $R/per-op.txt 2>&1
for side in old new; do
  pkg=/tmp/pkg-$side; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"; tar -xJf ".ab/web-$side.tar.xz" -C "$pkg/wasm"
done
for side in old new; do
  TRACE_GPU=1 PROMPTS=512 REPS=1 GEN_TOKENS=8 TRACE_STEPS=4 timeout 200 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$side qwen15=/tmp/qwen15.gguf > $R/trace-$side.jsonl 2>> $R/stderr.txt
done
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" EXTRA="--no-subgroups --no-f16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/native-browser-kernels-ab.md; cp /tmp/o1/ab.jsonl $R/native-browser-kernels-ab.jsonl
cat $R/native-browser-kernels-ab.md
OUT=/tmp/o2 MODELS=qwen15 PROMPTS="8 512 4096" ROUNDS=2 REPS=2 bash bench/ab_dawn.sh > /tmp/o2-log.txt 2>&1
cp /tmp/o2/ab.md $R/ab.md; cp /tmp/o2/ab.jsonl $R/ab.jsonl; cp /tmp/o2/dawn.jsonl $R/dawn.jsonl; cp /tmp/o2-log.txt $R/log.txt
cat $R/ab.md
python3 - $R/dawn.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'model' not in d: continue
    print(d['build'], d['round'], {k: (round(v['prefill_tok_s']), round(v['decode_tok_s'])) for k, v in d.items() if isinstance(v, dict) and 'prefill_tok_s' in v})
PY
cd $R && tar czf results.tgz --remove-files $(ls | grep -v results.tgz) && ls
