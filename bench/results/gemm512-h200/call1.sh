# Device call 1 (issue 29, native prefill): the cooperative-matrix gate/up GEMM
# (matmul_wide_coop.wgsl) in workgroups of 512 invocations (sixteen subgroups of 32 x 32,
# 32 values a step) against 256 (eight of 64 x 32, 64 a step; the build at 5edf626).
# Register counts, the kernel tests (panels), the per-kernel profile of both at 512 and
# 4,096 tokens, then `kindling bench` taking turns. Carried: .ab1, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab1/gguf_stub.py .ab1/*.hdr.json .bench/
for m in qwen15 qwen05; do xz -dc .ab1/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in kindling-base kindling-g512 gpu_kernels-g512 pipeline_stats-g512; do xz -dc .ab1/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
timeout 60 /tmp/pipeline_stats-g512 matmul_wide 2>&1 | grep -v XDG | tee $R/call1-stats.txt
timeout 300 /tmp/gpu_kernels-g512 2>&1 | grep -v XDG > $R/call1-gpu_kernels.txt
grep "test result\|FAILED\|panicked" $R/call1-gpu_kernels.txt | head -20
for p in 512 4096; do for b in base g512; do
  echo "== $b $p"; timeout 120 /tmp/kindling-$b bench /tmp/qwen15.gguf --prompt-tokens $p --gen-tokens 16 --profile 2>&1 | grep -v XDG | sed -n '/device time of the prefill/,/^$/p' | head -8
done; done > $R/call1-profile.txt
cat $R/call1-profile.txt
cp /tmp/kindling-base .bench/kindling; cp /tmp/kindling-g512 .bench/kindling-new
OUT=/tmp/o1 PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call1-ab.md; cp /tmp/o1/ab.jsonl $R/call1-ab.jsonl; cat $R/call1-ab.md
