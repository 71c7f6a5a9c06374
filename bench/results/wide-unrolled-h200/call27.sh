# Device call 27 (session 28): vAL, vA's step as a loop over one call of wide_products (the
# array of accumulators kept), beside vJ, vU and vA: natively (op_timing, naga) and under
# Dawn (dawn_kernel_time.mjs; vA2 is vA as `kindling shaders` gives it, vAL the same with
# the loop). Carried: .ab6, .ab7, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
for v in vJ vAL vU vA; do xz -dc .ab7/op_timing-$v.xz > /tmp/ot-$v; chmod +x /tmp/ot-$v; done
T=.ab6/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
{
  for v in vJ vAL vU vA vJ vAL vU vA; do
    echo "== $v"
    PER_KERNEL=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 100 /tmp/ot-$v 512 2>&1 | grep "MatmulWide"
  done
  bash .dawn/run.sh .dawn $T matmul_wide 512 8960 1536 4 .ab6/vJ.wgsl .ab6/vAL.wgsl .ab6/vA2.wgsl 2>&1
  bash .dawn/run.sh .dawn $T matmul_wide 512 1536 8960 16 .ab6/vJ.wgsl .ab6/vAL.wgsl .ab6/vA2.wgsl 2>&1
} | tee $OUT/times.txt
