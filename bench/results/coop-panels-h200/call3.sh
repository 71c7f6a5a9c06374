# Device call 3: the cooperative-matrix prefill attention with its staging's loads in flight
# together (A), then also the values staged right after the scores (B), then also each
# invocation's scores read once into registers (C): the attention kernel tests of B and C
# on the H200, then op_timing of main (base), A, B and C taking turns, two rounds.
# Carried: .ab (op_timing and gpu_kernels builds), .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
for v in B C; do
  xz -dc .ab/gk-$v.xz > /tmp/gk-$v; chmod +x /tmp/gk-$v
  echo "== gpu_kernels $v (attention)"
  timeout 200 /tmp/gk-$v attention 2>&1 | grep -v XDG
done > $R/call3-gpu_kernels.txt 2>&1
grep "test result\|FAIL\|panicked" $R/call3-gpu_kernels.txt
for v in base A B C; do xz -dc .ab/ot-$v.xz > /tmp/ot-$v; chmod +x /tmp/ot-$v; done
for round in 1 2; do
  for v in base A B C; do
    echo "== $v round $round"
    PER_KERNEL=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 100 /tmp/ot-$v 512 2>&1 | grep "AttentionTiled\|prefill attention"
  done
done > $R/call3-attention.txt 2>&1
grep "prefill attention" $R/call3-attention.txt
