#!/usr/bin/env python3
"""Header facts of the real models, read by the PyPI `gguf` package's reader (an
independent GGUF parser), for the browser test of Model.inspect
(crates/web/tests/browser/inspect.js):

    python3 tests/scripts/gen_inspect_refs.py > tests/fixtures/inspect_refs.json

For each model: file size, where the tensor data starts (the header's size, padded),
tensor count, parameter count (sum of every tensor's elements), architecture,
trained context length, block count, widths and heads, general.file_type, bytes per tensor type, the largest tensor.
"""

import json
import os
import sys

from gguf import GGUFReader

MODELS = [
    ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf",
    ".cache/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
]


def field(reader, key):
    f = reader.fields.get(key)
    if f is None:
        return None
    value = f.parts[f.data[0]]
    if f.types and f.types[0].name == "STRING":
        return bytes(value).decode()
    return value.tolist()[0]


def facts(path):
    r = GGUFReader(path)
    arch = field(r, "general.architecture")
    by_type = {}
    for t in r.tensors:
        name = t.tensor_type.name
        by_type[name] = by_type.get(name, 0) + int(t.n_bytes)
    largest = max(r.tensors, key=lambda t: int(t.n_bytes))
    return {
        "path": path,
        "fileSize": os.path.getsize(path),
        "dataOffset": int(r.data_offset),
        "tensorCount": len(r.tensors),
        "parameters": sum(int(t.n_elements) for t in r.tensors),
        "architecture": arch,
        "contextLength": field(r, f"{arch}.context_length"),
        "blockCount": field(r, f"{arch}.block_count"),
        "embeddingLength": field(r, f"{arch}.embedding_length"),
        "headCount": field(r, f"{arch}.attention.head_count"),
        "headCountKv": field(r, f"{arch}.attention.head_count_kv"),
        "fileType": field(r, "general.file_type"),
        "bytesByType": by_type,
        "largestTensor": {"name": largest.name, "bytes": int(largest.n_bytes)},
    }


def main():
    out = {os.path.basename(p): facts(p) for p in MODELS}
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
