# Device call 6 (this session): Qwen2.5-0.5B (its gate/up/down, 4.4 M values each, take panels;
# its q/o/k/v do not), main (2eb975b) against the panels build: natively with the browser's kernels
# (--no-subgroups --no-f16), natively with the default ones and through Dawn (bench/ab_dawn.sh).
# Carried: .ab, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen05
mkdir -p .bench; cp .ab/gguf_stub.py .ab/*.hdr.json .bench/; xz -dc .ab/qwen05.hdr.xz > .bench/qwen05.hdr
source bench/device_setup.sh
cp $OUT/gpu.txt $R/
xz -dc .ab/kindling-old.xz > .bench/kindling; xz -dc .ab/kindling-new.xz > .bench/kindling-new; chmod +x .bench/kindling .bench/kindling-new
OUT=/tmp/o1 BINS="kindling kindling-new" EXTRA="--no-subgroups --no-f16" PROMPTS="512 4096" ROUNDS=2 bash bench/ab.sh > /dev/null 2>&1
cp /tmp/o1/ab.md $R/call6-native-browser-kernels-ab.md; cp /tmp/o1/ab.jsonl $R/call6-native-browser-kernels-ab.jsonl
cat $R/call6-native-browser-kernels-ab.md
OUT=/tmp/o2 MODELS=qwen05 PROMPTS="8 512 4096" ROUNDS=2 REPS=2 bash bench/ab_dawn.sh > /tmp/o2-log.txt 2>&1
cp /tmp/o2/ab.md $R/call6-ab.md; cp /tmp/o2/ab.jsonl $R/call6-ab.jsonl; cp /tmp/o2/dawn.jsonl $R/call6-dawn.jsonl; cp /tmp/o2-log.txt $R/call6-log.txt
cat $R/call6-ab.md
python3 - $R/call6-dawn.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'model' not in d: continue
    print(d['build'], d['round'], {k: (round(v['prefill_tok_s']), round(v['decode_tok_s'])) for k, v in d.items() if isinstance(v, dict) and 'prefill_tok_s' in v})
PY
