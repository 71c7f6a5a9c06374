#!/usr/bin/env python3
"""Reference data for kindling-gguf's tests, from PyPI `gguf` (0.19) and numpy.

Modes (all write to stdout):
  dequant_ref.py random [--blocks N] [--seed S]
      For every type kindling reads, N random blocks (fixed seed; f16/f32 scale fields
      set to finite values, including subnormals, zero and negatives) and their
      dequantization by `gguf.quants.dequantize`.
  dequant_ref.py --model PATH --rows N [--per-type K]
      The first N rows of up to K tensors (first, middle, last) of each type in a real
      model, as raw bytes and dequantized by `gguf.quants.dequantize`; then the header
      as `gguf.GGUFReader` sees it, as text lines (see `header()`). One run per model,
      because GGUFReader takes ~15 s on Gemma 3's 262k-token vocabulary.

Binary format (all little-endian):
  b"KDQ1", then records: u32 name length, name (UTF-8; the type name or tensor name),
  u32 ggml type id, u64 byte count, raw bytes, u64 value count, f32 values;
  then u32 0xFFFFFFFF; in --model mode the header text follows.

Q8_K: PyPI gguf has no Q8_K dequantization (NotImplementedError), so this script
computes it with numpy from ggml's definition (y = d * q, d an f32).
"""

import argparse
import struct
import sys
import zlib

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGML_QUANT_SIZES
from gguf.constants import GGMLQuantizationType as T
from gguf.quants import dequantize

QK_K = 256

