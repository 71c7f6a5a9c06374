# the device had been handed back between the calls: a fresh machine, so the setup lines ran first (as in call1.sh)
# Device call 2 (same warm machine): the padded kernel (pad) at head_dim 256 too (pad256),
# and its split constants (ATTN_TILE_SPLIT_POSITIONS / ATTN_TILE_TARGET_GROUPS): pad =
# 128 / 1,024 (main's), s256 = 256 / 512, g2048 = 128 / 2,048, s64g2048 = 64 / 2,048.
for round in 1 2; do
  for b in pad pad256 s256 g2048 s64g2048; do
    echo "== $b round $round"
    NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 512 1024 2048 3584" timeout 120 .ab1/op_timing-$b 512 2>&1 | grep -i "attention"
  done
done
