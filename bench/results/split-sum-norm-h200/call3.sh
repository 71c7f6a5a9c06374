# Device call 3 (session 29): dequant_rows writing DQ_STEP vec4s an invocation (their
# weight loads in flight together) at 2, 4 and 8, against one (the base: call 2's new
# build, bca1e17). Profiles of a 512-token prefill of the 1.5B with the default kernels and
# with the browser's (--no-subgroups --no-f16: f32 panels for gate, up and down); then the
# four builds taking turns, two rounds. Carried: .ab, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in base dq2 dq4 dq8; do xz -dc .ab/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
for extra in "" "--no-subgroups --no-f16"; do
  for b in base dq2 dq4 dq8; do
    echo "== $b $extra" >> $R/profile.txt
    timeout 120 .bench/kindling-$b bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 512 --gen-tokens 16 --profile $extra 2>&1 \
      | sed -n '/device time of the prefill/,/^$/p' | head -24 >> $R/profile.txt
  done
done
OUT=/tmp/o1 BINS="kindling-base kindling-dq2 kindling-dq4 kindling-dq8" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
grep "==\|device time\|Dequant" $R/profile.txt
