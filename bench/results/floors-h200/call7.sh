# Device call 7 (session 36), the Dawn half of issue 29's floors with the session's last
# build (the gated f32 panel, spans by waves, attention by row quads): bench/dawn.sh, the
# npm package's wasm through Dawn beside `kindling bench` natively, alternating, two
# rounds, all four models, prompts of 8, 512 and 4,096 tokens. Call 8 is llama.cpp's half.
# Carried: .ab40 (four headers, the CLI stripped, the wasm), .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o7; mkdir -p $OUT
export MODELS="qwen15 qwen05 smollm2 gemma3"
mkdir -p .bench/web; cp .ab40/gguf_stub.py .ab40/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab40/$m.hdr.xz > .bench/$m.hdr; done
xz -dc .ab40/kindling.xz > .bench/kindling; chmod +x .bench/kindling
tar -xJf .ab40/web-last.tar.xz -C .bench/web 2>/dev/null
PROMPTS="8 512 4096" ROUNDS=2 timeout 560 bash bench/dawn.sh > $OUT/dawn.log 2>&1
cp $OUT/native.jsonl $R/call7-native.jsonl; cp $OUT/dawn.jsonl $R/call7-dawn.jsonl; tail -3 $OUT/stderr.txt > $R/call7-dawn-stderr-tail.txt 2>/dev/null
python3 bench/results/floors-h200/dawn_table.py $R/call7-native.jsonl $R/call7-dawn.jsonl | tee $R/call7-dawn-table.md
