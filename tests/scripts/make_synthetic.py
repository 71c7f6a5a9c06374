#!/usr/bin/env python3
"""Write tiny synthetic GGUF models for fast loader / forward-pass tests.

    python3 tests/scripts/make_synthetic.py OUT_DIR

Writes (deterministic: fixed seeds, no timestamps, same bytes every run):

  tiny-llama.gguf      llama arch, 2 layers, dim 256, ffn 512, 4 heads x 64, 2 kv heads,
                       gpt2-style byte-level BPE vocab of 300 (pre "smollm"), tied embeddings.
                       Its 14 layer matmul weights + token_embd cover every type below, so each
                       goes through a matmul:
                       F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K.
                       llama.cpp loads and runs it.
  tiny-llama-q8k.gguf  the same model with blk.1.ffn_gate stored as Q8_K (llama.cpp cannot
                       run it: Q8_K is only an activation type there, with no vec_dot for it
                       as src0; gguf-py cannot dequantize it either). For our own loader/matmul.
  tiny-gemma3.gguf     gemma3 arch, 7 layers (0-4 and 6 sliding, 5 global: llama.cpp's fixed
                       pattern of 6), dim 256, ffn 512, 2 heads x 64, 1 kv head, sliding window 4,
                       q/k norms, post norms, SentencePiece-style vocab with scores and byte
                       fallback, add_bos true, tied embeddings. llama.cpp loads and runs it.
  tiny-*.json          sidecar per model: hyperparameters (as written and as effective), the
                       tokenizer's special ids, and every tensor's type / shape / byte size.

Weights are random (numpy default_rng, fixed seed). Types that gguf-py can quantize
(F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0) are quantized from a random f32 matrix with
`gguf.quants.quantize`. gguf-py 0.19 has no quantizer for the K-quants, so for those we
write random block bytes and then overwrite the scale fields with sane, finite, *normal*
f16 values chosen so the dequantized matrix has the wanted standard deviation and (for the
types with a min) roughly zero mean. Block layouts relied on (ggml-common.h, QK_K = 256,
offsets in bytes within one block; they match gguf-py's dequantizers):

  Q2_K  84 B: scales[16] u8 (lo nibble scale, hi nibble min) @0 | qs[64] @16 | d f16 @80 | dmin f16 @82
  Q3_K 110 B: hmask[32] @0 | qs[64] @32 | scales[12] (6-bit packed, minus 32) @96 | d f16 @108
  Q4_K 144 B: d f16 @0 | dmin f16 @2 | scales[12] (6-bit scale/min packed) @4 | qs[128] @16
  Q5_K 176 B: d f16 @0 | dmin f16 @2 | scales[12] @4 | qh[32] @16 | qs[128] @48
  Q6_K 210 B: ql[128] @0 | qh[64] @128 | scales[16] i8 @192 | d f16 @208
  Q8_K 292 B: d f32 @0 | qs[256] i8 @4 | bsums[16] i16 @260 (bsums[i] = sum of qs[16i..16i+16])

Q6_K sub-block scales are drawn from [-32, 31] (not the full i8 range) so that d stays a
normal f16 at these weight magnitudes. Norm weights are 1 + 0.1*N(0,1) for both models (for
gemma3 that is the value llama.cpp multiplies by: its converter stores Gemma norms as 1 + w).

Tensor shapes in the sidecar are in GGUF/ggml order (ne0 first = the row length).
Takes about a second. Needs numpy and PyPI `gguf` (0.19).
"""

import hashlib
import json
import os
import re
import sys
from collections import Counter

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T, GGUFWriter, TokenType

QK_K = 256

# ----------------------------------------------------------------------------------------
# A small embedded corpus for the two tiny tokenizers (deterministic BPE training).
CORPUS = """\
The quick brown fox jumps over the lazy dog. The dog sleeps in the sun while the fox runs
into the forest. Once upon a time there was a little girl who lived in a village near the
forest. She liked to walk in the woods and listen to the birds. One day she met a wolf.
The wolf asked her where she was going, and she said that she was going to see her
grandmother, who lived on the other side of the forest. Hello, world! How are you today?
I am fine, thank you. What is the capital of France? The capital of France is Paris.
def main(): return 0. for i in range(10): print(i). Numbers: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10.
A language model predicts the next token from the tokens that came before it. Models are
trained on large amounts of text, and they learn the structure of the language and the
world that the text describes. The weather is nice and the sky is blue. Water is wet and
fire is hot. This is a test of the tokenizer, and this is only a test.
"""


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable unicode char map."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def train_bpe(words: Counter, n_merges: int):
    """Plain BPE on pre-split words (each a tuple of symbols). Ties broken by the pair itself,
    so the result is deterministic. Returns the merges in order."""
    words = {tuple(w): c for w, c in words.items()}
    merges = []
    for _ in range(n_merges):
        pairs = Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        best = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        merges.append(best)
        new = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + c
        words = new
    return merges


