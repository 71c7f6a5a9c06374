# Device call 6: the shader-core attention's weighted-sum loop in three forms, per op: A, no
# test on the head's width around the vec4s 16..31; B, a uniform test inside the loop; C,
# the tests outside the loop (two loops).
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L
for round in 1 2; do
  for b in A B C; do
    echo "== $b round $round"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 2048 3584" timeout 120 .ab1/op_timing-$b 512 2>&1 | grep "attention"
  done
done
