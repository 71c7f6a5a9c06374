# Device call 8: main (97d2919) against the new build (b3988ca) natively and through Dawn
# (the npm package's wasm; the browser's path changes only in dequant_rows' vec4 stores),
# Qwen2.5-1.5B, prompts of 512 and 4,096 tokens, two rounds. Carried: .ab, .gl, .dawn.
set -u
# (Written straight into $OUT, so that a cut call still returns what ran.)
MODELS=qwen15 PROMPTS="512 4096" ROUNDS=2 bash bench/ab_dawn.sh > $OUT/log.txt 2>&1
cat $OUT/ab.md
python3 - $OUT/dawn.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'model' not in d: continue
    print(d['build'], d['round'], {k: (round(v['prefill_tok_s']), round(v['decode_tok_s'])) for k, v in d.items() if isinstance(v, dict) and 'prefill_tok_s' in v})
PY
