#!/usr/bin/env python3
"""`kindling bench --backend gpu` beside llama.cpp's Vulkan `llama-server` on the same GGUF files.

Run by bench/llama_server.sh on the GPU machine (standard library only). For each model it
starts one llama-server (`-ngl 99 -fa on`, one slot, no prompt cache), then alternates, round
by round, `kindling bench` processes and /completion requests with the same token ids:

  prompt ids   1 + (7919 * i) mod (vocab - 1), i < P   (what `kindling bench` feeds itself)
  generation   128 greedy tokens (temperature 0, ignore_eos, n_predict 128: exactly 128)
  figures      decode tok/s after P = 8, 512, 2048 and 4096 (--prompts), prefill tok/s of
               each prompt of 512 tokens or more

llama.cpp's figures are the server's own per-request `timings` (prompt_per_second,
predicted_per_second). Its predicted_per_second counts the first token, which the prompt's
pass produced, over the time of the 127 later passes, so it reads ~0.8% above a per-pass
rate; kindling's decode figure is 128 passes for 128 tokens. Both land in the raw lines.

  llama_server.py --server BIN --kindling BIN --out DIR NAME=FILE.gguf ...
Writes DIR/kindling.jsonl, DIR/llama.jsonl (one line per measurement), DIR/server.log and
DIR/table.md (rewritten after every model, so a run cut short still leaves a table).
"""
import argparse, json, os, statistics, struct, subprocess, sys, time

from llama_proc import LlamaServer

LABELS = {'qwen15': 'Qwen2.5-Coder-1.5B Q4_K_M', 'qwen05': 'Qwen2.5-Coder-0.5B Q4_K_M',
          'smollm2': 'SmolLM2-135M Q4_1', 'gemma3': 'Gemma-3-270M Q4_K_M'}
# kindling ÷ llama.cpp: issue 29's native floors, by (model, figure, prompt tokens).
FLOORS = {('qwen15', 'prefill', 512): 1.2, ('qwen15', 'prefill', 4096): 1.0, ('qwen15', 'decode', 4096): 1.6}
# Prompts this long or longer also give a prefill figure (a short one measures overhead).
PREFILL_MIN = 512

SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def gguf_vocab(path):
    """The vocabulary size kindling uses: `{arch}.vocab_size`, else the token list's length."""
    meta = {}
    with open(path, 'rb') as f:
        rd = f.read
        u32 = lambda: struct.unpack('<I', rd(4))[0]
        u64 = lambda: struct.unpack('<Q', rd(8))[0]

        def value(t, keep):
            if t in SCALAR:
                b = rd(SCALAR[t])
                return int.from_bytes(b, 'little') if keep and t in (0, 2, 4, 10) else None
            if t == 8:
                s = rd(u64())
                return s.decode('utf-8', 'replace') if keep else None
            if t == 9:
                et, n = u32(), u64()
                if et in SCALAR:
                    rd(SCALAR[et] * n)
                else:
                    for _ in range(n):
                        value(et, False)
                return n  # an array: its length
            raise ValueError(f'{path}: unknown GGUF value type {t}')

        if rd(4) != b'GGUF':
            raise ValueError(f'{path}: not a GGUF file')
        _version, _n_tensors, n_kv = u32(), u64(), u64()
        for _ in range(n_kv):
            key = rd(u64()).decode()
            t = u32()
            keep = key in ('general.architecture', 'tokenizer.ggml.tokens') or key.endswith('.vocab_size')
            v = value(t, keep)
            if keep:
                meta[key] = v
    arch = meta.get('general.architecture')
    return int(meta.get(f'{arch}.vocab_size') or meta['tokenizer.ggml.tokens'])


def prompt_ids(n, vocab):
    return [1 + (i * 7919) % max(vocab - 1, 1) for i in range(n)]


class Server(LlamaServer):
    """`llama-server` with flash attention, one slot of `ctx` tokens."""

    def __init__(self, binary, model, port, log, extra, ctx):
        super().__init__(binary, model, port, ['-ngl', '99', '-fa', 'on', '-c', str(ctx), '-np', '1'] + extra, log)

    def complete(self, ids, gen):
        return self.post('/completion', {
            'prompt': ids, 'n_predict': gen, 'temperature': 0.0, 'top_k': 1, 'ignore_eos': True,
            'cache_prompt': False, 'stream': False, 'return_tokens': True,
        })


def med(v):
    return statistics.median(v) if v else None


def fmt(x, digits=0):
    return '—' if x is None else f'{x:,.{digits}f}'


def span(v):
    return '' if len(v) < 2 else f' ({min(v):,.0f}–{max(v):,.0f})'


