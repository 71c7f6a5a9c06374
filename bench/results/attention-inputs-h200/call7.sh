# Device call 7 (the session's last): attention_coop.wgsl without its always-true branches
# (q2/q3 behind qw > 32, coop_emit's width), checked by the kernel tests on the H200 (the
# only place the cooperative attention runs) and timed end to end against main (273f74d)
# at 4,096 tokens; then op_timing's prefill attention over random queries, keys and cache
# (new default) against zeros (ATTN_ZEROS=1, as before). Carried: .ab, .ab4, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
xz -dc .ab4/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 300 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result" $R/gpu_kernels.txt
xz -dc .ab4/op_timing-new.xz > /tmp/op_timing; chmod +x /tmp/op_timing
for round in 1 2; do
  for z in "" 1; do
    echo "== round $round ATTN_ZEROS=$z"
    ATTN_ZEROS=$z PER_KERNEL=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 150 /tmp/op_timing 512 2>&1 | grep -A3 "prefill attention"
  done
done > $R/attention-op_timing.txt 2>&1
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" PROMPTS="4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
grep "prefill attention" $R/attention-op_timing.txt | head -40
