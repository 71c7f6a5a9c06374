# Device call 1 (session 30): two changes beside main (2289e60), natively and through Dawn.
# (a) A prompt's chunk is submitted in parts while it is recorded (PREFILL_FIRST_SUBMIT:
#     after 16 dispatches, then 32, 64, ... up to 256 a part), so the device starts on the
#     first layers while the host records the rest.
# (b) On cooperative matrices a layer's q, k and v are one matmul_tiled over the three
#     weights side by side, then matmul_split_sum_multi routes each column's sum to its
#     output (was: three matmuls and three split sums).
# Builds: old = main; multi = (b) alone (parts off); new = (a) + (b). The kernel tests of
# the new build on the H200 (the only place the cooperative-matrix kernel runs); each
# build's profile of the 1.5B's 512-token prefill; bench/ab.sh, two rounds, both Qwen
# shapes at 512 and 4,096 tokens; Dawn: old against new wasm (the browser never runs the
# cooperative-matrix kernel, so only (a) differs), two rounds. Carried: .ab, .gl, .dawn.
# (This file: the native part; call1b.sh: Dawn's, in a second command of the same call.)
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in old multi new; do xz -dc .ab/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 240 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result\|qkv case\|panicked" $R/gpu_kernels.txt
for b in old multi new; do
  echo "== $b 512" >> $R/profile.txt
  timeout 120 .bench/kindling-$b bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 512 --gen-tokens 16 --profile 2>&1 \
    | sed -n '/device time of the prefill/,/^$/p' | head -26 >> $R/profile.txt
done
grep "==\|device time\|MatmulTiled\|SplitSum" $R/profile.txt
OUT=/tmp/o1 BINS="kindling-old kindling-multi kindling-new" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl; cp /tmp/o1/errors.txt $R/ab-errors.txt 2>/dev/null
cat $R/ab.md
