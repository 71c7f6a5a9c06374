# Device call 5 (session 29): (a) the cooperative-matrix matmul_tiled staging its tiles
# as vec4s of f16 (two stores an invocation and step, not eight): the kernel tests, its
# profile, and main (46945aa) / bca1e17 (the split sums with the norm) / new2 (that and
# the vec4 staging) taking turns natively, two rounds, both Qwen shapes; (b) through Dawn,
# main's wasm against bca1e17's (the browser never runs the cooperative-matrix kernel),
# two rounds. Carried: .ab, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in old new new2; do xz -dc .ab/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
timeout 200 /tmp/gk 2>&1 | grep -v XDG > $R/gpu_kernels.txt; grep "test result" $R/gpu_kernels.txt
for b in new new2; do
  for pt in 512 4096; do
    echo "== $b $pt" >> $R/profile.txt
    timeout 120 .bench/kindling-$b bench /tmp/qwen15.gguf --backend gpu --prompt-tokens $pt --gen-tokens 16 --profile 2>&1 \
      | sed -n '/device time of the prefill/,/^$/p' | head -24 >> $R/profile.txt
  done
done
OUT=/tmp/o1 BINS="kindling-old kindling-new kindling-new2" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
grep "==\|device time\|MatmulTiled" $R/profile.txt
specs=; for m in $MODELS; do specs="$specs $m=/tmp/$m.gguf"; done
for side in old new; do
  pkg=/tmp/pkg-$side; mkdir -p "$pkg/wasm"; cp www/*.js "$pkg/"; tar -xJf ".ab/web-$side.tar.xz" -C "$pkg/wasm"
done
for round in 1 2; do
  for side in old new; do
    PROMPTS="512 4096" timeout 200 bash .dawn/run.sh .dawn bench/dawn.mjs "/tmp/pkg-$side" $specs 2>> "$R/dawn-stderr.txt" \
      | sed "s/^{/{\"build\":\"$side\",\"round\":$round,/" >> "$R/dawn.jsonl"
  done
done
python3 - $R/dawn.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'model' not in d: continue
    print(d['model'], d['build'], d['round'], {k: (round(v['prefill_tok_s']), round(v['decode_tok_s'])) for k, v in d.items() if isinstance(v, dict) and 'prefill_tok_s' in v})
PY
