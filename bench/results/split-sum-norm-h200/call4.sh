# Device call 4 (session 29): the cooperative-matrix split rule (SPLIT_K_COOP) at most 8
# spans of at least 128 values (today), 12 of 128, and 16 of 64: the Qwen2.5-1.5B's k and v
# (8 output tiles at 512 rows) run as 64 workgroups in 8 spans on 132 multiprocessors.
# op_timing per op (device time, the split sums included), three builds taking turns,
# two rounds. Carried: .ab, .gl.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
for v in 8 12 16; do xz -dc .ab/ot$v.xz > /tmp/ot$v; chmod +x /tmp/ot$v; done
for v in 8 12 16 8 12 16; do
  echo "== max_splits $v"
  PER_KERNEL=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 100 /tmp/ot$v 512 2>&1 | grep -v "^kernel variants\|^NVIDIA\|^ *$"
done | tee $OUT/op_timing.txt | tail -60
