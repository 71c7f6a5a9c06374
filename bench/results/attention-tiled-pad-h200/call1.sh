# Device call 1: the shader-core prefill attention (attention_tiled, the browser's kernel)
# with padded tiles, against main, per op. Builds in .ab1/: old (main fb51bdf), pad (tiles
# padded), v4 (pad + weights read a vec4 at a time), v4w (v4 also taking head_dim 256).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L
echo "== kernel tests (attention) on this GPU, the v4 tree"
timeout 300 .ab1/gpu_kernels attention 2>&1 | grep -v XDG | tail -12
for round in 1 2; do
  for b in old pad v4 v4w; do
    echo "== $b round $round"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 120 .ab1/op_timing-$b 512 2>&1 | grep -i "attention"
  done
done
