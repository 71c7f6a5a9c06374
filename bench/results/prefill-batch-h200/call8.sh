# Device call 8 (session 31): the browser's floors with the final build (f4417e6): the npm
# package's wasm through Dawn beside `kindling bench` natively, alternating, two rounds
# (bench/dawn.sh), the 1.5B at 8, 512 and 4,096 tokens. The wasm keeps 512-row batches and
# one submission a batch; of this session's changes it has the attention's block order
# and the RoPE power taken once a pair. Carried: .ab31, .web31, .gl, .dawn.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
mkdir -p .bench/web; cp .ab31/gguf_stub.py .ab31/*.hdr.json .bench/
xz -dc .ab31/qwen15.hdr.xz > .bench/qwen15.hdr
xz -dc .ab31/kindling-ropemt.xz > .bench/kindling; chmod +x .bench/kindling
tar -xJf .web31/web.tar.xz -C .bench/web
MODELS=qwen15 PROMPTS="8 512 4096" ROUNDS=2 timeout 500 bash bench/dawn.sh > $OUT/dawn.log 2>&1
cp $OUT/native.jsonl $OUT/dawn.jsonl $R/ 2>/dev/null; tail -3 $OUT/stderr.txt > $R/stderr-tail.txt 2>/dev/null
python3 - $R/native.jsonl $R/dawn.jsonl <<'PY' | tee $R/table.md
import json, sys
native = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
dawn = [json.loads(l) for l in open(sys.argv[2]) if l.startswith('{')]
dawn = [d for d in dawn if 'model' in d]
print("| prompt | native prefill (rounds) | Dawn prefill | native decode | Dawn decode |")
print("|---:|---|---|---|---|")
for pt in (8, 512, 4096):
    n = [r for r in native if r['prompt_tokens'] == pt]
    d = [r[f'p{pt}'] for r in dawn if f'p{pt}' in r]
    f = lambda xs, k: ' / '.join(f"{x[k]:,.0f}" for x in xs)
    print(f"| {pt} | {f(n, 'prefill_tok_s')} | {f(d, 'prefill_tok_s')} | {f(n, 'decode_tok_s')} | {f(d, 'decode_tok_s')} |")
PY
