#!/usr/bin/env python3
"""Reference sentence embeddings from llama.cpp's own `llama-embedding` tool, for the
encoder tests (nomic-bert and bert).

    python3 tests/scripts/gen_embed_refs.py LLAMA_CPP_BIN_DIR [MODELS_DIR [SYNTHETIC_DIR]]

LLAMA_CPP_BIN_DIR holds `llama-embedding` and `llama-tokenize` built from the llama.cpp
vendored in the `llama-cpp-python==0.3.35` sdist (CPU only, Release):

    pip download --no-binary :all: --no-deps --no-build-isolation llama-cpp-python==0.3.35
    tar xzf llama_cpp_python-0.3.35.tar.gz
    cmake -S llama_cpp_python-0.3.35/vendor/llama.cpp -B build -DCMAKE_BUILD_TYPE=Release \\
          -DGGML_NATIVE=ON -DLLAMA_CURL=OFF
    cmake --build build --target llama-embedding llama-tokenize -j2     # -> build/bin

MODELS_DIR (default .cache/models, filled by tests/scripts/fetch_models.sh) holds
nomic-embed-text-v1.5.f16.gguf; SYNTHETIC_DIR (default .cache/synthetic, written by
tests/scripts/make_synthetic.py) holds tiny-bert.gguf.

Writes tests/fixtures/embed_ref_nomic.json, embed_ref_tiny-bert.json and
embed_ref_tiny-nomic-bert.json (the synthetic nomic-bert):

  {
    "generator": "tests/scripts/gen_embed_refs.py",
    "llama_cpp": "<llama-embedding --version>",
    "model": file name, "model_sha256": sha256 of the file used, "arch": general.architecture,
    "n_embd": embedding width, "n_ctx_train": context length, "pooling": "mean" | "cls",
    "normalize": "l2",
    "calls": [ { "argv": [...the llama-embedding command, model path as MODEL, the prompt
                          as INPUTS...],
                 "inputs": [case indices embedded by this one call, in order] } ],
    "cases": [ { "name": ..., "kind": "short" | "long" | "non_ascii" | "batch",
                 "call": index into calls, "text": the input,
                 "ids": llama.cpp's token ids ([CLS] ... [SEP] as it adds them),
                 "n_tokens": len(ids),
                 "embedding": the pooled, L2-normalised vector, rounded to 6 decimals,
                 "numpy_cosine": cosine between it and tests/scripts/numpy_encoder.py's
                                 float64 forward pass on the same ids } ],
    "numpy_min_cosine": the smallest numpy_cosine
  }

The numpy forward pass is a check that the references are what the architecture
computes (and that the sidecar / issue description of the model is right); the tests
compare with llama.cpp's vectors.

How the references are made, per case group:
- every input is embedded by `llama-embedding -m MODEL --pooling P --embd-normalize 2
  --embd-output-format json --embd-separator <#sep#> -c N -b N -ub N -t 2 --no-repack
  --verbose-prompt -p TEXT` (N = the model's training context, so the longest input fits in one ubatch; the
  separator is not "\\n" so that inputs can hold newlines). The "batch" cases are several
  inputs joined by the separator and embedded by ONE call (llama.cpp puts them in one
  batch as separate sequences, attention masked per sequence); every other case is a
  call of its own.
- llama-embedding runs with LD_PRELOAD=linger_at_exit.so (built from
  tests/scripts/linger_at_exit.c): llama.cpp prints through an asynchronous logger that
  is never flushed at exit, and the JSON otherwise came out cut short.
- `ids` are what `--verbose-prompt` prints for that input (the tokens actually embedded:
  common_tokenize(add_special = true, parse_special = true)); each is checked equal to
  `llama-tokenize -m MODEL -f FILE --ids --log-disable` of the same text.
- the long input is prose from /usr/share/common-licenses/GPL-3 (Debian's base-files,
  verbatim copies allowed), cut at a word so that it tokenizes to just under the
  training context (2048 for nomic, 512 for tiny-bert), [CLS]/[SEP] included.
- nomic-embed-text's documented usage prefixes inputs with a task: `search_query: `,
  `search_document: `, `classification: `, `clustering: `; the short and batch cases
  use them.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

import gguf
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numpy_encoder import Encoder  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
SEP = "<#sep#>"
PROSE = "/usr/share/common-licenses/GPL-3"

NON_ASCII = [
    ("accents", "Crème brûlée à la française: naïve café résumé, ÉCOLE Ångström Øresund."),
    ("cjk", "東京は日本の首都です。北京是中国的首都，你好世界！"),
    ("cyrillic_greek", "Привет, мир! Как дела? Αθήνα και Θεσσαλονίκη."),
    ("emoji_mixed", "Emoji 😀👍🏽 and flags 🇫🇷, ✨sparkles✨ ½ café\tTabs\nand lines ﬁ №5 ＡＢＣ"),
]

MODELS = {
    "nomic": {
        "file": "nomic-embed-text-v1.5.f16.gguf",
        "dir": "models",
        "pooling": "mean",
        "short": [
            ("query", "search_query: What is the capital of France?"),
            ("document", "search_document: Paris is the capital and most populous city of France."),
            ("classification", "classification: I loved this movie, the acting was great!"),
            ("clustering", "clustering: Kindling runs GGUF language models in the browser on the GPU."),
        ],
        "batch": [
            "search_query: how do plants make food?",
            "search_document: Photosynthesis is the process by which green plants and some other "
            "organisms use sunlight to synthesize foods from carbon dioxide and water. It generally "
            "involves the green pigment chlorophyll and generates oxygen as a by-product.",
            "search_document: The mitochondrion is the powerhouse of the cell.",
            "search_query: 光合作用是什么？",
            "search_document: Short.",
        ],
    },
    "tiny-nomic-bert": {
        "file": "tiny-nomic-bert.gguf",
        "dir": "synthetic",
        "pooling": "mean",
        "short": [
            ("query", "search_query: What is the capital of France?"),
            ("fox", "The quick brown fox jumps over the lazy dog."),
        ],
        "batch": [
            "search_query: Hello, world!",
            "search_document: Once upon a time there was a little girl who lived in a village near the forest.",
            "a",
        ],
    },
    "tiny-bert": {
        "file": "tiny-bert.gguf",
        "dir": "synthetic",
        "pooling": "cls",
        "short": [
            ("fox", "The quick brown fox jumps over the lazy dog."),
            ("question", "What is the capital of France? The capital of France is Paris."),
            ("code", "def main(): return 0. for i in range(10): print(i)"),
            ("unknown_words", "Tokenization of unseen words: xylophone, quizzically, 1234567."),
        ],
        "batch": [
            "Hello, world!",
            "The wolf asked her where she was going, and she said that she was going to see her "
            "grandmother, who lived on the other side of the forest.",
            "Привет, мир!",
            "a",
            "Models are trained on large amounts of text.",
        ],
    },
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


LINGER = None  # the LD_PRELOAD shim of linger_at_exit.c, built once


def run(argv):
    env = dict(os.environ)
    if LINGER:
        env["LD_PRELOAD"] = LINGER
    p = subprocess.run(argv, capture_output=True, check=False, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])} ... failed ({p.returncode}):\n{p.stderr.decode(errors='replace')[-3000:]}")
    return p.stdout.decode("utf-8"), p.stderr.decode("utf-8", errors="replace")


def tokenize(bin_dir, model, text):
    """llama-tokenize's ids for `text` (add_special and parse_special as llama-embedding)."""
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        f.write(text)
    try:
        out, _ = run([os.path.join(bin_dir, "llama-tokenize"), "-m", model, "-f", f.name, "--ids", "--log-disable"])
    finally:
        os.unlink(f.name)
    return json.loads(out.strip().splitlines()[-1])


