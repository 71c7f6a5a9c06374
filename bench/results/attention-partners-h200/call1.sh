# Device call 1 (issue 29, the cooperative-matrix prefill attention): register counts from
# the driver (examples/pipeline_stats.rs), the attention kernel tests, then main (b090b3a)
# against the partnered kernel: op_timing at four chunk starts, builds taking turns, and
# `kindling bench` end to end. Carried: .ab2 (binaries, Qwen headers), .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab2/gguf_stub.py .ab2/*.hdr.json .bench/
for m in qwen15 qwen05; do xz -dc .ab2/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
for b in kindling-old kindling-new op_timing-old op_timing-new gpu_kernels pipeline_stats; do
  xz -dc .ab2/$b.xz > /tmp/$b; chmod +x /tmp/$b
done
timeout 60 /tmp/pipeline_stats 2>&1 | grep -v XDG | tee $R/call1-stats-new.txt
timeout 300 /tmp/gpu_kernels attention 2>&1 | grep -v XDG > $R/call1-gpu_kernels.txt
grep "test result\|FAILED\|panicked\|max |" $R/call1-gpu_kernels.txt | head -40
for round in 1 2; do
  for v in old new; do
    echo "== $v round $round"
    PER_KERNEL=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 120 /tmp/op_timing-$v 512 2>&1 | grep -i "attention\|AttnCombine"
  done
done > $R/call1-attention.txt 2>&1
cat $R/call1-attention.txt
cp /tmp/kindling-old .bench/kindling; cp /tmp/kindling-new .bench/kindling-new
OUT=/tmp/o1 MODELS=qwen15 PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call1-ab.md; cp /tmp/o1/ab.jsonl $R/call1-ab.jsonl; cat $R/call1-ab.md
