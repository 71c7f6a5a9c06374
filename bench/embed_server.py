#!/usr/bin/env python3
"""llama.cpp's `llama-server --embedding` on an embedding model, timed as `kindling bench`
times Kindling's embeddings (bench/embed.sh runs both on the GPU machine; standard
library only).

For each slot count in --slots it starts one server (`--embedding --pooling mean -ngl 99
-np S -c S*CTX -ub CTX -b CTX`: every input fits one ubatch, as an encoder needs; with
S > 1 the server batches S inputs into one pass), then for each batch INPUTSxTOKENS posts
one /v1/embeddings request holding INPUTS texts of exactly TOKENS tokens, once to warm
up and --reps times timed (wall time of the request, JSON reply included); the median.

The texts are bench/embed_inputs.js's: input i is WORDS[(7 i + j) mod W] for j < TOKENS -
framing, WORDS the candidates that are one token each. The server's own count decides:
a word is one token when "w w" takes exactly one token more than "w" (usage.prompt_tokens),
and framing is "w"'s count less one. Every timed reply's usage.prompt_tokens must be
INPUTS x TOKENS and its data INPUTS vectors, else the line says ok: false.

  embed_server.py --server BIN --out DIR [--slots "1 8"] [--batches "32x16 4x2000"]
                  [--reps 3] [--ctx 2048] [--server-args "..."] NAME=FILE.gguf
Appends one JSON line per (slots, batch) to DIR/llama.jsonl; the server's output goes to
DIR/server.log.
"""
import argparse, json, os, statistics, sys, time

from llama_proc import LlamaServer

# The same list, in the same order, as bench/embed_inputs.js.
CANDIDATE_WORDS = ['hello', 'world', 'house', 'water', 'green', 'music', 'river', 'stone', 'light', 'paper', 'table', 'cloud']


class Server(LlamaServer):
    """`llama-server --embedding` with `slots` slots of `ctx` tokens, every input in one ubatch."""

    def __init__(self, binary, model, port, slots, ctx, log, extra):
        flags = ['--embedding', '--pooling', 'mean', '-ngl', '99', '-np', str(slots), '-c', str(slots * ctx),
                 '-ub', str(ctx), '-b', str(ctx)] + extra
        super().__init__(binary, model, port, flags, log)

    def embed(self, texts, timeout):
        return self.post('/v1/embeddings', {'input': texts, 'encoding_format': 'float'}, timeout)


def probe_words(srv, timeout):
    """The candidates that are one token for this server, and the special tokens it adds."""
    words, framing = [], None
    for w in CANDIDATE_WORDS:
        one = srv.embed([w], timeout)['usage']['prompt_tokens']
        two = srv.embed([f'{w} {w}'], timeout)['usage']['prompt_tokens']
        if two - one == 1:
            words.append(w)
            framing = one - 1
    if not words:
        raise RuntimeError(f'none of {CANDIDATE_WORDS} is a single token for this server')
    return words, framing


def texts_for(words, framing, count, tokens, shift=0):
    """bench/embed_inputs.js's texts (shift 0); a timed request k gets shift k, the same
    words moved along, so no request repeats the one before (a prompt cache gains nothing)."""
    body = tokens - framing
    if body < 1:
        raise RuntimeError(f'{tokens} tokens leave no room after {framing} special tokens')
    return [' '.join(words[(7 * i + j + shift) % len(words)] for j in range(body)) for i in range(count)]


def parse_batches(spec):
    out = []
    for b in spec.replace(',', ' ').split():
        n, t = b.split('x')
        out.append((int(n), int(t)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--server', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--slots', default='1 8', help='server slots (-np), one server each')
    ap.add_argument('--batches', default='32x16 4x2000')
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--ctx', type=int, default=2048, help='context per slot and ubatch (>= the longest input)')
    ap.add_argument('--port', type=int, default=8091)
    ap.add_argument('--ready-s', type=float, default=120)
    ap.add_argument('--request-s', type=float, default=120)
    ap.add_argument('--server-args', default='', help='appended to the llama-server command (e.g. --no-repack)')
    ap.add_argument('model', help='NAME=FILE.gguf')
    args = ap.parse_args()
    name, path = args.model.split('=', 1)
    batches = parse_batches(args.batches)
    os.makedirs(args.out, exist_ok=True)
    lj = open(os.path.join(args.out, 'llama.jsonl'), 'a')
    log = open(os.path.join(args.out, 'server.log'), 'a')
    failed = False
    for slots in [int(s) for s in args.slots.split()]:
        srv = None
        try:
            srv = Server(args.server, path, args.port, slots, args.ctx, log, args.server_args.split())
            print(f'llama-server ({slots} slot(s)) ready in {srv.wait_ready(args.ready_s):.1f} s', flush=True)
            words, framing = probe_words(srv, args.request_s)
            for count, tokens in batches:
                runs, ok = [], True
                for rep in range(args.reps + 1):
                    texts = texts_for(words, framing, count, tokens, rep)
                    t = time.perf_counter()
                    r = srv.embed(texts, args.request_s)
                    s = time.perf_counter() - t
                    got = (r.get('usage', {}).get('prompt_tokens'), len(r.get('data', [])))
                    if got != (count * tokens, count):
                        ok = False
                        print(f'  {count}x{tokens}: prompt_tokens {got[0]}, {got[1]} vectors '
                              f'(wanted {count * tokens}, {count})', flush=True)
                    if rep > 0:
                        runs.append(s)
                sec = statistics.median(runs)
                row = dict(engine='llama.cpp', slots=slots, model=name, inputs=count, input_tokens=tokens,
                           tokens=count * tokens, seconds=sec, runs_s=runs, inputs_per_s=count / sec,
                           tokens_per_s=count * tokens / sec, ok=ok)
                lj.write(json.dumps(row) + '\n')
                lj.flush()
                print(json.dumps(row), flush=True)
        except Exception as e:  # the other slot counts still run
            failed = True
            print(f'llama-server ({slots} slot(s)): {type(e).__name__}: {e}', flush=True)
        finally:
            if srv is not None:
                srv.stop()
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
