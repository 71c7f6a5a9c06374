#!/usr/bin/env python3
"""Give a noise-weight model's F32 tensors (norm weights, biases) ordinary values, in place.

  sane_floats.py MODEL.gguf [LO HI]

`gguf_stub.py expand` fills the tensor data with bytes below 0x3C, so an F32 value's top byte
is below 0x3C: its exponent is small, and many of them (those with a zero exponent byte) are
subnormal. An RMS norm's weights of that kind make every activation after it subnormal, and on
Intel CPUs each f32 operation on a subnormal takes a microcode assist: the CPU path ran several
times slower on such a model than on the real weights (an AMD CPU pays less). Real models have
norm weights near 1, so this writes values in [0.5, 1.5) over every F32 tensor. Quantized and
F16 data stay noise (their f16 scales are normal or tiny, never subnormal in f32). Timing only.

LO HI (default 0.5 1.5) give another range. With norms near 1, SmolLM2's noise activations grow
past f16's range within a few layers: llama.cpp's logits are then NaN, it samples token 0 (its
end of text) and stops after one token, ignore_eos or not. Norm weights in [0.02, 0.06) keep
them finite (and far from subnormal).
"""
import struct, sys

import numpy as np

SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # GGUF value type -> bytes


def f32_tensors(f):
    """(data offset, [(offset within the data, element count)] of the F32 tensors)."""
    rd = f.read
    u32 = lambda: struct.unpack('<I', rd(4))[0]
    u64 = lambda: struct.unpack('<Q', rd(8))[0]

    def skip_value(t):
        if t in SCALAR:
            rd(SCALAR[t])
        elif t == 8:
            rd(u64())
        elif t == 9:
            et, n = u32(), u64()
            if et in SCALAR:
                rd(SCALAR[et] * n)
            else:
                for _ in range(n):
                    skip_value(et)
        else:
            raise ValueError(f'unknown GGUF value type {t}')

    if rd(4) != b'GGUF':
        raise ValueError('not a GGUF file')
    _version, n_tensors, n_kv = u32(), u64(), u64()
    align = 32
    for _ in range(n_kv):
        key = rd(u64()).decode()
        t = u32()
        if key == 'general.alignment' and t == 4:
            align = u32()
        else:
            skip_value(t)
    found = []
    for _ in range(n_tensors):
        rd(u64())  # name
        dims = [u64() for _ in range(u32())]
        ty, offset = u32(), u64()
        if ty == 0:
            found.append((offset, int(np.prod(dims))))
    return (f.tell() + align - 1) // align * align, found


def main():
    path = sys.argv[1]
    lo, hi = (float(v) for v in sys.argv[2:4]) if len(sys.argv) >= 4 else (0.5, 1.5)
    with open(path, 'r+b') as f:
        base, tensors = f32_tensors(f)
        rng = np.random.default_rng(1)
        for offset, count in tensors:
            f.seek(base + offset)
            f.write(rng.uniform(lo, hi, count).astype('<f4').tobytes())
    print(f'{path}: {len(tensors)} F32 tensors given values in [{lo}, {hi})')


main()
