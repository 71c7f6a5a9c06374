# Device call 4: the f16 gated panels on the H200. The kernel tests (cooperative matrices
# run there, not on lavapipe), the new build's per-kernel prefill profile at 512 tokens,
# then main (97d2919) against the new build end to end: native default kernels
# on both Qwen shapes, then the browser's kernels natively (--no-subgroups --no-f16:
# dequant_rows now stores vec4s). Carried: .ab, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in qwen15 qwen05; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 240 /tmp/gk 2>&1 | grep -v XDG > $R/call4-gpu_kernels.txt; grep "test result\|FAILED\|panicked" $R/call4-gpu_kernels.txt
grep "panels\|gated" $R/call4-gpu_kernels.txt | head -40
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
timeout 100 .bench/kindling-new bench /tmp/qwen15.gguf --prompt-tokens 512 --gen-tokens 16 --profile 2>&1 | grep -v XDG | sed -n '/prefill (512/,/decoded token/p' > $R/call4-profile.txt
head -20 $R/call4-profile.txt
OUT=/tmp/o1 PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call4-ab.md; cp /tmp/o1/ab.jsonl $R/call4-ab.jsonl; cat $R/call4-ab.md
OUT=/tmp/o2 MODELS=qwen15 EXTRA="--no-subgroups --no-f16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o2/ab.md $R/call4-browser-kernels-ab.md; cp /tmp/o2/ab.jsonl $R/call4-browser-kernels-ab.jsonl; cat $R/call4-browser-kernels-ab.md
