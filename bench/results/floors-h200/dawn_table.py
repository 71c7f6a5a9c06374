# bench/dawn.sh's native.jsonl and dawn.jsonl as a table: per model and prompt, each round's
# native and Dawn figures, and Dawn's decode as a share of native (each round's Dawn over the
# median native).
import json
import statistics
import sys

native = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
dawn = [json.loads(l) for l in open(sys.argv[2]) if l.startswith('{')]
dawn = [d for d in dawn if 'model' in d]
print("| model | prompt | native prefill | Dawn prefill | native decode | Dawn decode | Dawn decode ÷ native |")
print("|---|---:|---|---|---|---|---|")
for model in dict.fromkeys(d['model'] for d in dawn):
    for pt in sorted({int(k[1:]) for d in dawn for k in d if k[1:].isdigit() and k[0] == 'p'}):
        n = [r for r in native if r['prompt_tokens'] == pt and r.get('file', '').endswith(f'/{model}.gguf')]
        d = [r[f'p{pt}'] for r in dawn if r['model'] == model and f'p{pt}' in r]
        f = lambda xs, k: ' / '.join(f"{x[k]:,.0f}" for x in xs)
        med = statistics.median(x['decode_tok_s'] for x in n) if n else float('nan')
        share = ' / '.join(f"{x['decode_tok_s'] / med:.0%}" for x in d)
        print(f"| {model} | {pt} | {f(n, 'prefill_tok_s')} | {f(d, 'prefill_tok_s')} | {f(n, 'decode_tok_s')} | {f(d, 'decode_tok_s')} | {share} |")
