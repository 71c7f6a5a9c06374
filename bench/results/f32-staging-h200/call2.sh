# Device call 2: main (273f74d) against the tiled operands (matmul_wide.wgsl, tile_rows):
# per-kernel prefill matmuls with the browser's kernels
# (NO_COOP=1), natively trusted and with bounds checks (CHECKED=1, as a browser compiles
# them), then end to end natively with the browser's kernels, and through Dawn
# (bench/ab_dawn.sh: native default kernels, then the two wasm builds taking turns);
# last, the kernel tests on the H200.
# Carried: .ab (CLIs, wasm builds, headers), .ab4 (op_timing builds, gpu_kernels), .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
for b in old new; do xz -dc .ab4/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
for checked in "" 1; do
  for b in old new old new; do
    echo "== $b CHECKED=$checked"
    CHECKED=$checked PER_KERNEL=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 /tmp/op_timing-$b 512 2>&1 | grep -v "XDG\|ttention\|Argmax\|KvStore\|AttnCombine\|kernel variants\|Vulkan"
  done
done 2>&1 | tee $R/op_timing.txt | grep -c . 
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
xz -dc .ab4/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 200 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result" $R/gpu_kernels.txt
