# Device call 3a: the split dot products of the shader-core batch kernels (matmul_tiled.wgsl
# f32, matmul_int.wgsl integer dots), per op at four split targets, then the browser's
# kernels natively (--no-subgroups --no-f16) with the session's start (fb51bdf) and the
# new build taking turns. Carried: .ab (op_timing-tN.xz: SPLIT_K_TARGET_SHADER = N, t1 = no
# split; kindling-old.xz = fb51bdf, kindling-new.xz; the qwen15 header), .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen15.hdr.xz > .bench/qwen15.hdr
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
for t in t1 t256 t512 t1024; do xz -dc .ab/op_timing-$t.xz > /tmp/op_timing-$t; chmod +x /tmp/op_timing-$t; done
for round in 1 2; do
  for t in t1 t256 t512 t1024; do
    for v in "NO_COOP=1" "NO_COOP=1 NO_INT_BATCH=1"; do
      echo "== $t $v round $round"
      env $v DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 60 /tmp/op_timing-$t 512 2>&1 | grep "qwen15 prefill"
    done
  done
done > $R/op_timing.txt
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" EXTRA="--no-subgroups --no-f16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/native-browser-kernels-ab.md; cp /tmp/o1/ab.jsonl $R/native-browser-kernels-ab.jsonl; cp /tmp/o1/errors.txt $R/ 2>/dev/null
cat $R/native-browser-kernels-ab.md
