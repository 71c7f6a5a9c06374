# Device call 8, the final build (aea867f): the kernel tests on the H200, then the session's
# start (fb51bdf) against it end to end: natively with the browser's kernels
# (--no-subgroups --no-f16), natively with the default ones and through Dawn
# (bench/ab_dawn.sh). Carried: .ab, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 200 /tmp/gk 2>&1 | grep -v XDG > $R/call8-gpu_kernels.txt; grep "test result" $R/call8-gpu_kernels.txt
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" EXTRA="--no-subgroups --no-f16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call8-native-browser-kernels-ab.md; cp /tmp/o1/ab.jsonl $R/call8-native-browser-kernels-ab.jsonl
cat $R/call8-native-browser-kernels-ab.md
rm -f .ab/op_timing-*.xz .ab/gpu_kernels.xz
OUT=/tmp/o2 MODELS=qwen15 PROMPTS="8 512 4096" ROUNDS=2 REPS=2 bash bench/ab_dawn.sh > /tmp/o2-log.txt 2>&1
cp /tmp/o2/ab.md $R/call8-ab.md; cp /tmp/o2/ab.jsonl $R/call8-ab.jsonl; cp /tmp/o2/dawn.jsonl $R/call8-dawn.jsonl; cp /tmp/o2-log.txt $R/call8-log.txt
cat $R/call8-ab.md
