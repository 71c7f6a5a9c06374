# Device call 1 (issue 29, native prefill): the cooperative-matrix GEMM probe over f16
# operands (new: the next step's loads in flight, f32 activations converted while loading,
# 64 × 64 per subgroup, split spans), then where a 4,096-token prefill's device time goes
# per kernel (`kindling bench --profile`), natively and with the browser's kernels.
# Carried: .ab (probe, kindling, qwen15 header), .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab/coop_gemm_probe.xz > /tmp/probe; chmod +x /tmp/probe
timeout 240 /tmp/probe 2>&1 | grep -v XDG | tee $R/call1-probe.txt
xz -dc .ab/kindling.xz > /tmp/kindling; chmod +x /tmp/kindling
for extra in "" "--no-subgroups --no-f16"; do
  for p in 512 4096; do
    echo "== prefill $p $extra"
    timeout 120 /tmp/kindling bench /tmp/qwen15.gguf --prompt-tokens $p --gen-tokens 16 --profile $extra 2>&1 | grep -v XDG
  done
done 2>&1 | tee $R/call1-profile.txt
