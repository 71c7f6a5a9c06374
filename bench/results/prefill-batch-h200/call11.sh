# Device call 11 (session 31): llama.cpp with a micro-batch as large as Kindling's new
# batches. Calls 3 and 7 ran llama-server at its defaults (batch 2,048, micro-batch 512)
# against Kindling's 2,048-row batches; here llama-server gets `-ub 2048` (its batch is
# 2,048 already), beside the final build (f4417e6), the 1.5B at 512 and 4,096 tokens, two
# rounds of two. Carried: .ab31, .gl, .llama.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
xz -dc .ab31/qwen15.hdr.xz > .bench/qwen15.hdr
xz -dc .ab31/kindling-ropemt.xz > .bench/kindling; chmod +x .bench/kindling
source bench/device_setup.sh
MODELS=qwen15 ROUNDS=2 REPS=2 GEN=128 PROMPTS=512,4096 SERVER_ARGS="-ub 2048" bash bench/llama_server.sh > $OUT/ls.log 2>&1
cp $OUT/table.md $R/llama-table.md; cat $OUT/kindling.jsonl $OUT/llama.jsonl > $R/llama-raw.jsonl 2>/dev/null
tail -5 $OUT/ls.log > $R/llama-tail.txt
cat $R/llama-table.md
