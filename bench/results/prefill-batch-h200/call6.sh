# Device call 6 (session 31): RoPE tables kept for the batch across its parts (7th commit
# of the session, "rope" build) against the order build (3a42be1). First the trace build
# (rope + the temporary host timestamps of call 5) on the 1.5B at 2,048 and 4,096 tokens,
# then bench/ab.sh, both Qwen shapes at 512, 2,048 and 4,096 tokens, two rounds.
# Carried: .ab31, .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab31/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in order rope trace; do xz -dc .ab31/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
for pt in 2048 4096; do
  echo "== prompt $pt" >> $R/trace.txt
  KX_TRACE=1 timeout 120 .bench/kindling-trace bench /tmp/qwen15.gguf --backend gpu --prompt-tokens $pt --gen-tokens 4 --repeat 1 2>&1 \
    | grep -v XDG > /tmp/t.txt
  n=$(grep -n "begin_batch.*rows from 0" /tmp/t.txt | tail -1 | cut -d: -f1)
  tail -n +$n /tmp/t.txt | grep -v "^kx wait.*0.00. ms" >> $R/trace.txt
done
cat $R/trace.txt | grep -v "^model\|^backend\|^load\|^per token\|waiting for"
OUT=/tmp/o1 BINS="kindling-order kindling-rope" PROMPTS="512 2048 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
