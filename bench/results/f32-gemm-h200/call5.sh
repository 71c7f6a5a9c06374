# Device call 5 (this session): the kernel tests on the H200 (the panels' final form), per-kernel
# prefill matmuls of main (2eb975b) and the new build at 512 and 256 rows (the browser's
# kernels: NO_COOP=1), then main against the new build end to end: natively with the
# browser's kernels (--no-subgroups --no-f16), natively with the default ones and through
# Dawn (bench/ab_dawn.sh). Carried: .ab, .ab1 (op_timing builds), .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 200 /tmp/gk 2>&1 | grep -v XDG > $R/call5-gpu_kernels.txt; grep "test result" $R/call5-gpu_kernels.txt
for b in main new; do xz -dc .ab1/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
for n in 512 256; do
  for b in main new; do
    echo "== $b n=$n"
    PER_KERNEL=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 /tmp/op_timing-$b $n 2>&1 | grep -v "XDG\|ttention\|Argmax\|KvStore\|AttnCombine\|kernel variants\|Vulkan"
  done
done 2>&1 | tee $R/call5-op_timing.txt
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" EXTRA="--no-subgroups --no-f16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call5-native-browser-kernels-ab.md; cp /tmp/o1/ab.jsonl $R/call5-native-browser-kernels-ab.jsonl
cat $R/call5-native-browser-kernels-ab.md
rm -f .ab/gpu_kernels.xz
OUT=/tmp/o2 MODELS=qwen15 PROMPTS="8 512 4096" ROUNDS=2 REPS=2 bash bench/ab_dawn.sh > /tmp/o2-log.txt 2>&1
cp /tmp/o2/ab.md $R/call5-ab.md; cp /tmp/o2/ab.jsonl $R/call5-ab.jsonl; cp /tmp/o2/dawn.jsonl $R/call5-dawn.jsonl; cp /tmp/o2-log.txt $R/call5-log.txt
cat $R/call5-ab.md
python3 - $R/call5-dawn.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'model' not in d: continue
    print(d['build'], d['round'], {k: (round(v['prefill_tok_s']), round(v['decode_tok_s'])) for k, v in d.items() if isinstance(v, dict) and 'prefill_tok_s' in v})
PY
