# Device call 3 (session 33): issue 29's floors with this session's final build (the browser's
# 2,048-row prefill batches, the kvCacheType option at its f32 default): the npm package's
# wasm through Dawn beside `kindling bench` natively, alternating, two rounds (bench/dawn.sh),
# then llama.cpp's Vulkan server beside `kindling bench` (bench/llama_server.sh, two rounds of
# two), the 1.5B after 8, 512 and 4,096 tokens. The CLI binary is call 1's (its GPU batch
# rows are the same 2,048). Carried: .ab38, .gl, .dawn, .llama.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export MODELS=qwen15
mkdir -p .bench/web; cp .ab38/gguf_stub.py .ab38/qwen15.hdr.json .bench/
xz -dc .ab38/qwen15.hdr.xz > .bench/qwen15.hdr
xz -dc .ab38/kindling.xz > .bench/kindling; chmod +x .bench/kindling
tar -xJf .ab38/web.tar.xz -C .bench/web
PROMPTS="8 512 4096" ROUNDS=2 timeout 300 bash bench/dawn.sh > $OUT/dawn.log 2>&1
cp $OUT/native.jsonl $OUT/dawn.jsonl $R/ 2>/dev/null; tail -3 $OUT/stderr.txt > $R/dawn-stderr-tail.txt 2>/dev/null
python3 - $R/native.jsonl $R/dawn.jsonl <<'PY' | tee $R/dawn-table.md
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
ROUNDS=2 REPS=2 GEN=128 PROMPTS=8,512,4096 timeout 230 bash bench/llama_server.sh > $OUT/ls.log 2>&1
cp $OUT/table.md $R/llama-table.md; cat $OUT/kindling.jsonl $OUT/llama.jsonl > $R/llama-raw.jsonl 2>/dev/null
tail -5 $OUT/ls.log > $R/llama-tail.txt
cat $R/llama-table.md
