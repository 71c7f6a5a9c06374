# Device call 10 (session 35): how many workgroups attention_tiled's splits aim at
# (tuning::ATTN_TILE_TARGET_GROUPS: 1,024 at 2970193) under Dawn, where Tint's module gets 77
# registers (three workgroups a multiprocessor; call 6): wasm builds with 512 and 2,048
# against 1,024, the prefill's GPU time kernel by kernel (TRACE_GPU=1, 4,096 tokens; in the
# order 1024, 512, 2048, 2048, 512, 1024). Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o10; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for n in new tg512 tg2048; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab39/web-$n.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in new tg512 tg2048 tg2048 tg512 new; do
    TRACE_GPU=1 PROMPTS=4096 REPS=1 GEN_TOKENS=4 TRACE_STEPS=2 timeout 120 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call10-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call10-trace.jsonl
  done
done
python3 bench/results/attention-probes-h200/prefill_trace.py < $R/call10-trace.jsonl | grep -E "total|Attention|AttnCombine" | tee $R/call10-trace.txt
