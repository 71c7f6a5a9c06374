# Device call 4 (session 30): the committed build (bc8574a: q/k/v in one matmul in 2 spans
# for the 1.5B, parts submitted natively). Its kernel tests on the H200, then issue 29's
# native floors beside llama.cpp's Vulkan server in one run (bench/llama_server.sh, the
# 1.5B, two rounds of two). Carried: .ab, .bench (kindling = this build), .gl, .llama.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 240 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result\|panicked" $R/gpu_kernels.txt
grep "qkv case" $R/gpu_kernels.txt
MODELS=qwen15 ROUNDS=2 REPS=2 GEN=128 PROMPTS=8,512,4096 bash bench/llama_server.sh > $OUT/ls.log 2>&1
cp $OUT/table.md $R/llama-table.md; cat $OUT/kindling.jsonl $OUT/llama.jsonl > $R/llama-raw.jsonl 2>/dev/null
tail -5 $OUT/ls.log > $R/llama-tail.txt
cat $R/llama-table.md
