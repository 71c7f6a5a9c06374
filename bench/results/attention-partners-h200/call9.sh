# Device call 9: does the model rescale its sums of V often? The final build against the
# same with RESCALE_MARGIN 10 (weights up to e^10 = 22,026, still within f16) instead of 8:
# the attention tests with margin 10, then the attention's device time inside the model at
# 512 and 4,096 tokens (`kindling bench --profile`), builds taking turns. Carried: .ab1, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15"
mkdir -p .bench; cp .ab1/gguf_stub.py .ab1/*.hdr.json .bench/
xz -dc .ab1/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
for b in kindling-v3 kindling-m10 gpu_kernels-m10; do xz -dc .ab1/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
timeout 120 /tmp/gpu_kernels-m10 attention 2>&1 | grep -v XDG > $R/call9-gpu_kernels-m10.txt
grep "test result\|FAILED\|panicked" $R/call9-gpu_kernels-m10.txt | head
for round in 1 2; do for p in 512 4096; do for b in v3 m10; do
  echo "== $b $p round $round"
  timeout 60 /tmp/kindling-$b bench /tmp/qwen15.gguf --prompt-tokens $p --gen-tokens 8 --profile 2>&1 | grep -v XDG | sed -n '/device time of the prefill/,/^$/p' | grep "device time\|AttentionTiled"
done; done; done | tee $R/call9-profile.txt
