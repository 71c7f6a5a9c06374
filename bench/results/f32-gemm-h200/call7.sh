# Device call 7 (this session): SmolLM2-135M and Gemma-3-270M (no weight of 4 M values: no panels;
# the same kernels as main, in modules with the panel kernels beside them), main (2eb975b) against the panels build: natively with the browser's kernels
# (--no-subgroups --no-f16), natively with the default ones and through Dawn (bench/ab_dawn.sh).
# Carried: .ab, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS="smollm2 gemma3"
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; for m in $MODELS; do xz -dc .ab/$m.hdr.xz > .bench/$m.hdr; done
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" EXTRA="--no-subgroups --no-f16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call7-native-browser-kernels-ab.md; cp /tmp/o1/ab.jsonl $R/call7-native-browser-kernels-ab.jsonl
cat $R/call7-native-browser-kernels-ab.md
OUT=/tmp/o2 MODELS="smollm2 gemma3" PROMPTS="8 512 4096" ROUNDS=2 REPS=2 bash bench/ab_dawn.sh > /tmp/o2-log.txt 2>&1
cp /tmp/o2/ab.md $R/call7-ab.md; cp /tmp/o2/ab.jsonl $R/call7-ab.jsonl; cp /tmp/o2/dawn.jsonl $R/call7-dawn.jsonl; cp /tmp/o2-log.txt $R/call7-log.txt
cat $R/call7-ab.md
python3 - $R/call7-dawn.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'model' not in d: continue
    print(d['build'], d['round'], {k: (round(v['prefill_tok_s']), round(v['decode_tok_s'])) for k, v in d.items() if isinstance(v, dict) and 'prefill_tok_s' in v})
PY
