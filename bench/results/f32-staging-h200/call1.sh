# Device call 1: the f32 GEMM probe's staging variants of the 128 x 128 tile (the browser's
# prefill matmul_wide shape, variant 9) against it: one barrier a step (db), operands laid
# out in tiles beforehand (blk), 16 values a step; trusted modules and with bounds checks
# (CHECKED=1, as a browser compiles them); then each variant's registers from the driver.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L
for b in f32_gemm_probe pipeline_stats; do xz -dc .ab4/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
V=9,12,13,14,15,16,17
for round in 1 2; do
  echo "== probe, trusted, round $round"
  VARIANT=$V timeout 200 /tmp/f32_gemm_probe 2>&1 | grep -v XDG | tee -a $OUT/probe.txt
done
echo "== probe, checked"
CHECKED=1 VARIANT=$V timeout 200 /tmp/f32_gemm_probe 2>&1 | grep -v XDG | tee -a $OUT/probe-checked.txt
for v in 9 12 13 14 15 16 17; do
  PRINT=1 VARIANT=$v /tmp/f32_gemm_probe 2>/dev/null | grep -v '^"' > /tmp/v$v.wgsl
  echo "== registers, variant $v"
  WGSL=/tmp/v$v.wgsl ENTRY=gemm timeout 60 /tmp/pipeline_stats 2>&1 | grep -v XDG | tail -4
done
