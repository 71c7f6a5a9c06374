#!/usr/bin/env python3
"""The Markdown table of bench/embed.sh's JSON lines: per batch (INPUTS x TOKENS), inputs/s
and tokens/s of Kindling native (kindling.jsonl), the npm package through Dawn (dawn.jsonl)
and llama-server (llama.jsonl, one row per slot count), with each Kindling row's ratio to
llama.cpp's (the 1-slot server, where it ran, else the first). Medians over the lines of a
kind (rounds); a kind with no line shows a dash.

  embed_table.py DIR > DIR/table.md
"""
import json, os, statistics, sys


def lines(path):
    out = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith('{'):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def main():
    d = sys.argv[1]
    native, dawn = lines(os.path.join(d, 'kindling.jsonl')), lines(os.path.join(d, 'dawn.jsonl'))
    on = lambda rs, default: rs[0].get('backend', default) if rs else default
    engines = [(f'Kindling native ({on(native, "gpu")})', native),
               (f'Kindling npm wasm ({"Dawn" if on(dawn, "webgpu") == "webgpu" else "Node, " + on(dawn, "")})', dawn)]
    llama = lines(os.path.join(d, 'llama.jsonl'))
    for s in sorted({r.get('slots', 1) for r in llama}):
        engines.append((f'llama-server, {s} slot(s)', [r for r in llama if r.get('slots', 1) == s]))
    rows = [r for _, rs in engines for r in rs]
    batches = sorted({(r['inputs'], r['input_tokens']) for r in rows if 'inputs' in r}, key=lambda b: b[1])
    print('Embedding throughput: one request of INPUTS texts of TOKENS tokens each ([CLS]/[SEP] included);')
    print('medians of the timed requests (and of the rounds). Ratios: Kindling ÷ llama-server, its first')
    print('row for the batch (1 slot where it ran), and its fastest row (the most slots, usually).\n')
    print('| batch | engine | inputs/s | tokens/s | ms per request | ÷ llama (first) | ÷ llama (fastest) |')
    print('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
    for n, t in batches:
        med = {}
        for label, rs in engines:
            v = [r for r in rs if r.get('inputs') == n and r.get('input_tokens') == t and r.get('ok', True)]
            med[label] = (statistics.median(r['inputs_per_s'] for r in v), statistics.median(r['tokens_per_s'] for r in v),
                          statistics.median(r['seconds'] for r in v)) if v else None
        base = next((med[l] for l, _ in engines[2:] if med[l]), None)
        best = max((med[l] for l, _ in engines[2:] if med[l]), key=lambda m: m[0], default=None)
        for i, (label, _) in enumerate(engines):
            m = med[label]
            r1 = f'{m[0] / base[0]:.2f}×' if m and base and i < 2 else ''
            r2 = f'{m[0] / best[0]:.2f}×' if m and best and i < 2 else ''
            cells = (f'{m[0]:,.1f}', f'{m[1]:,.0f}', f'{m[2] * 1e3:,.1f}') if m else ('—', '—', '—')
            print(f'| {n}×{t} | {label} | {cells[0]} | {cells[1]} | {cells[2]} | {r1} | {r2} |')


if __name__ == '__main__':
    main()