# ----------------------------------------------------------------------------------------
# Weights


def rand_normal_weight(rng, rows, cols, std):
    return (rng.standard_normal((rows, cols)) * std).astype(np.float32)


# Per K-quant type: (type_size, [(offset, 'f16'|'f32', role)], dmin/d ratio giving ~zero mean)
KQ_LAYOUT = {
    T.Q2_K: (84, [(80, "d"), (82, "dmin")], 1.5),   # E[q]=1.5 with E[scale]=E[min]
    T.Q3_K: (110, [(108, "d")], None),
    T.Q4_K: (144, [(0, "d"), (2, "dmin")], 7.5),    # E[q]=7.5
    T.Q5_K: (176, [(0, "d"), (2, "dmin")], 15.5),   # E[q]=15.5
    T.Q6_K: (210, [(208, "d")], None),
}


def random_kquant(rng, qtype, rows, cols, std):
    """Random K-quant blocks whose dequantized values have standard deviation ~std."""
    assert cols % QK_K == 0, (qtype, cols)
    nb = rows * cols // QK_K
    if qtype == T.Q8_K:
        blocks = np.zeros((nb, 292), dtype=np.uint8)
        qs = rng.integers(-127, 128, size=(nb, QK_K), dtype=np.int8)
        d = np.full((nb, 1), std / float(np.std(qs.astype(np.float32))), dtype=np.float32)
        blocks[:, 0:4] = d.view(np.uint8)
        blocks[:, 4:260] = qs.view(np.uint8)
        bsums = qs.astype(np.int16).reshape(nb, 16, 16).sum(axis=2).astype(np.int16)
        blocks[:, 260:292] = bsums.view(np.uint8)
        return blocks.reshape(rows, -1)
    size, fields, ratio = KQ_LAYOUT[qtype]
    blocks = rng.integers(0, 256, size=(nb, size), dtype=np.uint8)
    if qtype == T.Q6_K:
        blocks[:, 192:208] = rng.integers(-32, 32, size=(nb, 16), dtype=np.int8).view(np.uint8)

    def set_scales(s):
        for off, role in fields:
            v = s if role == "d" else s * ratio
            blocks[:, off:off + 2] = np.full((nb, 1), v, dtype=np.float16).view(np.uint8)

    set_scales(1.0)
    probe = gguf.quants.dequantize(blocks, qtype)
    s = std / float(np.std(probe))
    assert np.float16(s) >= np.finfo(np.float16).tiny, (qtype, s)  # a normal f16
    set_scales(s)
    out = blocks.reshape(rows, -1)
    deq = gguf.quants.dequantize(out, qtype)
    assert np.all(np.isfinite(deq))
    return out


def make_weight(rng, qtype, rows, cols, std):
    """Returns (array to hand to GGUFWriter.add_tensor, raw_dtype or None)."""
    if qtype in (T.F32, T.F16):
        return gguf.quants.quantize(rand_normal_weight(rng, rows, cols, std), qtype), None
    if qtype in KQ_LAYOUT or qtype == T.Q8_K:
        return random_kquant(rng, qtype, rows, cols, std), qtype
    return gguf.quants.quantize(rand_normal_weight(rng, rows, cols, std), qtype), qtype


class Model:
    """Collects tensors (in insertion order) and their sidecar records."""

    def __init__(self, writer):
        self.w = writer
        self.records = []

    def add(self, rng, name, qtype, rows, cols, std):
        arr, raw = make_weight(rng, qtype, rows, cols, std)
        self.w.add_tensor(name, arr, raw_dtype=raw)
        self.records.append({"name": name, "type": qtype.name, "shape": [cols, rows], "nbytes": int(arr.nbytes)})

    def add_norm(self, rng, name, n):
        v = (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)
        self.w.add_tensor(name, v)
        self.records.append({"name": name, "type": "F32", "shape": [n], "nbytes": int(v.nbytes)})


