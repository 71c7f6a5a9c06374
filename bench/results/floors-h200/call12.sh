# Device call 12 (session 35): call 11 again with Dawn warm (PROMPTS="8 8 512": the first
# 8-token prompt warms up, the second overwrites its trace). Through
# Dawn a 1.5B token after 512 tokens costs ~0.45 ms more than after 8; natively ~0.14 ms
# (calls 3, 4, 9). Per kernel, decode after 8 and after 512 tokens: natively with the
# browser's kernels (`kindling bench --profile --no-subgroups --no-f16 --merge-splits`,
# timestamps between dispatches) and through Dawn (bench/dawn.mjs TRACE_GPU=1: each dispatch
# in a pass of its own), 7fd9556. Carried: .ab39 (the 1.5B header, the CLI stripped, the
# wasm), .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o12; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/qwen15.hdr.json .bench/
xz -dc .ab39/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
xz -dc .ab39/kindling.xz > /tmp/kindling; chmod +x /tmp/kindling
for p in 8 512; do
  timeout 120 /tmp/kindling bench /tmp/qwen15.gguf --backend gpu --prompt-tokens $p --gen-tokens 32 --profile --json \
    --no-subgroups --no-f16 --merge-splits 2>> $R/call12-native-stderr.txt >> $R/call12-native.jsonl
done
pkg=/tmp/pkg; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"; tar -xJf .ab39/web-new.tar.xz -C "$pkg/wasm"
TRACE_GPU=1 PROMPTS="8 8 512" REPS=1 GEN_TOKENS=8 TRACE_STEPS=8 timeout 200 bash .dawn/run.sh .dawn bench/dawn.mjs $pkg \
  qwen15=/tmp/qwen15.gguf 2>> $R/call12-dawn-stderr.txt | grep '"model"' >> $R/call12-trace.jsonl
python3 bench/results/floors-h200/decode_kernels.py $R/call12-native.jsonl $R/call12-trace.jsonl | tee $R/call12-decode-kernels.md