def embed_argv(bin_dir, model, pooling, n_ctx, texts):
    n = str(n_ctx)
    # --no-repack: no extra buffer types (AMX, repacked quants). The machine these were made
    # on advertises AMX, and llama.cpp's AMX path dies there with SIGILL; the math is the same.
    return [os.path.join(bin_dir, "llama-embedding"), "-m", model, "--pooling", pooling, "--embd-normalize", "2",
            "--embd-output-format", "json", "--embd-separator", SEP, "-c", n, "-b", n, "-ub", n, "-t", "2",
            "--no-repack", "--verbose-prompt", "-p", SEP.join(texts)]


def embed(argv, n_inputs):
    """Runs one llama-embedding call; returns ([ids per input], [embedding per input])."""
    out, err = run(argv)
    counts = [int(x) for x in re.findall(r"number of tokens in prompt = (\d+)", err + out)]
    start = out.index('{\n  "object": "list"')
    data = json.loads(out[start:out.rindex("}") + 1])["data"]
    # --verbose-prompt prints "%6d -> '%s'" per token of every input, in input order.
    toks = [int(m) for m in re.findall(r"^ *(\d+) -> '", out[:start], flags=re.M)]
    if len(counts) != n_inputs or sum(counts) != len(toks) or len(data) != n_inputs:
        sys.exit(f"unexpected llama-embedding output: {len(counts)} prompts, {len(toks)} tokens, {len(data)} vectors")
    ids, at = [], 0
    for c in counts:
        ids.append(toks[at:at + c])
        at += c
    return ids, [d["embedding"] for d in sorted(data, key=lambda d: d["index"])]


def long_text(bin_dir, model, n_ctx):
    """The longest prefix (cut at a word) of the GPL-3 prose that tokenizes to at most
    n_ctx - 16 tokens: near the context, with a little headroom."""
    with open(PROSE, encoding="utf-8") as f:
        words = f.read().split(" ")
    target = n_ctx - 16
    lo, hi = 1, len(words)
    # Tokens grow with words; a binary search on the word count.
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(tokenize(bin_dir, model, " ".join(words[:mid]))) <= target:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])


