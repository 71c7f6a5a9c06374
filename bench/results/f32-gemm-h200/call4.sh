# Device call 4: per-kernel device times (PER_KERNEL=1) of the prefill matmuls: main, v3 (call
# 3), v4 = the probe's kernel transplanted (loads written out in the kernel, no edge tests),
# v5 = v4 with rows clamped and the span's end tested (the candidate); then the probe's
# 128 x 128 tk8 pf variant again on this machine.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L
for b in main v3 v4 v5; do xz -dc .ab2/op_timing-$b.xz > /tmp/op_timing-$b; chmod +x /tmp/op_timing-$b; done
xz -dc .ab2/f32_gemm_probe.xz > /tmp/probe; chmod +x /tmp/probe
for b in main v3 v4 v5; do
  echo "== $b"
  PER_KERNEL=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 /tmp/op_timing-$b 512 2>&1 | grep -v "XDG\|ttention\|Argmax\|KvStore\|AttnCombine"
done 2>&1 | tee $OUT/call4.txt
VARIANT=9 timeout 100 /tmp/probe 2>&1 | grep -v XDG | tee -a $OUT/call4.txt
