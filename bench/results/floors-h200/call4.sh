# Device call 4 (session 35): issue 29's floors on the 1.5B beside llama.cpp, main at 0c40699:
# the npm package's wasm through Dawn beside `kindling bench` natively, alternating, two
# rounds (bench/dawn.sh, prompts of 512 and 4,096 tokens), then llama.cpp's Vulkan server
# beside `kindling bench` (bench/llama_server.sh, two rounds of two, after 8, 512 and 4,096
# tokens). Carried: .ab39 (the 1.5B header, main's CLI stripped, main's wasm), .gl, .dawn, .llama.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench/web; cp .ab39/gguf_stub.py .ab39/qwen15.hdr.json .bench/
xz -dc .ab39/qwen15.hdr.xz > .bench/qwen15.hdr
xz -dc .ab39/kindling.xz > .bench/kindling; chmod +x .bench/kindling
tar -xJf .ab39/web-head.tar.xz -C .bench/web
PROMPTS="512 4096" ROUNDS=2 timeout 300 bash bench/dawn.sh > $OUT/dawn.log 2>&1
cp $OUT/native.jsonl $R/call4-native.jsonl; cp $OUT/dawn.jsonl $R/call4-dawn.jsonl; tail -3 $OUT/stderr.txt > $R/call4-dawn-stderr-tail.txt 2>/dev/null
python3 bench/results/floors-h200/dawn_table.py $R/call4-native.jsonl $R/call4-dawn.jsonl | tee $R/call4-dawn-table.md
ROUNDS=2 REPS=2 GEN=128 PROMPTS=8,512,4096 timeout 250 bash bench/llama_server.sh > $OUT/ls.log 2>&1
cp $OUT/table.md $R/call4-llama-table.md; cat $OUT/kindling.jsonl $OUT/llama.jsonl > $R/call4-llama-raw.jsonl 2>/dev/null
tail -5 $OUT/ls.log > $R/call4-llama-tail.txt
cat $R/call4-llama-table.md
