# Device call 7 (session 31): the final build. rope = 8f62899 (the RoPE tables kept across
# a batch's parts); ropemt = f4417e6 (rope, with a long batch's table computed on several
# threads). Its kernel tests on the H200; bench/ab.sh,
# rope against ropemt, both Qwen shapes at 512, 2,048 and 4,096 tokens, two rounds; then
# issue 29's native floors: ropemt beside llama.cpp's Vulkan server in one run
# (bench/llama_server.sh, the 1.5B, prompts of 8, 512, 2,048 and 4,096 tokens, two rounds
# of two). Carried: .ab31, .gl, .llama.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab31/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
for b in rope ropemt; do xz -dc .ab31/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
xz -dc .ab31/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 240 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result\|panicked" $R/gpu_kernels.txt
OUT=/tmp/o1 BINS="kindling-rope kindling-ropemt" PROMPTS="512 2048 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
cp .bench/kindling-ropemt .bench/kindling
MODELS=qwen15 ROUNDS=2 REPS=2 GEN=128 PROMPTS=8,512,2048,4096 bash bench/llama_server.sh > $OUT/ls.log 2>&1
cp $OUT/table.md $R/llama-table.md; cat $OUT/kindling.jsonl $OUT/llama.jsonl > $R/llama-raw.jsonl 2>/dev/null
tail -5 $OUT/ls.log > $R/llama-tail.txt
cat $R/llama-table.md
