# Device call 9: the shader-core prefill attention with two rows per invocation (64-row
# blocks, 16-position tiles; "two") against cd0bacd's one row per invocation ("one"),
# per op, and the kernel tests on the H200 with "two".
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L
timeout 150 .ab1/gpu_kernels attention 2>&1 | grep -v XDG | grep -E "^test |test result"
for round in 1 2; do
  for b in one two; do
    echo "== $b round $round"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 120 .ab1/op_timing-$b 512 2>&1 | grep "attention"
  done
done
