# Device call 3 (session 35): issue 29's browser decode floor on all four model shapes (Qwen2.5
# 1.5B and 0.5B, SmolLM2, Gemma 3; noise weights of the real shapes): main at 0c40699, the npm
# package's wasm through Dawn beside `kindling bench` natively, alternating, two rounds
# (bench/dawn.sh), prompts of 8 and 512 tokens with 128 greedy tokens after each. Carried:
# .ab39 (headers, main's CLI stripped, main's wasm), .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05 smollm2 gemma3"
mkdir -p .bench/web; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
xz -dc .ab39/kindling.xz > .bench/kindling; chmod +x .bench/kindling
tar -xJf .ab39/web-head.tar.xz -C .bench/web
PROMPTS="8 512" ROUNDS=2 timeout 560 bash bench/dawn.sh > $OUT/dawn.log 2>&1
cp $OUT/native.jsonl $OUT/dawn.jsonl $OUT/gpu.txt $R/ 2>/dev/null; tail -3 $OUT/stderr.txt > $R/dawn-stderr-tail.txt 2>/dev/null
python3 bench/results/floors-h200/dawn_table.py $R/native.jsonl $R/dawn.jsonl | tee $R/dawn-table.md
