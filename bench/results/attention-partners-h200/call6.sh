# Device call 6: the final kernel (base: 5edf626's build) against the same with each tile's
# values staged before the softmax instead of after it (one barrier fewer a tile; the
# softmax's barriers cover the staging). The attention kernel tests, op_timing taking
# turns, `kindling bench` on the 1.5B's shapes. Carried: .ab1, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15"
mkdir -p .bench; cp .ab1/gguf_stub.py .ab1/*.hdr.json .bench/
xz -dc .ab1/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
for b in kindling-base kindling-pf op_timing-base op_timing-pf gpu_kernels-pf; do xz -dc .ab1/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
timeout 200 /tmp/gpu_kernels-pf attention 2>&1 | grep -v XDG > $R/call6-gpu_kernels-pf.txt
grep "test result\|FAILED\|panicked" $R/call6-gpu_kernels-pf.txt | head
for round in 1 2; do for v in base pf; do
  echo "== $v round $round"
  DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 100 /tmp/op_timing-$v 512 2>&1 | grep "prefill attention"
done; done > $R/call6-attention.txt 2>&1
cat $R/call6-attention.txt
cp /tmp/kindling-base .bench/kindling; cp /tmp/kindling-pf .bench/kindling-new
OUT=/tmp/o1 PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call6-ab.md; cp /tmp/o1/ab.jsonl $R/call6-ab.jsonl; cat $R/call6-ab.md
