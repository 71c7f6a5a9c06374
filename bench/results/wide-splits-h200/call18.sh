# Device call 18 (session 28): vJ (call 17's fastest matmul_wide under Dawn) over the
# spans a dot product splits into: gate's shape (280 tiles) and down's (48 tiles) at
# several splits, then the whole grid again for v0 and vE at today's splits (4 and 8).
# The split sums' own dispatch is not timed here. Carried: .ab6, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
T=.ab6/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
{
  for s in 1 2 3 4 5 6; do bash .dawn/run.sh .dawn $T matmul_wide 512 8960 1536 $s .ab6/vJ.wgsl 2>&1; done
  for s in 4 5 6 7 8 10 11 12 14; do bash .dawn/run.sh .dawn $T matmul_wide 512 1536 8960 $s .ab6/vJ.wgsl 2>&1; done
  bash .dawn/run.sh .dawn $T matmul_wide 512 8960 1536 4 .ab6/v0.wgsl .ab6/vE.wgsl .ab6/vJ.wgsl 2>&1
  bash .dawn/run.sh .dawn $T matmul_wide 512 1536 8960 8 .ab6/v0.wgsl .ab6/vE.wgsl .ab6/vJ.wgsl 2>&1
} | tee $OUT/times.txt
