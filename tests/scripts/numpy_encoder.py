#!/usr/bin/env python3
"""A plain numpy (float64) forward pass of the `bert` and `nomic-bert` encoders in a GGUF
file, from gguf-py's reader and dequantizers: an independent check on llama.cpp's
embeddings in tests/scripts/gen_embed_refs.py (it is not the reference the tests use).

    python3 tests/scripts/numpy_encoder.py MODEL.gguf ID ID ...   # prints the embedding

Follows llama.cpp's graph (src/models/bert.cpp): token + token-type row 0 (+ learned
position) embeddings, LayerNorm; per block self-attention over the whole input (no mask),
add, LayerNorm, FFN (bert: GELU, tanh form as ggml's; nomic-bert: SiLU(gate) * up), add,
LayerNorm; then mean or CLS pooling and L2 normalisation.
"""
import sys

import numpy as np
import gguf


class Encoder:
    def __init__(self, path):
        r = gguf.GGUFReader(path)
        self.arch = r.fields["general.architecture"].contents()
        a = self.arch

        def kv(name, default=None):
            f = r.fields.get(f"{a}.{name}")
            return default if f is None else f.contents()

        self.n_head = int(kv("attention.head_count"))
        self.n_layer = int(kv("block_count"))
        self.eps = float(kv("attention.layer_norm_epsilon"))
        self.pooling = int(kv("pooling_type", 1))
        self.rope_base = float(kv("rope.freq_base", 10000.0))
        self.t = {}
        for t in r.tensors:
            # gguf-py gives numpy shape (ne1, ne0): rows are output features.
            self.t[t.name] = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64)

    def w(self, name):
        return self.t[name]

    def ln(self, x, prefix):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w(prefix + ".weight") + self.w(prefix + ".bias")

    def lin(self, x, name, bias=True):
        y = x @ self.w(name + ".weight").T
        if bias and name + ".bias" in self.t:
            y = y + self.w(name + ".bias")
        return y

    def rope(self, x):
        """NEOX rotary embedding over (n, heads, head_dim): pairs (i, i + head_dim/2)."""
        n, _, hd = x.shape
        half = hd // 2
        inv = self.rope_base ** (-np.arange(half) * 2.0 / hd)
        ang = np.arange(n)[:, None] * inv[None, :]
        cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        a, b = x[..., :half], x[..., half:]
        return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)

    def embed(self, ids):
        ids = np.asarray(ids)
        n = len(ids)
        x = self.w("token_embd.weight")[ids]
        if "token_types.weight" in self.t:
            x = x + self.w("token_types.weight")[0]
        if "position_embd.weight" in self.t:
            x = x + self.w("position_embd.weight")[:n]
        x = self.ln(x, "token_embd_norm")
        d = x.shape[1]
        hd = d // self.n_head
        for il in range(self.n_layer):
            p = f"blk.{il}."
            if p + "attn_qkv.weight" in self.t:
                qkv = self.lin(x, p + "attn_qkv")
                q, k, v = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:]
            else:
                q, k, v = (self.lin(x, p + name) for name in ("attn_q", "attn_k", "attn_v"))
            q, k, v = (m.reshape(n, self.n_head, hd) for m in (q, k, v))
            if self.arch == "nomic-bert":
                q, k = self.rope(q), self.rope(k)
            s = np.einsum("ihd,jhd->hij", q, k) / np.sqrt(hd)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            o = np.einsum("hij,jhd->ihd", s, v).reshape(n, d)
            x = self.ln(self.lin(o, p + "attn_output") + x, p + "attn_output_norm")
            if p + "ffn_gate.weight" in self.t:
                g = self.lin(x, p + "ffn_gate")
                h = g / (1.0 + np.exp(-g)) * self.lin(x, p + "ffn_up")
            else:
                u = self.lin(x, p + "ffn_up")
                h = 0.5 * u * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (u + 0.044715 * u ** 3)))
            x = self.ln(self.lin(h, p + "ffn_down") + x, p + "layer_output_norm")
        pooled = x[0] if self.pooling == 2 else x.mean(0)
        return pooled / np.linalg.norm(pooled)


if __name__ == "__main__":
    enc = Encoder(sys.argv[1])
    print(" ".join(f"{v:.6f}" for v in enc.embed([int(a) for a in sys.argv[2:]])))
