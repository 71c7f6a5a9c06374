# Device call 5 (session 31): where a prefill's wall time goes beyond its device time. The
# trace build is the order build (3a42be1) with temporary host timestamps (KX_TRACE, not
# committed): each begin_batch, each submission (the time in CommandEncoder::finish and in
# Queue::submit) and each wait for the device. The 1.5B at 2,048 and 4,096 tokens in
# 2,048-row batches, one timed repetition after the warm-up. Carried: .ab31, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15"
mkdir -p .bench; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab31/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
xz -dc .ab31/kindling-trace.xz > .bench/kindling-trace; chmod +x .bench/kindling-trace
for pt in 2048 4096; do
  echo "== prompt $pt" >> $R/trace.txt
  KX_TRACE=1 timeout 120 .bench/kindling-trace bench /tmp/qwen15.gguf --backend gpu --prompt-tokens $pt --gen-tokens 4 --repeat 1 2>&1 \
    | grep -v XDG > /tmp/t.txt
  # The timed repetition: from the last begin_batch of the prompt's first rows on.
  n=$(grep -n "begin_batch.*rows from 0" /tmp/t.txt | tail -1 | cut -d: -f1)
  tail -n +$n /tmp/t.txt >> $R/trace.txt
done
cat $R/trace.txt | head -150
