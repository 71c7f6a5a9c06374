# Device call 6 (session 29): the cooperative-matrix prefill attention's split rule. A
# 512-token prompt's only chunk (span 512) splits its blocks in 2 (ATTN_COOP_SPLIT_POSITIONS
# 256), which costs an attn_combine dispatch. Build A: today's 256; build B: 512 (chunk 0
# unsplit, later chunks in half as many splits up to the target). op_timing at chunk
# starts 0 / 512 / 1,024 / 2,048 / 3,584 over the four model shapes, taking turns, two
# rounds. Carried: .ab, .gl.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
for v in A B; do xz -dc .ab/ot$v.xz > /tmp/ot$v; chmod +x /tmp/ot$v; done
for v in A B A B; do
  echo "== build $v"
  PER_KERNEL=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 1024 2048 3584" timeout 100 /tmp/ot$v 512 2>&1 | grep -i "attention\|combine\|== "
done | tee $OUT/attention.txt | grep "== \|prefill attention"
