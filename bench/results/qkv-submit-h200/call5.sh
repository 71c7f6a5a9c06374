# Device call 5 (session 30): q, k and v as one matmul on integer dot products too (the
# browser's prefill kernel for Q4_K; with three digits Q6_K stays on the f32 kernel, so
# where v is Q6_K only q and k join). Natively with the browser's kernels (--no-coop-matrix
# --no-subgroups --no-f16), main (2289e60) against this build, two rounds; the profile of
# this build's 512-token prefill that way; then through Dawn, main's wasm against this
# build's, two rounds. Carried: .ab, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
for b in old new; do xz -dc .ab/kindling-$b.xz > .bench/kindling-$b; chmod +x .bench/kindling-$b; done
B="--no-coop-matrix --no-subgroups --no-f16"
for b in old new; do
  echo "== $b 512 (browser kernels)" >> $R/profile.txt
  timeout 120 .bench/kindling-$b bench /tmp/qwen15.gguf --backend gpu --prompt-tokens 512 --gen-tokens 16 --profile $B 2>&1 \
    | sed -n '/device time of the prefill/,/^$/p' | head -30 >> $R/profile.txt
done
grep "==\|device time\|MatmulTiled\|SplitSum\|Quantize" $R/profile.txt
OUT=/tmp/o1 BINS="kindling-old kindling-new" PROMPTS="512 4096" ROUNDS=2 EXTRA="$B" bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/ab.md; cp /tmp/o1/ab.jsonl $R/ab.jsonl
cat $R/ab.md
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