def finish(writer, model, path, sidecar):
    writer.write_header_to_file(path=path)
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    sidecar["file"] = os.path.basename(path)
    sidecar["sha256"] = sha
    sidecar["size_bytes"] = os.path.getsize(path)
    sidecar["tensors"] = model.records
    sidecar["tensor_types"] = dict(sorted(Counter(r["type"] for r in model.records).items()))
    side_path = os.path.splitext(path)[0] + ".json"
    with open(side_path, "w") as f:
        json.dump(sidecar, f, indent=1)
        f.write("\n")
    print(f"{path}  ({sidecar['size_bytes']} bytes, sha256 {sha[:16]}...)")
    print(side_path)


# ----------------------------------------------------------------------------------------
# tiny-llama


def gpt2_vocab():
    b2u = bytes_to_unicode()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    byte_tokens = [b2u[b] for b in range(256)]
    # GPT-2-like pre-split (smollm's pre-tokenizer also splits digits one by one)
    pieces = re.findall(r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+", CORPUS)
    words = Counter(tuple(b2u[b] for b in p.encode("utf-8")) for p in pieces)
    n_merges = 300 - len(specials) - len(byte_tokens)
    merges = train_bpe(words, n_merges)
    tokens = specials + byte_tokens + [a + b for a, b in merges]
    assert len(set(tokens)) == len(tokens), "duplicate token"
    types = [TokenType.CONTROL] * len(specials) + [TokenType.NORMAL] * (len(tokens) - len(specials))
    return tokens, types, [f"{a} {b}" for a, b in merges]


CHATML_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

LLAMA_TYPES = {
    # layer -> weight -> type: every supported type goes through at least one matmul
    0: {"attn_q": T.F32, "attn_k": T.F16, "attn_v": T.BF16, "attn_output": T.Q4_0,
        "ffn_gate": T.Q4_1, "ffn_up": T.Q5_0, "ffn_down": T.Q5_1},
    1: {"attn_q": T.Q8_0, "attn_k": T.Q2_K, "attn_v": T.Q3_K, "attn_output": T.Q4_K,
        "ffn_gate": T.Q5_K, "ffn_up": T.Q6_K, "ffn_down": T.Q4_K},
}
LLAMA_EMBD_TYPE = T.Q6_K  # tied: used for the embedding lookup AND the output matmul


def write_tiny_llama(out_dir, q8k=False):
    hp = dict(n_layer=2, n_embd=256, n_ff=512, n_head=4, n_head_kv=2, head_dim=64, n_ctx_train=256,
              rope_freq_base=100000.0, rms_eps=1e-5)
    tokens, types, merges = gpt2_vocab()
    name = "tiny-llama-q8k.gguf" if q8k else "tiny-llama.gguf"
    path = os.path.join(out_dir, name)
    w = GGUFWriter(path=None, arch="llama")
    w.add_name("tiny-llama (synthetic, random weights)")
    w.add_context_length(hp["n_ctx_train"])
    w.add_embedding_length(hp["n_embd"])
    w.add_block_count(hp["n_layer"])
    w.add_feed_forward_length(hp["n_ff"])
    w.add_head_count(hp["n_head"])
    w.add_head_count_kv(hp["n_head_kv"])
    w.add_rope_freq_base(hp["rope_freq_base"])
    w.add_layer_norm_rms_eps(hp["rms_eps"])
    w.add_vocab_size(len(tokens))
    w.add_rope_dimension_count(hp["head_dim"])
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_pad_token_id(2)
    w.add_add_bos_token(False)
    w.add_add_space_prefix(False)
    w.add_chat_template(CHATML_TEMPLATE)
    w.add_quantization_version(2)

    rng = np.random.default_rng(1234)
    m = Model(w)
    d, ff, hd = hp["n_embd"], hp["n_ff"], hp["head_dim"]
    q_out, kv_out = hp["n_head"] * hd, hp["n_head_kv"] * hd
    m.add(rng, "token_embd.weight", LLAMA_EMBD_TYPE, len(tokens), d, 0.1)
    m.add_norm(rng, "output_norm.weight", d)
    for il in range(hp["n_layer"]):
        t = dict(LLAMA_TYPES[il])
        if q8k and il == 1:
            t["ffn_gate"] = T.Q8_K
        p = f"blk.{il}."
        m.add_norm(rng, p + "attn_norm.weight", d)
        m.add(rng, p + "attn_q.weight", t["attn_q"], q_out, d, d ** -0.5)
        m.add(rng, p + "attn_k.weight", t["attn_k"], kv_out, d, d ** -0.5)
        m.add(rng, p + "attn_v.weight", t["attn_v"], kv_out, d, d ** -0.5)
        m.add(rng, p + "attn_output.weight", t["attn_output"], d, q_out, 0.5 * q_out ** -0.5)
        m.add_norm(rng, p + "ffn_norm.weight", d)
        m.add(rng, p + "ffn_gate.weight", t["ffn_gate"], ff, d, d ** -0.5)
        m.add(rng, p + "ffn_up.weight", t["ffn_up"], ff, d, d ** -0.5)
        m.add(rng, p + "ffn_down.weight", t["ffn_down"], d, ff, 0.5 * ff ** -0.5)

    sidecar = {
        "arch": "llama",
        "hparams": {**hp, "n_vocab": len(tokens), "tie_word_embeddings": True, "rope_dimension_count": hd,
                    "attention_scale": hd ** -0.5},
        "tokenizer": {"model": "gpt2", "pre": "smollm", "n_tokens": len(tokens), "n_merges": len(merges),
                      "bos_token_id": 1, "eos_token_id": 2, "unk_token_id": 0, "pad_token_id": 2,
                      "add_bos_token": False, "specials": {t: i for i, t in enumerate(tokens[:3])},
                      "chat_template": "ChatML"},
        "notes": "tied embeddings (no output.weight). Q/K weights are random, so llama.cpp's Q/K row "
                 "permutation convention is irrelevant to their values but applies as usual (rope is the "
                 "NORM/interleaved-pairs kind of llama.cpp's llama arch).",
    }
    if q8k:
        sidecar["notes"] += " blk.1.ffn_gate is Q8_K: llama.cpp cannot run this file."
    finish(w, m, path, sidecar)


# ----------------------------------------------------------------------------------------
# tiny-gemma3


def spm_vocab():
    specials = [("<pad>", TokenType.CONTROL), ("<eos>", TokenType.CONTROL), ("<bos>", TokenType.CONTROL),
                ("<unk>", TokenType.UNKNOWN), ("<mask>", TokenType.CONTROL),
                ("<start_of_turn>", TokenType.CONTROL), ("<end_of_turn>", TokenType.CONTROL),
                ("\n", TokenType.USER_DEFINED), ("\n\n", TokenType.USER_DEFINED)]
    tokens = [t for t, _ in specials]
    types = [ty for _, ty in specials]
    scores = [-1000.0] * len(specials)
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(TokenType.BYTE)
        scores.append(0.0)
    # SentencePiece style: whitespace -> U+2581, words prefixed with it; BPE merges by score.
    words = Counter()
    for line in CORPUS.split("\n"):
        for word in line.split(" "):
            if word:
                words[tuple("\u2581" + word)] += 1
    chars = sorted({c for w in words for c in w})
    merges = train_bpe(words, 380)
    # Merged pieces first (score = -rank, higher merges earlier, like Gemma's -rank scores),
    # then the single characters with the lowest scores.
    seen = set(tokens)
    n = 0
    for a, b in merges:
        piece = a + b
        if piece in seen:
            continue
        seen.add(piece)
        tokens.append(piece)
        types.append(TokenType.NORMAL)
        scores.append(-float(n))
        n += 1
    for c in chars:
        if c in seen:
            continue
        seen.add(c)
        tokens.append(c)
        types.append(TokenType.NORMAL)
        scores.append(-float(n))
        n += 1
    return tokens, types, scores


def write_tiny_gemma3(out_dir):
    hp = dict(n_layer=7, n_embd=256, n_ff=512, n_head=2, n_head_kv=1, head_dim=64, n_ctx_train=256,
              rope_freq_base=1000000.0, rms_eps=1e-6, sliding_window=4)
    tokens, types, scores = spm_vocab()
    path = os.path.join(out_dir, "tiny-gemma3.gguf")
    w = GGUFWriter(path=None, arch="gemma3")
    w.add_name("tiny-gemma3 (synthetic, random weights)")
    w.add_context_length(hp["n_ctx_train"])
    w.add_embedding_length(hp["n_embd"])
    w.add_block_count(hp["n_layer"])
    w.add_feed_forward_length(hp["n_ff"])
    w.add_head_count(hp["n_head"])
    w.add_layer_norm_rms_eps(hp["rms_eps"])
    w.add_key_length(hp["head_dim"])
    w.add_value_length(hp["head_dim"])
    w.add_rope_freq_base(hp["rope_freq_base"])
    w.add_sliding_window(hp["sliding_window"])
    w.add_head_count_kv(hp["n_head_kv"])
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(2)
    w.add_eos_token_id(1)
    w.add_unk_token_id(3)
    w.add_pad_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(False)
    w.add_quantization_version(2)

    rng = np.random.default_rng(5678)
    m = Model(w)
    d, ff, hd = hp["n_embd"], hp["n_ff"], hp["head_dim"]
    q_out, kv_out = hp["n_head"] * hd, hp["n_head_kv"] * hd
    # Types cycle over the layer weights; attn_output has rows of q_out = 128 (< QK_K), so
    # it only takes the 32-block types.
    any_types = [T.Q5_0, T.Q4_K, T.Q6_K, T.Q8_0, T.Q2_K, T.Q3_K, T.Q5_K, T.Q4_0, T.Q4_1, T.Q5_1,
                 T.F16, T.BF16, T.F32]
    small_types = [T.Q8_0, T.Q5_0, T.Q4_1, T.F16, T.BF16, T.Q5_1, T.Q4_0]
    m.add(rng, "token_embd.weight", T.Q8_0, len(tokens), d, 0.1)
    m.add_norm(rng, "output_norm.weight", d)
    k = 0
    for il in range(hp["n_layer"]):
        p = f"blk.{il}."

        def nxt():
            nonlocal k
            k += 1
            return any_types[(k - 1) % len(any_types)]

        m.add_norm(rng, p + "attn_norm.weight", d)
        m.add(rng, p + "attn_q.weight", nxt(), q_out, d, d ** -0.5)
        m.add(rng, p + "attn_k.weight", nxt(), kv_out, d, d ** -0.5)
        m.add(rng, p + "attn_v.weight", nxt(), kv_out, d, d ** -0.5)
        m.add_norm(rng, p + "attn_q_norm.weight", hd)
        m.add_norm(rng, p + "attn_k_norm.weight", hd)
        m.add(rng, p + "attn_output.weight", small_types[il % len(small_types)], d, q_out, 0.5 * q_out ** -0.5)
        m.add_norm(rng, p + "post_attention_norm.weight", d)
        m.add_norm(rng, p + "ffn_norm.weight", d)
        m.add(rng, p + "ffn_gate.weight", nxt(), ff, d, d ** -0.5)
        m.add(rng, p + "ffn_up.weight", nxt(), ff, d, d ** -0.5)
        m.add(rng, p + "ffn_down.weight", nxt(), d, ff, 0.5 * ff ** -0.5)
        m.add_norm(rng, p + "post_ffw_norm.weight", d)

    pattern = 6
    sidecar = {
        "arch": "gemma3",
        "hparams": {**hp, "n_vocab": len(tokens), "tie_word_embeddings": True,
                    # Not in the file (the real gemma-3-270m GGUF has none of these keys either);
                    # llama.cpp's gemma3 loader fixes them when attention.sliding_window is present:
                    "sliding_window_pattern": pattern,
                    "layer_types": ["full" if (il + 1) % pattern == 0 else "sliding" for il in range(hp["n_layer"])],
                    "rope_freq_base_swa": 10000.0,
                    "query_pre_attn_scalar": hd,  # llama.cpp: attention scale 1/sqrt(head_dim) (non-27B)
                    "attention_scale": hd ** -0.5,
                    "embedding_scale": d ** 0.5,
                    "hidden_activation": "gelu_pytorch_tanh",
                    "final_logit_softcapping": None,
                    "attn_logit_softcapping": None},
        "tokenizer": {"model": "llama", "pre": "default", "n_tokens": len(tokens),
                      "bos_token_id": 2, "eos_token_id": 1, "unk_token_id": 3, "pad_token_id": 0,
                      "add_bos_token": True, "add_space_prefix": False,
                      "specials": {t: i for i, t in enumerate(tokens[:9])},
                      "byte_tokens": "<0x00>..<0xFF> at ids 9..264"},
        "notes": "Norm weights (attn_norm, attn_q_norm, attn_k_norm, post_attention_norm, ffn_norm, post_ffw_norm, "
                 "output_norm) are stored as llama.cpp's converter stores Gemma norms: the multiplier itself "
                 "(1 + w in HF terms). Sliding window 4: llama.cpp's standard SWA masks key position p1 for query p0 "
                 "when p0 - p1 >= 4 (each query sees itself and the 3 before it).",
    }
    finish(w, m, path, sidecar)


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    write_tiny_llama(out_dir)
    write_tiny_llama(out_dir, q8k=True)
    write_tiny_gemma3(out_dir)


if __name__ == "__main__":
    main()
