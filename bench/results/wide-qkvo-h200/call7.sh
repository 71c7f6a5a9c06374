# Device call 7 (session 35): do the 1.5B's attention projections repay dequantized panels
# (dequant_rows + matmul_wide) at the browser's 2,048-row prefill batches? tuning.rs's
# wide_weight_pays took only weights of 4 M values or more, measured at 512 rows. op_timing
# of 019741a's tree with WIDE_EVERY=1 (every weight as panels) against the default rule,
# NO_COOP=1 (the browser's kernels) DEVICE=1 PER_KERNEL=1, at 512, 1,024 and 2,048 rows, two
# rounds in turns. Carried: .ab39 (op_timing, stripped), .gl.
set -u
R=$OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab39/op_timing.xz > /tmp/op_timing; chmod +x /tmp/op_timing
for round in 1 2; do
  for n in 512 1024 2048; do
    for w in rule every; do
      echo "== $w, n=$n, round $round"
      e=; [ $w = every ] && e=1
      env ${e:+WIDE_EVERY=1} NO_COOP=1 DEVICE=1 PER_KERNEL=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS=0 timeout 100 /tmp/op_timing $n 2>&1 | grep -v "attention" | grep -A4 "qwen15"
    done
  done
done > $R/call7-op_timing.txt 2>&1
grep -E "^==|qwen15" $R/call7-op_timing.txt
