#!/usr/bin/env python3
"""llama.cpp's cosine similarities for the search page's test (tests/pages/search_page.mjs):
the documents it embeds and the queries it asks, each embedded by llama.cpp's own
`llama-embedding` from nomic-embed-text-v1.5.f16.gguf, so that the scores the page shows
can be checked against an independent implementation.

    python3 tests/scripts/gen_search_refs.py LLAMA_CPP_BIN_DIR [MODELS_DIR]

LLAMA_CPP_BIN_DIR and MODELS_DIR as for tests/scripts/gen_embed_refs.py (whose helpers
this uses: the same llama-embedding flags, one call per input). The sample documents are
read from examples/search/documents.js (with node), so a changed sample shows as a
mismatch in the test until this is run again.

Writes tests/fixtures/search_page_refs.json:

  {
    "generator", "llama_cpp", "model", "model_sha256",
    "prefixes": { "document": "search_document: ", "query": "search_query: " },
    "documents": [ { "title": as the page names it, "text": without the prefix } ],
    "queries": [ { "text": without the prefix, "best": the title llama.cpp ranks first,
                   "cosines": [ llama.cpp's cosine against each document, in order,
                                rounded to 6 decimals ] } ]
  }
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_embed_refs as refs  # noqa: E402

ROOT = refs.ROOT
MODEL = "nomic-embed-text-v1.5.f16.gguf"
DOCUMENT_PREFIX = "search_document: "
QUERY_PREFIX = "search_query: "

# What the test embeds: a few samples far apart in topic, and a document of the user's own
# (the page titles the first of those "Your document 1").
PICKED = ["Bread", "Volcanoes", "Jazz", "Black holes"]
OWN = "The goalkeeper saved a penalty and his team won the football final."
# Each query with the document it is about: its best match must be plain.
QUERIES = [
    ("How long should the dough rise before I bake the loaf?", "Bread"),
    ("Who won the soccer cup match?", "Your document 1"),
]


def samples():
    """The page's sample documents, as examples/search/documents.js exports them."""
    script = "import('./examples/search/documents.js').then((m) => console.log(JSON.stringify(m.SAMPLES)))"
    out = subprocess.run(["node", "-e", script], cwd=ROOT, capture_output=True, check=True, text=True).stdout
    return {d["title"]: d["text"] for d in json.loads(out)}


def vector(bin_dir, model, n_ctx, text):
    """llama.cpp's pooled, L2-normalised embedding of one input, embedded alone."""
    _, vecs = refs.embed(refs.embed_argv(bin_dir, model, "mean", n_ctx, [text]), 1)
    return np.array(vecs[0], dtype=np.float64)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    bin_dir = sys.argv[1]
    model = os.path.join(sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, ".cache", "models"), MODEL)
    tmp = tempfile.mkdtemp()
    refs.LINGER = os.path.join(tmp, "linger_at_exit.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", refs.LINGER,
                    os.path.join(ROOT, "tests", "scripts", "linger_at_exit.c")], check=True)
    try:
        sample = samples()
        documents = [{"title": t, "text": sample[t]} for t in PICKED] + [{"title": "Your document 1", "text": OWN}]
        n_ctx = 2048
        docs = [vector(bin_dir, model, n_ctx, DOCUMENT_PREFIX + d["text"]) for d in documents]
        queries = []
        for text, best in QUERIES:
            q = vector(bin_dir, model, n_ctx, QUERY_PREFIX + text)
            cosines = [float(np.dot(q, d) / (np.linalg.norm(q) * np.linalg.norm(d))) for d in docs]
            ranked = sorted(range(len(docs)), key=lambda i: -cosines[i])
            first = documents[ranked[0]]["title"]
            print(f"{text!r}: " + ", ".join(f"{documents[i]['title']} {cosines[i]:.3f}" for i in ranked), file=sys.stderr)
            if first != best:
                sys.exit(f"llama.cpp ranks {first} first for {text!r}, not {best}: pick a plainer query")
            queries.append({"text": text, "best": best, "cosines": [round(c, 6) for c in cosines]})
        out = {
            "generator": "tests/scripts/gen_search_refs.py",
            "llama_cpp": f"llama-embedding {refs.version(bin_dir)} (llama.cpp vendored in llama-cpp-python 0.3.35)",
            "model": MODEL,
            "model_sha256": refs.sha256(model),
            "prefixes": {"document": DOCUMENT_PREFIX, "query": QUERY_PREFIX},
            "documents": documents,
            "queries": queries,
        }
        path = os.path.join(refs.FIXTURES, "search_page_refs.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(out, f, ensure_ascii=False, indent=1)
            f.write("\n")
        print(f"{path}: {os.path.getsize(path)} bytes")
    finally:
        os.unlink(refs.LINGER)
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
