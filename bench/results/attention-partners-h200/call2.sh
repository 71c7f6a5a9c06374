# Device call 2: the partnered kernel (v1: call 1's, tiles of 64 positions on narrow heads,
# each partner taking half the tile's scores over all of head_dim) against v2 (tiles of 32
# on every head, each partner taking a share of head_dim for both products, partial scores
# added when read): register counts, the attention kernel tests (v2), op_timing of main,
# v1 and v2 taking turns, then `kindling bench` of the three. Carried: .ab2, .ab3, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15"
mkdir -p .bench; cp .ab2/gguf_stub.py .ab2/*.hdr.json .bench/
xz -dc .ab2/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
for b in kindling-old kindling-new op_timing-old op_timing-new; do xz -dc .ab2/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
for b in kindling-v2 op_timing-v2 gpu_kernels-v2 pipeline_stats-v2; do xz -dc .ab3/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
timeout 60 /tmp/pipeline_stats-v2 attention 2>&1 | grep -v XDG | tee $R/call2-stats-v2.txt
timeout 300 /tmp/gpu_kernels-v2 attention 2>&1 | grep -v XDG > $R/call2-gpu_kernels-v2.txt
grep "test result\|FAILED\|panicked" $R/call2-gpu_kernels-v2.txt | head -20
for round in 1 2; do
  for v in old new v2; do
    echo "== $v round $round"
    PER_KERNEL=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 120 /tmp/op_timing-$v 512 2>&1 | grep "prefill attention"
  done
done > $R/call2-attention.txt 2>&1
cat $R/call2-attention.txt
cp /tmp/kindling-old .bench/kindling; cp /tmp/kindling-new .bench/kindling-new; cp /tmp/kindling-v2 .bench/kindling-v2
OUT=/tmp/o1 BINS="kindling kindling-new kindling-v2" MODELS=qwen15 PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call2-ab.md; cp /tmp/o1/ab.jsonl $R/call2-ab.jsonl; cat $R/call2-ab.md
