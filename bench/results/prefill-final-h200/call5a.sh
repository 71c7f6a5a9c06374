# Device call 5a: the kernel tests on the H200 (cooperative matrices: the new split rule runs
# there, not on lavapipe), per op the new build against a01031d (head), then issue 29's native
# figures beside llama.cpp's Vulkan server with the new build. Carried: .ab, .gl, .llama.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 300 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result" $R/gpu_kernels.txt
for b in head new; do xz -dc .ab/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
for round in 1 2; do
  for b in head new; do
    echo "== shader cores $b round $round"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 120 /tmp/op_timing-$b 512 2>&1 | grep "prefill"
    echo "== coop $b round $round"
    DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 /tmp/op_timing-$b 512 2>&1 | grep "qwen15 prefill"
  done
done > $R/op_timing.txt
xz -dc .ab/kindling-new.xz > .bench/kindling; chmod +x .bench/kindling
MODELS=qwen15 ROUNDS=2 REPS=2 GEN=128 PROMPTS=8,512,4096 bash bench/llama_server.sh > $OUT/ls.log 2>&1
cp $OUT/table.md $R/llama-table.md; cat $OUT/kindling.jsonl $OUT/llama.jsonl > $R/llama-raw.jsonl 2>/dev/null
tail -5 $OUT/ls.log > $R/llama-tail.txt
cat $R/llama-table.md