def version(bin_dir):
    out, err = run([os.path.join(bin_dir, "llama-embedding"), "--version"])
    return (out + err).strip().splitlines()[0]


def relpath(argv, model):
    """The command as stored: tool and model by name, the prompt (the last argument) as
    a placeholder for the call's inputs joined by the separator."""
    out = ["llama-embedding" if a.endswith("llama-embedding") else ("MODEL" if a == model else a) for a in argv]
    return out[:-1] + [f"INPUTS (the texts of this call's cases joined by {SEP})"]


def generate(key, spec, bin_dir, model):
    reader = gguf.GGUFReader(model)
    arch = reader.fields["general.architecture"].contents()
    n_embd = int(reader.fields[f"{arch}.embedding_length"].contents())
    n_ctx = int(reader.fields[f"{arch}.context_length"].contents())
    pooling = spec["pooling"]

    groups = [("short", [spec["short"][i]]) for i in range(len(spec["short"]))]
    groups.append(("long", [("prose", long_text(bin_dir, model, n_ctx))]))
    groups += [("non_ascii", [c]) for c in NON_ASCII]
    groups.append(("batch", [(f"batch_{i}", t) for i, t in enumerate(spec["batch"])]))

    calls, cases = [], []
    numpy_enc = Encoder(model)
    for kind, items in groups:
        texts = [t for _, t in items]
        argv = embed_argv(bin_dir, model, pooling, n_ctx, texts)
        ids, vecs = embed(argv, len(texts))
        call = len(calls)
        calls.append({"argv": relpath(argv, model), "inputs": list(range(len(cases), len(cases) + len(texts)))})
        for (name, text), tid, vec in zip(items, ids, vecs):
            check = tokenize(bin_dir, model, text)
            if check != tid:
                sys.exit(f"{key}/{name}: llama-tokenize {check[:20]}... != llama-embedding {tid[:20]}...")
            if len(vec) != n_embd:
                sys.exit(f"{key}/{name}: embedding of {len(vec)} values, expected {n_embd}")
            ref = numpy_enc.embed(tid)
            cos = float(np.dot(ref, vec) / np.linalg.norm(vec))
            cases.append({"name": name, "kind": kind, "call": call, "text": text, "ids": tid, "n_tokens": len(tid),
                          "embedding": [round(float(x), 6) for x in vec], "numpy_cosine": round(cos, 6)})
        print(f"{key}: {kind} {[len(i) for i in ids]} tokens, numpy cosine "
              f"{[c['numpy_cosine'] for c in cases[-len(items):]]}", file=sys.stderr)

    return {
        "generator": "tests/scripts/gen_embed_refs.py",
        "llama_cpp": f"llama-embedding {version(bin_dir)} (llama.cpp vendored in llama-cpp-python 0.3.35)",
        "model": os.path.basename(model),
        "model_sha256": sha256(model),
        "arch": arch,
        "n_embd": n_embd,
        "n_ctx_train": n_ctx,
        "pooling": pooling,
        "normalize": "l2",
        "numpy_min_cosine": min(c["numpy_cosine"] for c in cases),
        "calls": calls,
        "cases": cases,
    }


def write(path, ref):
    # One case per line keeps the file small and diffs readable.
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n")
        head = {k: v for k, v in ref.items() if k not in ("calls", "cases")}
        for k, v in head.items():
            f.write(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},\n")
        for k in ("calls", "cases"):
            f.write(f" {json.dumps(k)}: [\n")
            items = ref[k]
            for i, x in enumerate(items):
                f.write("  " + json.dumps(x, ensure_ascii=False, separators=(",", ":")))
                f.write(",\n" if i + 1 < len(items) else "\n")
            f.write(" ],\n" if k == "calls" else " ]\n")
        f.write("}\n")
    print(f"{path}: {os.path.getsize(path)} bytes")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    bin_dir = sys.argv[1]
    global LINGER
    tmp = tempfile.mkdtemp()
    LINGER = os.path.join(tmp, "linger_at_exit.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", LINGER,
                    os.path.join(ROOT, "tests", "scripts", "linger_at_exit.c")], check=True)
    dirs = {
        "models": sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, ".cache", "models"),
        "synthetic": sys.argv[3] if len(sys.argv) > 3 else os.path.join(ROOT, ".cache", "synthetic"),
    }
    only = os.environ.get("EMBED_REFS_ONLY", "").split(",") if os.environ.get("EMBED_REFS_ONLY") else list(MODELS)
    for key, spec in MODELS.items():
        if key not in only:
            continue
        model = os.path.join(dirs[spec["dir"]], spec["file"])
        write(os.path.join(FIXTURES, f"embed_ref_{key}.json"), generate(key, spec, bin_dir, model))
    os.unlink(LINGER)
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
