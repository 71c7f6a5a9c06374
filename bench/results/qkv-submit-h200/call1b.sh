# Device call 1, second command (session 30): Dawn, old against new wasm (see call1.sh).
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="qwen15 qwen05"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/
for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
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
