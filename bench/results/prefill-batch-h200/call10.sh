# Device call 10 (session 31): which decode kernels the run-time checks slow (call 9: the
# browser's kernels decode 24-25% slower with wgpu's checks compiled in, about what Dawn
# reads). The final build's per-token device time by kernel (`--profile`), the 1.5B after
# 512 tokens, the browser's kernels (--no-subgroups --no-f16) without and with
# --checked-shaders, two runs each. Carried: .ab31, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15"
mkdir -p .bench; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
xz -dc .ab31/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
xz -dc .ab31/kindling-ropemt.xz > .bench/kindling; chmod +x .bench/kindling
for run in 1 2; do for checks in "" --checked-shaders; do
  echo "== run $run ${checks:-unchecked}" >> $R/profile.txt
  timeout 120 .bench/kindling bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 512 --gen-tokens 64 --repeat 1 --profile \
    --no-subgroups --no-f16 $checks 2>&1 | sed -n '/device time per decoded token/,/^$/p' | head -24 >> $R/profile.txt
done; done
cat $R/profile.txt
