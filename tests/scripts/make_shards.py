#!/usr/bin/env python3
"""Split a GGUF file into shards laid out as llama.cpp's gguf-split writes them.

    python3 tests/scripts/make_shards.py MODEL.gguf OUT_DIR N

Writes OUT_DIR/<stem>-00001-of-0000N.gguf ... : consecutive runs of the tensors, about
equal in bytes. The first shard holds every metadata key of the model plus split.no = 0,
split.count = N and split.tensors.count; the others hold only the three split.* keys.
Each shard has its own tensor table and data section (offsets relative to it, aligned
as the model says). The input is parsed with the PyPI `gguf` reader (an implementation
independent of Kindling's), and its key/value and tensor-info encodings are copied as
they are, so the shards hold exactly the model's bytes. Skips work when the shards are
already there and newer than the input.
"""

import os
import struct
import sys

from gguf import GGUFReader

UINT16, INT32 = 2, 5


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, fmt, value):
    return gguf_string(key) + struct.pack("<I", vtype) + struct.pack(fmt, value)


def raw_field(field):
    """A reader field's encoding, as it was in the file."""
    return b"".join(p.tobytes() for p in field.parts)


def pad(n, align):
    return (align - n % align) % align


def write_shard(path, src, kvs, tensors, align):
    infos = []
    offset = 0
    for t in tensors:
        # The tensor-info field's parts: name length, name, n_dims, dims, type, offset;
        # all but the offset are kept.
        infos.append(b"".join(p.tobytes() for p in t.field.parts[:-1]) + struct.pack("<Q", offset))
        offset += t.n_bytes + pad(t.n_bytes, align)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs) + b"".join(infos)
    tmp = path + ".tmp"
    with open(tmp, "wb") as out:
        out.write(head + bytes(pad(len(head), align)))
        for t in tensors:
            src.seek(t.data_offset)
            out.write(src.read(t.n_bytes))
            out.write(bytes(pad(t.n_bytes, align)))
    os.replace(tmp, path)


def main():
    model, out_dir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    stem = os.path.basename(model).removesuffix(".gguf")
    paths = [os.path.join(out_dir, f"{stem}-{i + 1:05d}-of-{n:05d}.gguf") for i in range(n)]
    if all(os.path.exists(p) and os.path.getmtime(p) >= os.path.getmtime(model) for p in paths):
        return
    os.makedirs(out_dir, exist_ok=True)
    reader = GGUFReader(model)
    tensors = list(reader.tensors)
    align = reader.alignment
    model_kvs = [raw_field(f) for name, f in reader.fields.items() if not name.startswith("GGUF.")]

    # Consecutive runs of about total/n bytes each (every shard gets at least one tensor).
    total = sum(t.n_bytes for t in tensors)
    groups, run, acc = [], [], 0
    for i, t in enumerate(tensors):
        run.append(t)
        acc += t.n_bytes
        left = len(tensors) - i - 1
        if len(groups) < n - 1 and (acc >= total * (len(groups) + 1) / n or left == n - 1 - len(groups)):
            groups.append(run)
            run = []
    groups.append(run)
    assert len(groups) == n and all(groups), "more shards than tensors"

    with open(model, "rb") as src:
        for i, (path, group) in enumerate(zip(paths, groups)):
            split = [
                kv("split.no", UINT16, "<H", i),
                kv("split.count", UINT16, "<H", n),
                kv("split.tensors.count", INT32, "<i", len(tensors)),
            ]
            write_shard(path, src, (model_kvs if i == 0 else []) + split, group, align)
    for path, group in zip(paths, groups):
        print(f"{path}: {len(group)} tensors, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
