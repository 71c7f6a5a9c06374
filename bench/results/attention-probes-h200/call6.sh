# Device call 6 (session 35): attention_tiled with tiles of 32 positions again
# (attention-tiles-h200/tiles32.patch, applied to 0c40699), after call 5's ablation found
# half of main's time outside the scores' and the weighted sum's loops (a tile's
# bookkeeping and barriers, which tiles of 32 halve per position):
# 1. the driver's registers for Tint's SPIR-V of each browser module (main's, the patch's
#    with tiles of 16 and of 32; tint_spirv.mjs, spirv-as, pipeline_stats SPV=) beside
#    naga's SPIR-V of the same WGSL;
# 2. natively per op (op_timing of the patch; NARROW_ATTN=1: tiles of 16), two rounds in
#    turns — call 1 of attention-tiles-h200 measured nothing natively;
# 3. through Dawn the prefill's GPU time kernel by kernel (TRACE_GPU=1, 4,096 tokens;
#    main, tiles of 32, tiles of 32, main). Carried: .ab39, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o6; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab39/gguf_stub.py .ab39/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab39/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
T=.ab39/t32
xz -dc $T/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
mkdir -p /tmp/spv/bin /tmp/spv/lib; cp $T/spirv-as /tmp/spv/bin/; cp $T/libSPIRV-Tools-shared.so /tmp/spv/lib/
for v in main tp16 tp32; do
  bash .dawn/run.sh .dawn $T/tint_spirv.mjs attention_tiled $T/$v.wgsl > /tmp/$v.log 2>&1
  python3 $T/extract_spirv.py < /tmp/$v.log > /tmp/$v.spvasm
  LD_LIBRARY_PATH=/tmp/spv/lib /tmp/spv/bin/spirv-as --target-env vulkan1.3 /tmp/$v.spvasm -o /tmp/$v.spv 2>&1 | tail -2
  echo "== $v naga: $(WGSL=$T/$v.wgsl ENTRY=attention_tiled /tmp/ps 2>&1 | grep -v XDG | tail -1)"
  echo "== $v tint: $(SPV=/tmp/$v.spv SPV_ENTRY=dawn_entry_point WGSL=$T/$v.wgsl ENTRY=attention_tiled /tmp/ps 2>&1 | grep -v XDG | tail -1)"
done > $R/call6-registers.txt 2>&1
cat $R/call6-registers.txt
xz -dc $T/op_timing-t32.xz > /tmp/op_timing; chmod +x /tmp/op_timing
for round in 1 2; do
  for b in 16 32; do
    echo "== tiles of $b, round $round"
    n=; [ $b = 16 ] && n=1
    env ${n:+NARROW_ATTN=1} NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 3584" timeout 100 /tmp/op_timing 512 2>&1 | grep -E "attention 1|kernel variants"
    env ${n:+NARROW_ATTN=1} NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 2048" timeout 100 /tmp/op_timing 2048 2>&1 | grep -E "attention 1"
  done
done > $R/call6-op_timing.txt 2>&1
cat $R/call6-op_timing.txt
for n in head t32; do
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  f=.ab39/web-head.tar.xz; [ $n = t32 ] && f=$T/web-t32.tar.xz
  tar -xJf $f -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in head t32 t32 head; do
    TRACE_GPU=1 PROMPTS=4096 REPS=1 GEN_TOKENS=4 TRACE_STEPS=2 timeout 120 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call6-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call6-trace.jsonl
  done
done
python3 bench/results/attention-probes-h200/prefill_trace.py < $R/call6-trace.jsonl | grep -E "total|Attention" | tee $R/call6-trace.txt
