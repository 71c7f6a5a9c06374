# Device call 4: the final build (v3's kernel, comments and docs settled) against main
# (b090b3a). The kernel tests (gpu_kernels, gpu_fusion) on cooperative matrices, register
# counts, op_timing of main, the final build and three split settings for the new kernel
# (ATTN_COOP_SPLIT_POSITIONS / ATTN_COOP_TARGET_GROUPS: 256/512 is the final's), then
# `kindling bench` end to end on both Qwen shapes and where a 4,096-token prefill's device
# time goes (--profile). Carried: .ab2 (main's binaries, headers), .ab3, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab2/gguf_stub.py .ab2/*.hdr.json .bench/
for m in qwen15 qwen05; do xz -dc .ab2/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in kindling-old op_timing-old; do xz -dc .ab2/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
for b in kindling-new op_timing-new op_timing-p256t264 op_timing-p256t1024 op_timing-p128t1024 gpu_kernels gpu_fusion pipeline_stats; do
  xz -dc .ab3/$b.xz > /tmp/$b; chmod +x /tmp/$b
done
timeout 60 /tmp/pipeline_stats 2>&1 | grep -v XDG | tee $R/call4-stats.txt
for t in gpu_kernels gpu_fusion; do
  timeout 300 /tmp/$t 2>&1 | grep -v XDG > $R/call4-$t.txt
  grep "test result\|FAILED\|panicked" $R/call4-$t.txt | head -20
done
for round in 1 2; do
  for v in old new p256t264 p256t1024 p128t1024; do
    echo "== $v round $round"
    PER_KERNEL=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 120 /tmp/op_timing-$v 512 2>&1 | grep -A2 "AttentionTiled" | grep -v "^--"
  done
done > $R/call4-attention.txt 2>&1
grep "prefill attention 12/2" $R/call4-attention.txt
for b in old new; do
  echo "== $b"; timeout 120 /tmp/kindling-$b bench /tmp/qwen15.gguf --prompt-tokens 4096 --gen-tokens 16 --profile 2>&1 | grep -v XDG | sed -n '/device time of the prefill/,/^$/p' | head -14
done > $R/call4-profile.txt
cat $R/call4-profile.txt
cp /tmp/kindling-old .bench/kindling; cp /tmp/kindling-new .bench/kindling-new
OUT=/tmp/o1 PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call4-ab.md; cp /tmp/o1/ab.jsonl $R/call4-ab.jsonl; cat $R/call4-ab.md
