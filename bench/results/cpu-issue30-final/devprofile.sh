# Where SmolLM2's decode after 8 tokens goes at 1, 8 and 16 Xeon threads (KINDLING_CPU_PROFILE).
set -u
export VK_DRIVER_FILES=/nonexistent.json
MODELS="smollm2" source bench/device_setup.sh > /dev/null 2>&1
for t in 1 8 16; do for r in 1 2; do
  echo "== smollm2 threads $t round $r" >> $OUT/profile.txt
  KINDLING_CPU_PROFILE=1 .bench/kindling bench /tmp/smollm2.gguf --backend cpu --threads $t --prompt-tokens 8 --gen-tokens 128 2>&1 | grep -v "^ *$" | head -24 >> $OUT/profile.txt
done; done
