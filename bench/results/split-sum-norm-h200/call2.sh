# Device call 2 (session 29): call 1's fused kernel took as long as the two dispatches it
# replaced (27.7 µs against 13.75 + 13.86), one load round per span and column. Now the
# spans' loads are issued SUM_STEP (8) at a time, clamped instead of skipped, in
# matmul_split_sum and in matmul_split_sum_norm (which sums SUM_COLS columns at once).
# Main (46945aa) against it natively, three rounds, both Qwen shapes; each build's profile
# of a 512- and a 4,096-token prefill of the 1.5B; the kernel tests. Carried: .ab, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 200 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result" $R/gpu_kernels.txt
for b in kindling kindling-new; do
  for pt in 512 4096; do
    echo "== $b $pt" >> $R/profile.txt
    timeout 120 .bench/$b bench /tmp/qwen15.gguf --backend gpu --prompt-tokens $pt --gen-tokens 16 --profile 2>&1 \
      | sed -n '/device time of the prefill/,/^$/p' | head -24 >> $R/profile.txt
  done
done
OUT=/tmp/o1 BINS="kindling kindling-new" PROMPTS="512 4096" ROUNDS=3 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
grep -A16 "== " $R/profile.txt | grep "==\|device time\|Split\|RmsNorm"
