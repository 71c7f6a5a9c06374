# Device call 28 (session 28): the final matmul_wide module, its step chosen by the
# WK_WRITTEN_OUT const (vS1: 1, as the wasm build has it; vS0: 0, native), under Dawn
# beside vA2 (written out, no switch) and vJ (the loop). Carried: .ab6, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
T=.ab6/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
{
  bash .dawn/run.sh .dawn $T matmul_wide 512 8960 1536 4 .ab6/vJ.wgsl .ab6/vA2.wgsl .ab6/vS1.wgsl .ab6/vS0.wgsl 2>&1
  bash .dawn/run.sh .dawn $T matmul_wide 512 1536 8960 16 .ab6/vJ.wgsl .ab6/vA2.wgsl .ab6/vS1.wgsl .ab6/vS0.wgsl 2>&1
} | tee $OUT/times.txt
