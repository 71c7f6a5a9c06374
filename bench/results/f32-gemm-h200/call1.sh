# Device call 1 (this session): the f32 GEMM probe (weights f32 in memory already) against
# today's per-op prefill matmuls (main 2eb975b: op_timing, shader cores, as the browser).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L
for round in 1 2; do
  echo "== main op_timing round $round"
  NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 .ab1/op_timing-main 512 2>&1 | grep -i "prefill"
  echo "== main op_timing, f32 kernel only (NO_INT_BATCH) round $round"
  NO_INT_BATCH=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 .ab1/op_timing-main 512 2>&1 | grep -i "prefill [0-9]"
done
echo "== probe"
timeout 400 .ab1/f32_gemm_probe 2>&1 | grep -v XDG | tee $OUT/probe.txt
