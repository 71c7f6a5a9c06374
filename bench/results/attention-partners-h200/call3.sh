# Device call 3: v1 (call 1's kernel) against v3: workgroups of 512 invocations, sixteen
# subgroups, four partners per 16 rows (so the driver may give an invocation at most 128
# registers), head_dim padded to a multiple of 64. For the scores each partner takes 16 of
# a tile's positions over all of head_dim (wide heads: 16 positions of a quarter); for the
# weighted sum, a quarter of head_dim (wide: an eighth). Register counts, the attention
# kernel tests (v3), op_timing of main, v1 and v3 taking turns, then `kindling bench` of
# the three. Carried: .ab2, .ab3, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15"
mkdir -p .bench; cp .ab2/gguf_stub.py .ab2/*.hdr.json .bench/
xz -dc .ab2/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
for b in kindling-old kindling-new op_timing-old op_timing-new; do xz -dc .ab2/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
for b in kindling-v3 op_timing-v3 gpu_kernels-v3 pipeline_stats-v3; do xz -dc .ab3/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
timeout 60 /tmp/pipeline_stats-v3 attention 2>&1 | grep -v XDG | tee $R/call3-stats-v3.txt
timeout 300 /tmp/gpu_kernels-v3 attention 2>&1 | grep -v XDG > $R/call3-gpu_kernels-v3.txt
grep "test result\|FAILED\|panicked" $R/call3-gpu_kernels-v3.txt | head -20
for round in 1 2; do
  for v in old new v3; do
    echo "== $v round $round"
    PER_KERNEL=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 120 /tmp/op_timing-$v 512 2>&1 | grep "prefill attention"
  done
done > $R/call3-attention.txt 2>&1
cat $R/call3-attention.txt
cp /tmp/kindling-old .bench/kindling; cp /tmp/kindling-new .bench/kindling-new; cp /tmp/kindling-v3 .bench/kindling-v3
OUT=/tmp/o1 BINS="kindling kindling-new kindling-v3" MODELS=qwen15 PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call3-ab.md; cp /tmp/o1/ab.jsonl $R/call3-ab.jsonl; cat $R/call3-ab.md
