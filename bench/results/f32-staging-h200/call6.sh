# Device call 6: why Dawn runs main's matmul_wide 12% slower than wgpu does (call 5: 536
# against 478 µs a call). main's wasm (273f74d) under Dawn, one 512-token prefill timed per
# kernel (bench/dawn.mjs TRACE_GPU=1), with Dawn's toggles that drop a browser's safety
# work (DAWN_TOGGLES): none, disable_robustness (Tint's index clamps), disable_workgroup_init
# (zeroing workgroup memory at each workgroup's start), both; none again last (drift).
# Carried: .ab, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
pkg=/tmp/pkg-old; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"; tar -xJf ".ab/web-old.tar.xz" -C "$pkg/wasm"
for t in none disable_robustness disable_workgroup_init disable_robustness,disable_workgroup_init none; do
  tog=$t; [ "$t" = none ] && tog=
  echo "== toggles: $t"
  DAWN_TOGGLES=$tog TRACE_GPU=1 PROMPTS=512 REPS=1 GEN_TOKENS=8 TRACE_STEPS=4 timeout 200 bash .dawn/run.sh .dawn bench/dawn.mjs $pkg qwen15=/tmp/qwen15.gguf 2>&1 | grep '"model"' | python3 bench/results/f32-staging-h200/trace_summary.py
done | tee $R/toggles.txt
