# Device call 2 (this session): the kernel tests on the H200 (609f83f), per-op prefill matmuls
# of main (2eb975b) and 609f83f at 512 and 256 rows (the browser's kernels: NO_COOP=1), then
# main against 609f83f end to end: natively with the browser's kernels (--no-subgroups
# --no-f16), natively with the default ones and through Dawn (bench/ab_dawn.sh).
# Carried: .ab, .ab1 (op_timing builds), .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 200 /tmp/gk 2>&1 | grep -v XDG > $R/call2-gpu_kernels.txt; grep "test result" $R/call2-gpu_kernels.txt
for b in main new; do xz -dc .ab1/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
for n in 512 256; do
  for round in 1 2; do
    for b in main new; do
      echo "== $b n=$n round $round"
      NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 /tmp/op_timing-$b $n 2>&1 | grep "prefill [0-9]"
    done
  done
done 2>&1 | tee $R/call2-op_timing.txt
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" EXTRA="--no-subgroups --no-f16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call2-native-browser-kernels-ab.md; cp /tmp/o1/ab.jsonl $R/call2-native-browser-kernels-ab.jsonl
cat $R/call2-native-browser-kernels-ab.md
rm -f .ab/gpu_kernels.xz
OUT=/tmp/o2 MODELS=qwen15 PROMPTS="8 512 4096" ROUNDS=2 REPS=2 bash bench/ab_dawn.sh > /tmp/o2-log.txt 2>&1
cp /tmp/o2/ab.md $R/call2-ab.md; cp /tmp/o2/ab.jsonl $R/call2-ab.jsonl; cp /tmp/o2/dawn.jsonl $R/call2-dawn.jsonl; cp /tmp/o2-log.txt $R/call2-log.txt
cat $R/call2-ab.md
