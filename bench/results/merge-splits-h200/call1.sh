# Device call 1 (session 32): the decode attention's split merge taken into the o
# projection's matvec (a5d93ca, matvec_merged). The kernel tests on the H200 (the split
# records' new layout runs through the cooperative-matrix attention there); natively
# bench/ab.sh, the build against itself with the merge switched off (KX_NO_MERGE=1, a
# knob only in this experiment build), both Qwen shapes after 512 and 4,096 tokens; then
# the npm package's wasm through Dawn, main (0effecf) against the new build, alternating,
# three rounds. Carried: .ab32, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab32/gguf_stub.py .ab32/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab32/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab32/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling-new
xz -dc .ab32/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 200 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result\|panicked" $R/gpu_kernels.txt
OUT=/tmp/o1 BINS="kindling-new:KX_NO_MERGE=1 kindling-new" MODELS="qwen15 qwen05" PROMPTS="512 4096" ROUNDS=2 \
  timeout 200 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl; cat $R/ab.md
for side in old new; do
  pkg=/tmp/pkg-$side; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"
  tar -xJf ".ab32/web-$side.tar.xz" -C "$pkg/wasm"
done
for round in 1 2 3; do
  for side in old new; do
    PROMPTS="8 512 4096" timeout 100 bash .dawn/run.sh .dawn bench/dawn.mjs "/tmp/pkg-$side" qwen15=/tmp/qwen15.gguf \
      2>> $R/dawn-stderr.txt | sed "s/^{/{\"build\":\"$side\",\"round\":$round,/" >> $R/dawn.jsonl
  done
done
python3 - $R/dawn.jsonl <<'PY' | tee $R/dawn.md
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"build"')]
rows = [r for r in rows if 'model' in r]
print("| round | build | prefill 512 | prefill 4,096 | decode after 8 | after 512 | after 4,096 |")
print("|---:|---|---:|---:|---:|---:|---:|")
for r in rows:
    g = lambda p, k: f"{r[f'p{p}'][k]:,.0f}" if f'p{p}' in r else '-'
    print(f"| {r['round']} | {r['build']} | {g(512,'prefill_tok_s')} | {g(4096,'prefill_tok_s')} | {g(8,'decode_tok_s')} | {g(512,'decode_tok_s')} | {g(4096,'decode_tok_s')} |")
PY
tail -3 $R/dawn-stderr.txt
