# Device call 5 (session 35): where main's attention_tiled spends its time, by ablation:
# op_timing builds of main's kernel with one part taken out (wrong results; timing only):
#   A1: no loads of keys and values from the cache (a value from the index is stored in the
#       tile instead); A2: no scores' loop over head_dim; A3: the weighted sum over one
#       position of the tile instead of 16; A23: A2 and A3.
# NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 with ATTN_STARTS, two rounds in turns.
# Carried: .ab39/abl (the op_timing builds, stripped), .gl.
set -u
R=$OUT; export OUT=/tmp/o5; mkdir -p $OUT
MODELS=none; for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
for v in main A1 A2 A3 A23; do xz -dc .ab39/abl/op_timing-$v.xz > /tmp/op_timing-$v; chmod +x /tmp/op_timing-$v; done
for round in 1 2; do
  for v in main A1 A2 A3 A23; do
    echo "== $v, round $round"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="3584" timeout 100 /tmp/op_timing-$v 512 2>&1 | grep -E "attention 1"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="2048" timeout 100 /tmp/op_timing-$v 2048 2>&1 | grep -E "attention 1"
  done
done > $R/call5-op_timing.txt 2>&1
cat $R/call5-op_timing.txt
