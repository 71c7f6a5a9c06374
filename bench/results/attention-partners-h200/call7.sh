# Device call 7: the attention's device time inside the model at a 4,096-token prefill
# (`kindling bench --profile`), main (b090b3a), v1 (call 1's build) and v3 (the final), to
# see why v3's per-op gain over v1 in op_timing (1.14x) did not show end to end.
# Carried: .ab1, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15"
mkdir -p .bench; cp .ab1/gguf_stub.py .ab1/*.hdr.json .bench/
xz -dc .ab1/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
for b in main v1 v3; do xz -dc .ab1/kindling-$b.xz > /tmp/kindling-$b; chmod +x /tmp/kindling-$b; done
for round in 1 2; do for b in main v1 v3; do
  echo "== $b round $round"
  timeout 100 /tmp/kindling-$b bench /tmp/qwen15.gguf --prompt-tokens 4096 --gen-tokens 8 --profile 2>&1 | grep -v XDG | sed -n '/device time of the prefill/,/^$/p' | grep "device time\|AttentionTiled\|AttnCombine\|MatmulWide"
done; done | tee $R/call7-profile.txt
