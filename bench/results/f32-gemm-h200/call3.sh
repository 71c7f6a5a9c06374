# Device call 3: per-kernel device times (PER_KERNEL=1) of the prefill matmuls, main and four
# builds of the panels: v0 = 609f83f; v1 = loads clamped, not tested per row; v2 = v1 +
# dequant_rows 8 values an invocation (dq8); v3 = v2 + stores without per-value tests.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L
for b in main v0 v1 v2 v3; do xz -dc .ab2/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
for b in main v0 v1 v2 v3; do
  echo "== $b"
  PER_KERNEL=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 /tmp/op_timing-$b 512 2>&1 | grep -v "XDG\|attention\|Argmax"
done 2>&1 | tee $OUT/call3.txt