def table(rows, models, args):
    """rows: list of dicts {model, engine, pt, decode, prefill}."""
    def pick(m, eng, pt, key):
        return [r[key] for r in rows if r['model'] == m and r['engine'] == eng and r['pt'] == pt and r.get(key)]
    out = [f'Decode: {args.gen} greedy tokens after a P-token prompt (tok/s); prefill P: that prompt (tok/s).',
           f'Medians over {args.rounds} round(s) (kindling: one process per round, each the median of {args.reps};',
           f'llama.cpp: {args.reps} requests per round); ranges in brackets. Ratio = kindling ÷ llama.cpp.', '',
           '| model | figure | kindling | llama.cpp server | ratio | floor |', '| --- | --- | ---: | ---: | ---: | ---: |']
    for m in models:
        first = True
        figures = [(f'decode after {pt}', pt, 'decode') for pt in args.prompts]
        figures += [(f'prefill {pt}', pt, 'prefill') for pt in args.prompts if pt >= PREFILL_MIN]
        for label, pt, key in figures:
            k, l = pick(m, 'kindling', pt, key), pick(m, 'llama', pt, key)
            km, lm = med(k), med(l)
            ratio = f'**{km / lm:.2f}×**' if km and lm else '—'
            floor = FLOORS.get((m, key, pt))
            floor = '' if floor is None else f'{floor}× ' + ('✓' if km and lm and km / lm >= floor else '✗')
            out.append(f'| {LABELS.get(m, m) if first else ""} | {label} | {fmt(km)}{span(k)} | {fmt(lm)}{span(l)} | {ratio} | {floor} |')
            first = False
    return '\n'.join(out) + '\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--server', required=True)
    ap.add_argument('--kindling', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--gen', type=int, default=128)
    ap.add_argument('--backend', default='gpu', help="kindling's backend; with cpu, give the server -ngl 0 (--server-args)")
    ap.add_argument('--prompts', default='8,512,2048,4096')
    ap.add_argument('--port', type=int, default=8089)
    ap.add_argument('--kindling-args', default='', help='appended to each kindling bench command, e.g. --kv-f16')
    ap.add_argument('--server-args', default='', help='appended to the llama-server command')
    ap.add_argument('models', nargs='+', help='NAME=FILE.gguf')
    args = ap.parse_args()
    args.prompts = [int(p) for p in args.prompts.split(',')]
    os.makedirs(args.out, exist_ok=True)
    kj = open(os.path.join(args.out, 'kindling.jsonl'), 'a')
    lj = open(os.path.join(args.out, 'llama.jsonl'), 'a')
    log = open(os.path.join(args.out, 'server.log'), 'a')
    rows, names = [], []
    t0 = time.time()

    def kindling(name, path, pt, rnd):
        cmd = [args.kindling, 'bench', path, '--backend', args.backend, '--prompt-tokens', str(pt),
               '--gen-tokens', str(args.gen), '--repeat', str(args.reps), '--json'] + args.kindling_args.split()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            print(f'  kindling {name} p{pt}: timed out', flush=True); return
        line = next((l for l in p.stdout.splitlines() if l.startswith('{')), None)
        if p.returncode != 0 or line is None:
            print(f'  kindling {name} p{pt}: rc {p.returncode}: {p.stderr[-800:]}', flush=True); return
        r = json.loads(line)
        r.update(model=name, round=rnd)
        kj.write(json.dumps(r) + '\n'); kj.flush()
        rows.append(dict(model=name, engine='kindling', pt=pt, decode=r['decode_tok_s'],
                         prefill=r['prefill_tok_s'] if pt >= PREFILL_MIN else None))
        print(f'  kindling p{pt}: decode {r["decode_tok_s"]:.1f}  prefill {r["prefill_tok_s"]:.0f}  '
              f'({r.get("dispatches_per_token", 0):.0f} dispatches/token)', flush=True)

    def llama(srv, name, ids, pt, rnd, record=True):
        for _ in range(args.reps if record else 1):
            r = srv.complete(ids, args.gen)
            t = r['timings']
            n_out = len(r.get('tokens') or []) or r.get('tokens_predicted')
            ok = t['predicted_n'] == args.gen and t['prompt_n'] == pt
            line = dict(model=name, round=rnd, prompt_tokens=pt, gen_tokens=args.gen, ok=ok, tokens_out=n_out,
                        warmup=not record, timings=t,
                        decode_per_pass_tok_s=(t['predicted_n'] - 1) / t['predicted_ms'] * 1e3)
            lj.write(json.dumps(line) + '\n'); lj.flush()
            if not ok:
                print(f'  llama p{pt}: prompt_n {t["prompt_n"]} predicted_n {t["predicted_n"]} (expected {pt}, {args.gen})', flush=True)
            if record:
                rows.append(dict(model=name, engine='llama', pt=pt, decode=t['predicted_per_second'],
                                 prefill=t['prompt_per_second'] if pt >= PREFILL_MIN else None))
        if record:
            print(f'  llama    p{pt}: decode {t["predicted_per_second"]:.1f}  prefill {t["prompt_per_second"]:.0f}  (last of {args.reps})', flush=True)

    for spec in args.models:
        name, path = spec.split('=', 1)
        names.append(name)
        vocab = gguf_vocab(path)
        ids = {pt: prompt_ids(pt, vocab) for pt in args.prompts}
        print(f'== {name}: {path}, vocab {vocab}, prompt ids {ids[args.prompts[-1]][:6]}... '
              f'(at {time.time() - t0:.0f} s)', flush=True)
        srv = Server(args.server, path, args.port, log, args.server_args.split(), max(args.prompts) + args.gen + 64)
        try:
            print(f'  llama-server ready in {srv.wait_ready(180):.1f} s', flush=True)
            for pt in args.prompts:
                llama(srv, name, ids[pt], pt, 0, record=False)
        except Exception as e:  # the kindling side is still measured
            print(f'  llama-server: {e}', flush=True)
            srv.stop(); srv = None
        for rnd in range(1, args.rounds + 1):
            print(f' round {rnd}', flush=True)
            order = ('kindling', 'llama') if rnd % 2 else ('llama', 'kindling')
            for eng in order:
                for pt in args.prompts:
                    if eng == 'kindling':
                        kindling(name, path, pt, rnd)
                    elif srv is not None:
                        try:
                            llama(srv, name, ids[pt], pt, rnd)
                        except Exception as e:
                            print(f'  llama p{pt}: {e}', flush=True)
        if srv is not None:
            srv.stop()
        with open(os.path.join(args.out, 'table.md'), 'w') as f:
            f.write(table(rows, names, args))
    print(f'done in {time.time() - t0:.0f} s\n')
    print(open(os.path.join(args.out, 'table.md')).read())


if __name__ == '__main__':
    sys.exit(main())
