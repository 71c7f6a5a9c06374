# Device call 4: per op, (a) the shader-core attention's weighted sum reading each weight once
# (base) against HEAD a01031d (head); (b) what the integer-dot matmul's activation
# quantization costs: nox skips its arithmetic (a timing probe; wrong results); (c) the
# cooperative-matrix matmul's split target and least span (coop512, coop1024: target 256 ->
# 512 / 1,024; span128: least span 256 -> 128; coop1024span128: both).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L
for round in 1 2; do
  for b in head base nox; do
    echo "== shader cores $b round $round"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 120 .ab1/op_timing-$b 512 2>&1 | grep "prefill"
  done
  for b in base coop512 coop1024 span128 coop1024span128; do
    echo "== coop $b round $round"
    DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 .ab1/op_timing-$b 512 2>&1 | grep "qwen15 prefill"
  done
done
