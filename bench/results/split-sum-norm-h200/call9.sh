# Device call 9 (session 29): what q and k (and v) of the Qwen2.5-1.5B would cost as one
# batch matmul (1,792 or 2,048 weight rows) against apart (1,536 + 256 + 256), on
# cooperative matrices and with the browser's kernels (NO_COOP), op_timing per op with
# the split sums, two rounds. Carried: .ab, .gl.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab/otq.xz > /tmp/otq; chmod +x /tmp/otq
for v in "" NO_COOP=1 "" NO_COOP=1; do
  echo "== $v"
  env $v PER_KERNEL=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 100 /tmp/otq 512 2>&1 | grep -v "attention\|Attention\|AttnCombine\|KvStore\|Argmax\|^kernel variants\|^NVIDIA" | head -40
done | tee $OUT/qkv.txt | grep "== \|qwen15 prefill"
