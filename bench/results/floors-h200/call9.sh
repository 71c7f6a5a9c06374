# Device call 9 (session 35), in two parts on one warm machine (the carried files of both
# passed the 64 MiB a call carries): PART=dawn, then PART=llama.
# Issue 29's floors on the 1.5B beside llama.cpp with the change of
# wide-qkvo-h200.md (the 1.5B's q and o as panels from 1,024-row batches): the npm
# package's wasm through Dawn beside `kindling bench` natively, alternating, two rounds
# (bench/dawn.sh, prompts of 512 and 4,096 tokens), then llama.cpp's Vulkan server
# beside `kindling bench` (bench/llama_server.sh, two rounds of two, after 8, 512 and 4,096
# tokens). Carried: .ab39 (the 1.5B header, the CLI and the wasm of the change, the CLI
# stripped), .gl, .dawn, .llama.
set -u
R=$OUT; export OUT=/tmp/o9; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench/web; cp .ab39/gguf_stub.py .ab39/qwen15.hdr.json .bench/
xz -dc .ab39/qwen15.hdr.xz > .bench/qwen15.hdr
xz -dc .ab39/kindling.xz > .bench/kindling; chmod +x .bench/kindling
tar -xJf .ab39/web-new.tar.xz -C .bench/web 2>/dev/null
if [ "$PART" = dawn ]; then
PROMPTS="512 4096" ROUNDS=2 timeout 300 bash bench/dawn.sh > $OUT/dawn.log 2>&1
cp $OUT/native.jsonl $R/call9-native.jsonl; cp $OUT/dawn.jsonl $R/call9-dawn.jsonl; tail -3 $OUT/stderr.txt > $R/call9-dawn-stderr-tail.txt 2>/dev/null
python3 bench/results/floors-h200/dawn_table.py $R/call9-native.jsonl $R/call9-dawn.jsonl | tee $R/call9-dawn-table.md
fi
if [ "$PART" = llama ]; then
ROUNDS=2 REPS=2 GEN=128 PROMPTS=8,512,4096 timeout 250 bash bench/llama_server.sh > $OUT/ls.log 2>&1
cp $OUT/table.md $R/call9-llama-table.md; cat $OUT/kindling.jsonl $OUT/llama.jsonl > $R/call9-llama-raw.jsonl 2>/dev/null
tail -5 $OUT/ls.log > $R/call9-llama-tail.txt
cat $R/call9-llama-table.md
fi
