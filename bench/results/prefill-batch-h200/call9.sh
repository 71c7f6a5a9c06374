# Device call 9 (session 31): what of the browser's decode gap (Dawn 71-86% of native in
# call 8) the kernels explain. The final build natively, decode after 8 and 512 tokens,
# with: its own kernels; the browser's (--no-subgroups --no-f16: no subgroups, no f16, so
# no cooperative matrices); the browser's with wgpu's run-time checks compiled in
# (--checked-shaders: bounds clamps and loop counters, as a browser's compiler adds its
# own). bench/ab.sh, both Qwen shapes, three rounds. Carried: .ab31, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab31/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
xz -dc .ab31/kindling-ropemt.xz > .bench/kindling; chmod +x .bench/kindling
# ab.sh passes EXTRA to every binary; the variants are wrappers that add their flags.
printf '#!/bin/sh\nexec .bench/kindling "$@" --no-subgroups --no-f16\n' > .bench/kindling-browser
printf '#!/bin/sh\nexec .bench/kindling "$@" --no-subgroups --no-f16 --checked-shaders\n' > .bench/kindling-checked
chmod +x .bench/kindling-browser .bench/kindling-checked
OUT=/tmp/o1 BINS="kindling kindling-browser kindling-checked" PROMPTS="8 512" ROUNDS=3 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl; cp /tmp/o1/errors.txt $R/errors.txt 2>/dev/null
cat $R/ab.md
