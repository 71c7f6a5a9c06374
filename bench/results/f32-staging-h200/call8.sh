# Device call 8: the SPIR-V Dawn (Tint) makes of main's matmul_wide, through Dawn's
# dump_shaders toggle (with disable_symbol_renaming), for comparing with naga's: one short
# TRACE_GPU=1 run of main's wasm; Dawn's log lines kept. Carried: .ab, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
pkg=/tmp/pkg-old; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"; tar -xJf ".ab/web-old.tar.xz" -C "$pkg/wasm"
DAWN_TOGGLES=dump_shaders,disable_symbol_renaming TRACE_GPU=1 PROMPTS=512 REPS=1 GEN_TOKENS=2 TRACE_STEPS=1 timeout 200 \
  bash .dawn/run.sh .dawn bench/dawn.mjs $pkg qwen15=/tmp/qwen15.gguf > /tmp/dump.txt 2>&1
ls -la /tmp/dump.txt; wc -l /tmp/dump.txt
grep -n "matmul_wide" /tmp/dump.txt | head -20
cd /tmp && xz -9 -c dump.txt > $R/dump.txt.xz; ls -la $R
