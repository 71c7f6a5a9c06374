OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L
for round in 1 2; do
  for b in old new new2; do
    for n in 512 64; do
      echo "== f32 $b n=$n round $round"
      NO_COOP=1 NO_INT_BATCH=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 .ab1/op_timing-$b $n 2>&1 | grep -v "^kernel variants"
    done
  done
done
echo "== int (Q4_K and Q6_K on integer dots), new"
NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 120 .ab1/op_timing-new 512 2>&1 | grep -v "^kernel variants"
for b in old new new2; do
  echo "== general table f32 $b"
  NO_COOP=1 NO_INT_BATCH=1 DEVICE=1 timeout 120 .ab1/op_timing-$b 512 2>&1 | grep "matmul" | grep "n=512"
done
