# Device call 19 (session 28): call 18's split sweep widened: the 1.5B's down at more
# spans, and the 0.5B's gate (4,864 × 896) and down (896 × 4,864), vJ under Dawn.
# Carried: .ab6, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
T=.ab6/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
{
  for s in 16 20 24 28 35; do bash .dawn/run.sh .dawn $T matmul_wide 512 1536 8960 $s .ab6/vJ.wgsl 2>&1; done
  for s in 8 12; do bash .dawn/run.sh .dawn $T matmul_wide 512 8960 1536 $s .ab6/vJ.wgsl 2>&1; done
  for s in 1 2 3 4 7; do bash .dawn/run.sh .dawn $T matmul_wide 512 4864 896 $s .ab6/vJ.wgsl 2>&1; done
  for s in 4 6 8 10 12 16 19; do bash .dawn/run.sh .dawn $T matmul_wide 512 896 4864 $s .ab6/vJ.wgsl 2>&1; done
} | tee $OUT/times.txt
