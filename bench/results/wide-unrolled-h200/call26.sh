# Device call 26 (session 28): why call 25's native run of the browser's kernels was 5%
# slower: matmul_wide natively (wgpu/naga, `op_timing`, PER_KERNEL, NO_COOP) in three
# forms, taking turns twice: vJ the step as a loop (ccf1b94), vU the step written out with
# named accumulators, vA written out as eight calls over an array of accumulators (this
# build's). Carried: .ab7, .gl.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
for v in vJ vU vA; do xz -dc .ab7/op_timing-$v.xz > /tmp/ot-$v; chmod +x /tmp/ot-$v; done
for v in vJ vU vA vJ vU vA; do
  echo "== $v"
  PER_KERNEL=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 100 /tmp/ot-$v 512 2>&1 | grep "MatmulWide\|8960"
done | tee $OUT/per-op.txt
