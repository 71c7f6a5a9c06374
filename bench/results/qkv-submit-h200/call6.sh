# Device call 6 (session 30): the final build (046145e: q/k/v as one matmul on cooperative
# matrices and integer dot products, gate/up pairs apart, parts submitted natively) beside
# main (2289e60) at a short prompt too (64 tokens: the parts and a q/k/v matmul of one tile
# of rows), 512 and 4,096, two rounds, both Qwen shapes; its kernel tests on the H200.
# Carried: .ab, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in old new; do xz -dc .ab/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 240 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result\|panicked" $R/gpu_kernels.txt
OUT=/tmp/o1 BINS="kindling-old kindling-new" PROMPTS="64 512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