# Types kindling reads, with the byte offsets of their f16 scale fields in a block.
TYPES = {
    T.F32: [],
    T.F16: [],
    T.BF16: [],
    T.Q4_0: [0],
    T.Q4_1: [0, 2],
    T.Q5_0: [0],
    T.Q5_1: [0, 2],
    T.Q8_0: [0],
    T.Q2_K: [QK_K // 16 + QK_K // 4, QK_K // 16 + QK_K // 4 + 2],
    T.Q3_K: [QK_K // 8 + QK_K // 4 + 12],
    T.Q4_K: [0, 2],
    T.Q5_K: [0, 2],
    T.Q6_K: [QK_K // 2 + QK_K // 4 + QK_K // 16],
    T.Q8_K: [],  # its scale is an f32 at offset 0, set below
}


def sane_floats(rng, n, dtype):
    """Finite values spanning many magnitudes, subnormals, zeros and both signs."""
    x = rng.standard_normal(n) * 10.0 ** rng.uniform(-7, 2, n)
    x[rng.random(n) < 0.05] = 0.0
    return x.astype(dtype)


def dequant(data, qtype):
    if qtype == T.Q8_K:
        blocks = data.reshape(-1, GGML_QUANT_SIZES[T.Q8_K][1])
        d = blocks[:, 0:4].copy().view(np.float32)
        q = blocks[:, 4:4 + QK_K].copy().view(np.int8).astype(np.float32)
        return (d * q).reshape(-1)
    return np.asarray(dequantize(data, qtype), dtype=np.float32).reshape(-1)


def random_blocks(rng, qtype, n_blocks):
    block_elems, block_bytes = GGML_QUANT_SIZES[qtype]
    if qtype in (T.F16, T.BF16):
        bits = rng.integers(0, 1 << 16, n_blocks, dtype=np.uint16)
        exp_mask = np.uint16(0x7C00 if qtype == T.F16 else 0x7F80)
        bits[(bits & exp_mask) == exp_mask] &= ~np.uint16(0x4000)  # no Inf/NaN
        return bits.view(np.uint8).copy()
    if qtype == T.F32:
        bits = rng.integers(0, 1 << 32, n_blocks, dtype=np.uint32)
        bits[(bits & 0x7F800000) == 0x7F800000] &= ~np.uint32(0x40000000)
        return bits.view(np.uint8).copy()
    blocks = rng.integers(0, 256, (n_blocks, block_bytes), dtype=np.uint8)
    for off in TYPES[qtype]:
        blocks[:, off:off + 2] = sane_floats(rng, n_blocks, np.float16).view(np.uint8).reshape(n_blocks, 2)
    if qtype == T.Q8_K:
        blocks[:, 0:4] = sane_floats(rng, n_blocks, np.float32).view(np.uint8).reshape(n_blocks, 4)
    return blocks.reshape(-1)


def record(out, name, qtype, raw, values):
    raw = np.ascontiguousarray(raw, dtype=np.uint8).tobytes()
    values = np.ascontiguousarray(values, dtype="<f4").tobytes()
    nb = name.encode()
    out.write(struct.pack("<I", len(nb)) + nb + struct.pack("<IQ", int(qtype), len(raw)))
    out.write(raw)
    out.write(struct.pack("<Q", len(values) // 4))
    out.write(values)


def random_mode(args, out):
    rng = np.random.default_rng(args.seed)
    for qtype in TYPES:
        n = args.blocks * (256 if GGML_QUANT_SIZES[qtype][0] == 1 else 1)
        raw = random_blocks(rng, qtype, n)
        record(out, qtype.name, qtype, raw, dequant(raw, qtype))


def model_mode(args, reader, out):
    by_type = {}
    for t in reader.tensors:
        by_type.setdefault(t.tensor_type, []).append(t)
    for qtype, tensors in by_type.items():
        picks = sorted({0, len(tensors) // 2, len(tensors) - 1})[: args.per_type]
        for i in picks:
            t = tensors[i]
            block_elems, block_bytes = GGML_QUANT_SIZES[qtype]
            row_len = int(t.shape[0])
            n_rows = int(t.n_elements) // row_len
            row_bytes = row_len // block_elems * block_bytes
            rows = min(args.rows, n_rows)
            raw = np.asarray(t.data).reshape(-1).view(np.uint8)[: rows * row_bytes]
            record(out, t.name, qtype, raw, dequant(raw, qtype))


def header(reader, out):
    """Lines (tab-separated):
    V version
    D data_offset alignment
    T name type_id offset(relative to the data section) dims(comma-separated, ggml order)
    K key value_type payload
      payload: integers in decimal, floats as the hex of their IEEE bits, bools 0/1,
      strings as hex of their UTF-8; arrays as elem_type:count:bytes:crc32 (zlib's, hex)
      of the elements' bytes (numbers little-endian, bools one byte, strings u64 length
      + bytes).
    """
    r = reader
    lines = [f"V\t{int(r.fields['GGUF.version'].parts[-1][0])}", f"D\t{r.data_offset}\t{r.alignment}"]
    for t in r.tensors:
        dims = ",".join(str(int(d)) for d in t.shape)
        lines.append(f"T\t{t.name}\t{int(t.tensor_type)}\t{t.data_offset - r.data_offset}\t{dims}")
    for key, f in r.fields.items():
        if key.startswith("GGUF."):
            continue
        vt = f.types[0]
        if vt == GGUFValueType.ARRAY:
            sub = f.types[-1]
            if len(f.types) != 2:
                payload = f"nested:{len(f.data)}"
            else:
                blob = bytearray()
                for i in f.data:
                    part = f.parts[i]
                    if sub == GGUFValueType.STRING:
                        blob += struct.pack("<Q", len(part)) + part.tobytes()
                    else:
                        blob += part.tobytes()
                payload = f"{int(sub)}:{len(f.data)}:{len(blob)}:{zlib.crc32(bytes(blob)):08x}"
        elif vt == GGUFValueType.STRING:
            payload = f.parts[f.data[0]].tobytes().hex()
        elif vt in (GGUFValueType.FLOAT32, GGUFValueType.FLOAT64):
            payload = f.parts[f.data[0]].tobytes()[::-1].hex()
        elif vt == GGUFValueType.BOOL:
            payload = str(int(f.parts[f.data[0]][0]))
        else:
            payload = str(int(f.parts[f.data[0]][0]))
        lines.append(f"K\t{key}\t{int(vt)}\t{payload}")
    out.write(("\n".join(lines) + "\n").encode())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", nargs="?", default="random")
    p.add_argument("--blocks", type=int, default=64)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--model")
    p.add_argument("--rows", type=int, default=4)
    p.add_argument("--per-type", type=int, default=3)
    args = p.parse_args()
    out = sys.stdout.buffer
    out.write(b"KDQ1")
    if args.model:
        reader = GGUFReader(args.model)
        model_mode(args, reader, out)
        out.write(struct.pack("<I", 0xFFFFFFFF))
        header(reader, out)
    else:
        random_mode(args, out)
        out.write(struct.pack("<I", 0xFFFFFFFF))


if __name__ == "__main__":
    main()
