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

  Architecture models, each in its architecture's real llama.cpp GGUF layout (the tensor names
  and metadata keys convert_hf_to_gguf.py writes), dim 256, ffn 512, head_dim 64, a mix of
  32-block quants and K-quants in the matmuls, F32 norms / biases / rope factors; llama.cpp
  loads and runs each:
  tiny-qwen2.gguf      qwen2, 3 layers, 4 heads / 2 kv, F32 attn_q/k/v biases (std 0.75),
                       untied output.weight, byte-level BPE vocab of 400 with <|endoftext|>,
                       <|im_start|>, <|im_end|> last (pre "qwen2"), no BOS.
  tiny-qwen3.gguf      qwen3, 3 layers, 8 heads x 64 = 512 != 256 (key_length / value_length
                       64), 2 kv heads, attn_q_norm / attn_k_norm [64], no biases, tied, the
                       tiny-qwen2 vocab.
  tiny-llama3.gguf     llama, 3 layers, 4 heads / 1 kv, rope base 500000, rope_freqs.weight
                       [32] from Llama 3 scaling (factor 32, low 1, high 4, original context
                       512), tied, BPE vocab of 420 (pre "llama-bpe", Llama 3 specials), BOS.
  tiny-phi3.gguf       phi3, 3 layers, 4 heads / 2 kv, fused attn_qkv [256 -> 512] and ffn_up
                       [256 -> 1024] (gate rows, then up rows), LongRoPE: rope_factors_short
                       (1.0..3.0) / rope_factors_long, context 131072 > original 2048,
                       attn_factor sqrt(1 + ln 64 / ln 2048); untied; SentencePiece vocab with
                       Phi-3's added tokens last, no BOS.
  tiny-gemma2.gguf     gemma2, 4 layers (0, 2 sliding; 1, 3 global), 4 heads / 2 kv, sliding
                       window 4, attention soft-cap 5, final soft-cap 10, post norms, the
                       tiny-gemma3 vocab, BOS, tied.
  tiny-bert.gguf       bert (classic encoder), 2 layers, dim 128, ffn 512, 4 heads x 32, learned
                       absolute positions (position_embd, context 512), token_types [128 x 2]
                       (row 0 added), token_embd_norm, separate attn_q/k/v with F32 biases,
                       attn_output + bias, post-LayerNorms attn_output_norm / layer_output_norm
                       (weight + bias, eps 1e-12), GELU FFN ffn_up / ffn_down with biases;
                       non-causal, CLS pooling (pooling_type 2). Layer 0's matmuls F16, layer 1's
                       Q8_0. WordPiece vocab (tokenizer.ggml.model "bert") in the converter's
                       phantom-space form, laid out like bert-base-uncased's front: [PAD] 0,
                       [unused0..98], [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103, then pieces.
                       The special-id keys are those gguf-py's SpecialVocab writes for a BERT
                       tokenizer.json ([CLS] $A [SEP]): cls / seperator / eos (= [SEP]) / unknown /
                       padding / mask ids, add_bos_token and add_eos_token true, no bos_token_id
                       (llama.cpp's WPM default BOS is 101 = [CLS]). llama.cpp loads and runs it.
  tiny-nomic-bert.gguf nomic-bert, 2 layers, dim 128, ffn 256, 4 heads x 32, fused attn_qkv
                       [128 -> 384] without biases, NEOX rope (base 1000), SwiGLU FFN ffn_up /
                       ffn_gate / ffn_down without biases, the same post-LayerNorms, token_types,
                       no position_embd; non-causal, mean pooling (pooling_type 1); F16 matmuls;
                       the tiny-bert vocab. llama.cpp loads and runs it.
  tiny-*.json          sidecar per model: hyperparameters (as written and as effective), what the
                       forward pass needs ("forward", architecture models), the tokenizer's
                       special ids, and every tensor's type / shape / byte size.

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
import math
import os
import re
import sys
from collections import Counter

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T, GGUFWriter, TokenType

QK_K = 256

# Settings of the architecture models chosen so that each feature visibly changes the logits
# (measured with HF on the prompts' lengths, <= ~250 positions):
# * tiny-llama3's Llama 3 rope scaling uses original_max_position_embeddings 512, not Llama 3's
#   8192: with 8192 only pairs with wavelength > 2048 positions are scaled and dropping
#   rope_freqs moved the logits by a median 0.02 (max 0.7); with 512, 21 of 32 pairs get the
#   full factor 32 and dropping it moves them by a median 0.3 (max 7).
# * tiny-gemma2: Q/K weights 2x the usual std, so raw attention scores reach ~17 (p99 ~10), and
#   attention soft-cap 5 (Gemma 2: 50, which random weights never reach): dropping it moves the
#   logits by up to ~4; final soft-cap 10 (Gemma 2: 30): the top logit (~18 uncapped) becomes ~9.5.
LLAMA3_ORIG_CTX = 512
GEMMA2_ATTN_SOFTCAP = 5.0
GEMMA2_FINAL_SOFTCAP = 10.0
GEMMA2_EMBD_STD = 0.1
GEMMA2_QK_STD_MULT = 2.0

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
    if np.float16(s) < np.finfo(np.float16).tiny and qtype in (T.Q4_K, T.Q5_K):
        # Small std (e.g. 0.5 / sqrt(256)): d would be a subnormal f16. Keep the 6-bit
        # sub-block scales and mins <= 15 instead (clear bits 4-5 of scales/mins 0-3 and the high
        # bits of 4-7), so that d is 4x larger. (Never hit by tiny-llama / tiny-gemma3.)
        blocks[:, 4:12] &= 0x0F
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

    def add_vec(self, rng, name, n, std):
        """An F32 vector of N(0, std^2) values (biases)."""
        self.add_f32(name, (std * rng.standard_normal(n)).astype(np.float32))

    def add_f32(self, name, v):
        v = np.ascontiguousarray(v, dtype=np.float32)
        self.w.add_tensor(name, v)
        self.records.append({"name": name, "type": "F32", "shape": [int(v.shape[0])], "nbytes": int(v.nbytes)})


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


GEMMA_SPECIALS = [("<pad>", TokenType.CONTROL), ("<eos>", TokenType.CONTROL), ("<bos>", TokenType.CONTROL),
                  ("<unk>", TokenType.UNKNOWN), ("<mask>", TokenType.CONTROL),
                  ("<start_of_turn>", TokenType.CONTROL), ("<end_of_turn>", TokenType.CONTROL),
                  ("\n", TokenType.USER_DEFINED), ("\n\n", TokenType.USER_DEFINED)]


def spm_vocab(specials=GEMMA_SPECIALS, specials_end=()):
    """SentencePiece-style vocab: `specials`, the 256 byte tokens, merged pieces, single chars,
    then `specials_end` (added tokens, as Phi-3 has them after the base vocab)."""
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
    for t, ty in specials_end:
        assert t not in seen
        tokens.append(t)
        types.append(ty)
        scores.append(0.0)
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


# ----------------------------------------------------------------------------------------
# Architecture models: tiny-qwen2, tiny-qwen3, tiny-llama3, tiny-phi3, tiny-gemma2.
# Each uses its architecture's real llama.cpp GGUF layout: the tensor names and metadata keys
# that llama.cpp's convert_hf_to_gguf.py writes for it (checked against the converter and
# loader of the llama.cpp that llama-cpp-python 0.3.36 vendors).

# ASCII renderings of llama.cpp's pre-tokenizer regexes (the corpus is ASCII); used only to
# pre-split the corpus for BPE training. qwen2: single digits; llama-bpe: up to 3 digits.
QWEN2_SPLIT = r"'s|'t|'re|'ve|'m|'ll|'d|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]| ?[^\sA-Za-z0-9]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
LLAMA3_SPLIT = r"'s|'t|'re|'ve|'m|'ll|'d|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]{1,3}| ?[^\sA-Za-z0-9]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def bpe_vocab_specials_last(n_vocab, split_re, specials):
    """Byte-level BPE vocab laid out like Qwen's and Llama 3's: the 256 byte tokens, the merged
    tokens, then the special tokens at the end (CONTROL)."""
    b2u = bytes_to_unicode()
    byte_tokens = [b2u[b] for b in range(256)]
    pieces = re.findall(split_re, CORPUS)
    words = Counter(tuple(b2u[b] for b in p.encode("utf-8")) for p in pieces)
    merges = train_bpe(words, n_vocab - len(specials) - len(byte_tokens))
    tokens = byte_tokens + [a + b for a, b in merges] + list(specials)
    assert len(tokens) == n_vocab and len(set(tokens)) == len(tokens)
    types = [TokenType.NORMAL] * (len(tokens) - len(specials)) + [TokenType.CONTROL] * len(specials)
    return tokens, types, [f"{a} {b}" for a, b in merges]


class TypeCycle:
    """Hands out weight types in a fixed rotation; a K-quant is passed over for a matrix whose
    rows (ne0) are not a multiple of QK_K."""

    def __init__(self, types):
        self.types, self.k = list(types), 0

    def __call__(self, cols):
        for _ in range(len(self.types)):
            t = self.types[self.k % len(self.types)]
            self.k += 1
            if t not in KQ_LAYOUT or cols % QK_K == 0:
                return t
        raise ValueError(f"no type fits rows of {cols}")


def add_layer(m, rng, il, hp, tc, *, qkv_bias_std=None, qk_norm=False, fused_qkv=False, fused_gate_up=False,
              post_norms=False, qk_std_mult=1.0):
    """One transformer block in llama.cpp's tensor naming. Matmul weights take their types from
    the TypeCycle `tc`; norms and biases are F32."""
    d, ff, hd = hp["n_embd"], hp["n_ff"], hp["head_dim"]
    q_out, kv_out = hp["n_head"] * hd, hp["n_head_kv"] * hd
    qk_std = qk_std_mult * d ** -0.5
    p = f"blk.{il}."
    m.add_norm(rng, p + "attn_norm.weight", d)
    if fused_qkv:
        # rows: q (q_out), then k (kv_out), then v (kv_out); one type for the fused matrix
        m.add(rng, p + "attn_qkv.weight", tc(d), q_out + 2 * kv_out, d, qk_std)
    else:
        for w, rows in (("attn_q", q_out), ("attn_k", kv_out), ("attn_v", kv_out)):
            m.add(rng, p + w + ".weight", tc(d), rows, d, qk_std if w != "attn_v" else d ** -0.5)
            if qkv_bias_std is not None:
                m.add_vec(rng, p + w + ".bias", rows, qkv_bias_std)
    if qk_norm:
        m.add_norm(rng, p + "attn_q_norm.weight", hd)
        m.add_norm(rng, p + "attn_k_norm.weight", hd)
    m.add(rng, p + "attn_output.weight", tc(q_out), d, q_out, 0.5 * q_out ** -0.5)
    if post_norms:
        m.add_norm(rng, p + "post_attention_norm.weight", d)
    m.add_norm(rng, p + "ffn_norm.weight", d)
    if fused_gate_up:
        # rows: gate (n_ff), then up (n_ff)
        m.add(rng, p + "ffn_up.weight", tc(d), 2 * ff, d, d ** -0.5)
    else:
        m.add(rng, p + "ffn_gate.weight", tc(d), ff, d, d ** -0.5)
        m.add(rng, p + "ffn_up.weight", tc(d), ff, d, d ** -0.5)
    m.add(rng, p + "ffn_down.weight", tc(ff), d, ff, 0.5 * ff ** -0.5)
    if post_norms:
        m.add_norm(rng, p + "post_ffw_norm.weight", d)


def add_common_hparams(w, hp, rope_freq_base=True):
    w.add_context_length(hp["n_ctx_train"])
    w.add_embedding_length(hp["n_embd"])
    w.add_block_count(hp["n_layer"])
    w.add_feed_forward_length(hp["n_ff"])
    w.add_head_count(hp["n_head"])
    w.add_head_count_kv(hp["n_head_kv"])
    if rope_freq_base:
        w.add_rope_freq_base(hp["rope_freq_base"])
    w.add_layer_norm_rms_eps(hp["rms_eps"])


def add_bpe_tokenizer(w, tokens, types, merges, pre, bos, eos, pad, add_bos, template):
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_eos_token_id(eos)
    if pad is not None:
        w.add_pad_token_id(pad)
    w.add_bos_token_id(bos)
    w.add_add_bos_token(add_bos)
    w.add_chat_template(template)


QWEN_TYPES = [T.Q5_0, T.Q8_0, T.Q4_K, T.Q6_K, T.Q5_K, T.Q3_K, T.Q2_K, T.Q4_0, T.Q4_1, T.Q5_1, T.F16, T.BF16, T.F32]


def write_tiny_qwen2(out_dir):
    hp = dict(n_layer=3, n_embd=256, n_ff=512, n_head=4, n_head_kv=2, head_dim=64, n_ctx_train=32768,
              rope_freq_base=1000000.0, rms_eps=1e-6, qkv_bias_std=0.75)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokens, types, merges = bpe_vocab_specials_last(400, QWEN2_SPLIT, specials)
    ids = {t: tokens.index(t) for t in specials}
    path = os.path.join(out_dir, "tiny-qwen2.gguf")
    w = GGUFWriter(path=None, arch="qwen2")
    w.add_name("tiny-qwen2 (synthetic, random weights)")
    add_common_hparams(w, hp)
    add_bpe_tokenizer(w, tokens, types, merges, "qwen2", bos=ids["<|endoftext|>"], eos=ids["<|im_end|>"],
                      pad=ids["<|endoftext|>"], add_bos=False, template=CHATML_TEMPLATE)
    w.add_quantization_version(2)

    rng = np.random.default_rng(2002)
    m = Model(w)
    d = hp["n_embd"]
    tc = TypeCycle(QWEN_TYPES)
    m.add(rng, "token_embd.weight", T.Q4_K, len(tokens), d, 0.1)
    for il in range(hp["n_layer"]):
        add_layer(m, rng, il, hp, tc, qkv_bias_std=hp["qkv_bias_std"])
    m.add_norm(rng, "output_norm.weight", d)
    m.add(rng, "output.weight", T.Q6_K, len(tokens), d, 0.1)

    sidecar = {
        "arch": "qwen2",
        "hparams": {**hp, "n_vocab": len(tokens), "tie_word_embeddings": False, "rope_dimension_count": hp["head_dim"],
                    "attention_scale": hp["head_dim"] ** -0.5},
        "forward": {
            "rope": "NEOX (rotate halves: pairs (i, i + head_dim/2)); llama.cpp qwen2 uses LLAMA_ROPE_TYPE_NEOX and "
                    "the converter does not permute Q/K",
            "qkv_bias": "blk.N.attn_q.bias / attn_k.bias / attn_v.bias (F32, std 0.75) are added to the Q/K/V "
                        "projections before RoPE",
            "ffn": "SwiGLU: down(silu(gate(x)) * up(x))",
            "output": "untied: output.weight (Q6_K), token_embd.weight (Q4_K) is only the embedding table",
            "head_dim": "no rope.dimension_count / key_length keys: head_dim = n_embd / n_head = 64",
        },
        "tokenizer": {"model": "gpt2", "pre": "qwen2", "n_tokens": len(tokens), "n_merges": len(merges),
                      "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
                      "pad_token_id": ids["<|endoftext|>"], "add_bos_token": False, "specials": ids,
                      "chat_template": "ChatML"},
    }
    finish(w, m, path, sidecar)


def write_tiny_qwen3(out_dir):
    hp = dict(n_layer=3, n_embd=256, n_ff=512, n_head=8, n_head_kv=2, head_dim=64, n_ctx_train=40960,
              rope_freq_base=1000000.0, rms_eps=1e-6)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokens, types, merges = bpe_vocab_specials_last(400, QWEN2_SPLIT, specials)
    ids = {t: tokens.index(t) for t in specials}
    path = os.path.join(out_dir, "tiny-qwen3.gguf")
    w = GGUFWriter(path=None, arch="qwen3")
    w.add_name("tiny-qwen3 (synthetic, random weights)")
    add_common_hparams(w, hp)
    w.add_key_length(hp["head_dim"])
    w.add_value_length(hp["head_dim"])
    add_bpe_tokenizer(w, tokens, types, merges, "qwen2", bos=ids["<|endoftext|>"], eos=ids["<|im_end|>"],
                      pad=ids["<|endoftext|>"], add_bos=False, template=CHATML_TEMPLATE)
    w.add_quantization_version(2)

    rng = np.random.default_rng(3003)
    m = Model(w)
    d = hp["n_embd"]
    tc = TypeCycle([T.Q4_K, T.Q6_K, T.Q8_0, T.Q5_K, T.Q3_K, T.Q5_0, T.Q2_K, T.Q4_0, T.F16, T.Q5_1, T.BF16, T.Q4_1])
    m.add(rng, "token_embd.weight", T.Q5_K, len(tokens), d, 0.1)
    for il in range(hp["n_layer"]):
        add_layer(m, rng, il, hp, tc, qk_norm=True)
    m.add_norm(rng, "output_norm.weight", d)

    q_out = hp["n_head"] * hp["head_dim"]
    sidecar = {
        "arch": "qwen3",
        "hparams": {**hp, "n_vocab": len(tokens), "tie_word_embeddings": True, "rope_dimension_count": hp["head_dim"],
                    "q_width": q_out, "kv_width": hp["n_head_kv"] * hp["head_dim"],
                    "attention_scale": hp["head_dim"] ** -0.5},
        "forward": {
            "rope": "NEOX (llama.cpp qwen3: LLAMA_ROPE_TYPE_NEOX, no Q/K permutation)",
            "head_dim": "from qwen3.attention.key_length / value_length (64); n_head * head_dim = 512 != "
                        "embedding_length 256, so attn_q is [256 -> 512] and attn_output [512 -> 256]",
            "qk_norm": "blk.N.attn_q_norm.weight / attn_k_norm.weight [head_dim]: RMSNorm (eps = rms_eps, weight "
                       "as stored) over each head's q / k vector, after the projection and BEFORE RoPE",
            "ffn": "SwiGLU",
            "output": "tied: no output.weight, token_embd.weight (Q5_K) is the output matrix too",
        },
        "tokenizer": {"model": "gpt2", "pre": "qwen2", "n_tokens": len(tokens), "n_merges": len(merges),
                      "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
                      "pad_token_id": ids["<|endoftext|>"], "add_bos_token": False, "specials": ids,
                      "chat_template": "ChatML"},
    }
    finish(w, m, path, sidecar)


def llama3_rope_factors(base, head_dim, factor, low_freq_factor, high_freq_factor, original_ctx):
    """rope_freqs.weight as convert_hf_to_gguf.py (LlamaModel.generate_extra_tensors) computes it:
    per frequency pair i, the number llama.cpp divides the rotation angle by."""
    freqs = 1.0 / (base ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim))
    low_wavelen = original_ctx / low_freq_factor
    high_wavelen = original_ctx / high_freq_factor
    out = []
    for f in freqs:
        wavelen = 2 * np.pi / f
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (original_ctx / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            out.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


LLAMA3_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
    " + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)


def write_tiny_llama3(out_dir):
    rope_scaling = dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                        original_max_position_embeddings=LLAMA3_ORIG_CTX)
    hp = dict(n_layer=3, n_embd=256, n_ff=512, n_head=4, n_head_kv=1, head_dim=64, n_ctx_train=131072,
              rope_freq_base=500000.0, rms_eps=1e-5)
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    tokens, types, merges = bpe_vocab_specials_last(420, LLAMA3_SPLIT, specials)
    ids = {t: tokens.index(t) for t in specials}
    path = os.path.join(out_dir, "tiny-llama3.gguf")
    w = GGUFWriter(path=None, arch="llama")
    w.add_name("tiny-llama3 (synthetic, random weights)")
    add_common_hparams(w, hp)
    w.add_key_length(hp["head_dim"])
    w.add_value_length(hp["head_dim"])
    w.add_vocab_size(len(tokens))
    w.add_rope_dimension_count(hp["head_dim"])
    add_bpe_tokenizer(w, tokens, types, merges, "llama-bpe", bos=ids["<|begin_of_text|>"], eos=ids["<|eot_id|>"],
                      pad=None, add_bos=True, template=LLAMA3_TEMPLATE)
    w.add_quantization_version(2)

    rng = np.random.default_rng(4004)
    m = Model(w)
    d, hd = hp["n_embd"], hp["head_dim"]
    tc = TypeCycle([T.Q4_K, T.Q4_K, T.Q6_K, T.Q5_0, T.Q8_0, T.Q3_K, T.Q5_K, T.Q2_K, T.Q4_1, T.BF16, T.Q5_1, T.F16, T.Q4_0])
    m.add(rng, "token_embd.weight", T.Q4_K, len(tokens), d, 0.1)
    factors = llama3_rope_factors(hp["rope_freq_base"], hd, rope_scaling["factor"], rope_scaling["low_freq_factor"],
                                  rope_scaling["high_freq_factor"], rope_scaling["original_max_position_embeddings"])
    m.add_f32("rope_freqs.weight", factors)
    for il in range(hp["n_layer"]):
        add_layer(m, rng, il, hp, tc)
    m.add_norm(rng, "output_norm.weight", d)

    n_one = int(np.sum(factors == 1.0))
    n_full = int(np.sum(factors == np.float32(rope_scaling["factor"])))
    sidecar = {
        "arch": "llama",
        "hparams": {**hp, "n_vocab": len(tokens), "tie_word_embeddings": True, "rope_dimension_count": hd,
                    "attention_scale": hd ** -0.5, "hf_rope_scaling": rope_scaling},
        "forward": {
            "rope": "NORM (adjacent pairs (2i, 2i+1)) like every llama-arch model; the converter permutes Q/K rows "
                    "(HF -> GGUF) for it, as for tiny-llama",
            "rope_freqs": f"rope_freqs.weight F32 [{hd // 2}] (one tensor for all layers): pair i rotates by "
                          f"pos * base^(-2i/{hd}) / rope_freqs[i]. Llama 3.x scaling baked in by the converter "
                          f"(factor {rope_scaling['factor']:g}, low_freq_factor {rope_scaling['low_freq_factor']:g}, "
                          f"high_freq_factor {rope_scaling['high_freq_factor']:g}, original_max_position_embeddings "
                          f"{rope_scaling['original_max_position_embeddings']}): {n_one} pairs 1.0, {n_full} pairs "
                          f"{rope_scaling['factor']:g}, {hd // 2 - n_one - n_full} in between. No llama.rope.scaling.* "
                          "keys: the converter writes none for rope_type llama3 (llama.cpp: scaling type defaults to "
                          "'linear' with factor 1, i.e. none; rope_freqs is the whole effect)",
            "rope_freqs_values": [float(x) for x in factors],
            "ffn": "SwiGLU",
            "output": "tied: no output.weight",
        },
        "tokenizer": {"model": "gpt2", "pre": "llama-bpe", "n_tokens": len(tokens), "n_merges": len(merges),
                      "bos_token_id": ids["<|begin_of_text|>"], "eos_token_id": ids["<|eot_id|>"],
                      "add_bos_token": True, "specials": ids, "chat_template": "Llama 3"},
    }
    finish(w, m, path, sidecar)


PHI3_TEMPLATE = (
    "{% for message in messages %}{{ '<|' + message['role'] + '|>\n' + message['content'] + '<|end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def write_tiny_phi3(out_dir):
    hp = dict(n_layer=3, n_embd=256, n_ff=512, n_head=4, n_head_kv=2, head_dim=64, n_ctx_train=131072,
              n_ctx_orig=2048, rope_freq_base=10000.0, rms_eps=1e-5)
    scale = hp["n_ctx_train"] / hp["n_ctx_orig"]
    attn_factor = math.sqrt(1 + math.log(scale) / math.log(hp["n_ctx_orig"]))  # as the converter computes it
    n_pairs = hp["head_dim"] // 2
    short = np.linspace(1.0, 3.0, n_pairs, dtype=np.float64).astype(np.float32)
    long = np.geomspace(1.0, 40.0, n_pairs, dtype=np.float64).astype(np.float32)
    front = [("<unk>", TokenType.UNKNOWN), ("<s>", TokenType.CONTROL), ("</s>", TokenType.CONTROL)]
    end = [(t, TokenType.CONTROL) for t in ("<|endoftext|>", "<|assistant|>", "<|system|>", "<|end|>", "<|user|>")]
    tokens, types, scores = spm_vocab(front, end)
    ids = {t: tokens.index(t) for t, _ in front + end}
    path = os.path.join(out_dir, "tiny-phi3.gguf")
    w = GGUFWriter(path=None, arch="phi3")
    w.add_name("tiny-phi3 (synthetic, random weights)")
    # the keys (and order) of Phi3MiniModel.set_gguf_parameters
    w.add_context_length(hp["n_ctx_train"])
    w.add_rope_scaling_orig_ctx_len(hp["n_ctx_orig"])
    w.add_embedding_length(hp["n_embd"])
    w.add_feed_forward_length(hp["n_ff"])
    w.add_block_count(hp["n_layer"])
    w.add_head_count(hp["n_head"])
    w.add_head_count_kv(hp["n_head_kv"])
    w.add_layer_norm_rms_eps(hp["rms_eps"])
    w.add_rope_dimension_count(hp["head_dim"])
    w.add_rope_freq_base(hp["rope_freq_base"])
    w.add_sliding_window(0)  # what the converter writes when the HF config has no sliding_window
    w.add_rope_scaling_attn_factors(attn_factor)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(ids["<s>"])
    w.add_eos_token_id(ids["<|endoftext|>"])
    w.add_unk_token_id(ids["<unk>"])
    w.add_pad_token_id(ids["<|endoftext|>"])
    w.add_add_bos_token(False)
    w.add_add_eos_token(False)
    w.add_chat_template(PHI3_TEMPLATE)
    w.add_quantization_version(2)

    rng = np.random.default_rng(5005)
    m = Model(w)
    d = hp["n_embd"]
    tc = TypeCycle([T.Q4_K, T.Q5_0, T.Q6_K, T.Q8_0, T.Q5_K, T.Q4_0, T.Q3_K, T.Q5_1, T.Q2_K, T.F16, T.Q4_1, T.BF16])
    m.add(rng, "token_embd.weight", T.Q4_0, len(tokens), d, 0.1)
    m.add_f32("rope_factors_long.weight", long)
    m.add_f32("rope_factors_short.weight", short)
    for il in range(hp["n_layer"]):
        add_layer(m, rng, il, hp, tc, fused_qkv=True, fused_gate_up=True)
    m.add_norm(rng, "output_norm.weight", d)
    m.add(rng, "output.weight", T.Q5_K, len(tokens), d, 0.1)

    q_out, kv_out = hp["n_head"] * hp["head_dim"], hp["n_head_kv"] * hp["head_dim"]
    sidecar = {
        "arch": "phi3",
        "hparams": {**hp, "n_vocab": len(tokens), "tie_word_embeddings": False, "rope_dimension_count": hp["head_dim"],
                    "rope_scaling_attn_factor": attn_factor, "attention_scale": hp["head_dim"] ** -0.5},
        "forward": {
            "rope": "NEOX (llama.cpp phi3: LLAMA_ROPE_TYPE_NEOX, no Q/K permutation)",
            "fused_qkv": f"blk.N.attn_qkv.weight [{d} -> {q_out + 2 * kv_out}]: output rows 0..{q_out} are q, "
                         f"{q_out}..{q_out + kv_out} k, {q_out + kv_out}..{q_out + 2 * kv_out} v",
            "fused_gate_up": f"blk.N.ffn_up.weight [{d} -> {2 * hp['n_ff']}]: rows 0..{hp['n_ff']} are the gate, "
                             f"{hp['n_ff']}..{2 * hp['n_ff']} the up projection; "
                             "ffn = down(silu(gate) * up) (llama.cpp LLM_FFN_SWIGLU); there is no ffn_gate tensor",
            "longrope": "rope_factors_short.weight / rope_factors_long.weight F32 [32] (one pair for all layers). "
                        "llama.cpp divides pair i's rotation angle by the SHORT factors when the context (n_ctx) is "
                        f"<= phi3.rope.scaling.original_context_length ({hp['n_ctx_orig']}), else by the LONG ones; "
                        "either way cos and sin are multiplied by phi3.rope.scaling.attn_factor "
                        f"({attn_factor:.6f} = sqrt(1 + ln({hp['n_ctx_train']}/{hp['n_ctx_orig']}) / "
                        f"ln({hp['n_ctx_orig']}))), i.e. q.k scores grow by attn_factor^2. HF Phi3 (longrope) does "
                        "the same, choosing long factors only for sequences longer than the original context",
            "rope_factors_short_values": [float(x) for x in short],
            "rope_factors_long_values": [float(x) for x in long],
            "sliding_window": "phi3.attention.sliding_window = 0, as the converter writes for a config without one; "
                              "llama.cpp disables SWA for phi3 anyway (any n_swa > 0 is reset to 0)",
            "output": "untied: output.weight (Q5_K)",
        },
        "tokenizer": {"model": "llama", "pre": "default", "n_tokens": len(tokens),
                      "bos_token_id": ids["<s>"], "eos_token_id": ids["<|endoftext|>"], "unk_token_id": ids["<unk>"],
                      "pad_token_id": ids["<|endoftext|>"], "add_bos_token": False,
                      "add_space_prefix": "absent (llama.cpp's SPM default: true)", "specials": ids,
                      "byte_tokens": "<0x00>..<0xFF> at ids 3..258", "chat_template": "Phi-3"},
    }
    finish(w, m, path, sidecar)


def write_tiny_gemma2(out_dir):
    hp = dict(n_layer=4, n_embd=256, n_ff=512, n_head=4, n_head_kv=2, head_dim=64, n_ctx_train=8192,
              rms_eps=1e-6, sliding_window=4, attn_logit_softcapping=GEMMA2_ATTN_SOFTCAP,
              final_logit_softcapping=GEMMA2_FINAL_SOFTCAP)
    tokens, types, scores = spm_vocab()
    path = os.path.join(out_dir, "tiny-gemma2.gguf")
    w = GGUFWriter(path=None, arch="gemma2")
    w.add_name("tiny-gemma2 (synthetic, random weights)")
    # the keys of Gemma2Model.set_gguf_parameters (no rope.freq_base: llama.cpp's default 10000)
    w.add_context_length(hp["n_ctx_train"])
    w.add_embedding_length(hp["n_embd"])
    w.add_block_count(hp["n_layer"])
    w.add_feed_forward_length(hp["n_ff"])
    w.add_head_count(hp["n_head"])
    w.add_head_count_kv(hp["n_head_kv"])
    w.add_layer_norm_rms_eps(hp["rms_eps"])
    w.add_key_length(hp["head_dim"])
    w.add_value_length(hp["head_dim"])
    w.add_attn_logit_softcapping(hp["attn_logit_softcapping"])
    w.add_final_logit_softcapping(hp["final_logit_softcapping"])
    w.add_sliding_window(hp["sliding_window"])
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

    rng = np.random.default_rng(6006)
    m = Model(w)
    d, hd = hp["n_embd"], hp["head_dim"]
    tc = TypeCycle([T.Q6_K, T.Q4_K, T.Q8_0, T.Q5_0, T.Q5_K, T.Q3_K, T.Q4_0, T.Q2_K, T.Q5_1, T.BF16, T.Q4_1, T.F16, T.F32])
    m.add(rng, "token_embd.weight", T.Q6_K, len(tokens), d, GEMMA2_EMBD_STD)
    for il in range(hp["n_layer"]):
        add_layer(m, rng, il, hp, tc, post_norms=True, qk_std_mult=GEMMA2_QK_STD_MULT)
    m.add_norm(rng, "output_norm.weight", d)

    sidecar = {
        "arch": "gemma2",
        "hparams": {**hp, "n_vocab": len(tokens), "tie_word_embeddings": True,
                    # Not in the file: llama.cpp's gemma2 loader fixes these.
                    "sliding_window_pattern": 2,
                    "layer_types": ["sliding" if il % 2 == 0 else "full" for il in range(hp["n_layer"])],
                    "rope_freq_base": 10000.0,
                    "query_pre_attn_scalar": hd,
                    "attention_scale": hd ** -0.5,
                    "embedding_scale": d ** 0.5,
                    "hidden_activation": "gelu_pytorch_tanh"},
        "forward": {
            "rope": "NEOX, base 10000 (no gemma2.rope.freq_base key: llama.cpp's default) for every layer",
            "embedding": f"token_embd row * sqrt(n_embd) = * {d ** 0.5:g}",
            "attention": f"scores = (q * {hd ** -0.5:g}) . k (1/sqrt(head_dim); only Gemma 2 27B uses "
                         f"1/sqrt(n_embd/n_head)), then soft-capped: cap * tanh(scores / cap) with cap = "
                         f"gemma2.attn_logit_softcapping = {hp['attn_logit_softcapping']:g}, then mask, softmax",
            "sliding_window": f"gemma2.attention.sliding_window = {hp['sliding_window']}; layers 0, 2 (even) slide, "
                              "1, 3 are global (llama.cpp's fixed gemma2 pattern of 2; HF layer_types the same). A "
                              f"sliding layer's query at p0 sees keys p1 with p0 - p1 < {hp['sliding_window']}",
            "norms": "attn_norm -> attention -> post_attention_norm -> + residual -> ffn_norm -> ffn -> post_ffw_norm "
                     "-> + residual; all RMSNorm, stored as the multiplier (1 + w in HF terms)",
            "ffn": "GeGLU with tanh-approximate GELU: down(gelu_tanh(gate(x)) * up(x))",
            "final_logit_softcapping": f"logits = cap * tanh(logits / cap), cap = {hp['final_logit_softcapping']:g}",
            "output": "tied: no output.weight (llama.cpp's gemma2 loader always uses token_embd)",
        },
        "tokenizer": {"model": "llama", "pre": "default", "n_tokens": len(tokens),
                      "bos_token_id": 2, "eos_token_id": 1, "unk_token_id": 3, "pad_token_id": 0,
                      "add_bos_token": True, "add_space_prefix": False,
                      "specials": {t: i for i, t in enumerate(tokens[:9])},
                      "byte_tokens": "<0x00>..<0xFF> at ids 9..264", "note": "the same vocab as tiny-gemma3"},
    }
    finish(w, m, path, sidecar)


# ----------------------------------------------------------------------------------------
# tiny-bert / tiny-nomic-bert (encoders, WordPiece vocab)

BERT_SPECIALS = {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103}
# Non-ASCII characters given tokens, so the non-ASCII embedding cases tokenize to more than
# [UNK]: Cyrillic and Greek lower-case letters and a few CJK characters (each CJK character
# is a word of its own for WordPiece). Anything else non-ASCII (emoji, other scripts) is
# [UNK], which the cases exercise too.
BERT_EXTRA_CHARS = ("абвгдежзийклмнопрстуфхцчшщъыьэюяё" "αβγδεζηθικλμνξοπρστυφχψω"
                    "你好世界中文日本語東京北京人大")
BERT_SUFFIXES = ["ing", "ed", "er", "es", "s", "ly", "tion", "ion", "th", "st", "re", "an", "on", "en",
                 "al", "le", "ize", "iz", "at", "ter", "est", "ness", "ment"]


def wordpiece_vocab():
    """A bert-base-uncased-shaped WordPiece vocab in llama.cpp's phantom-space form (what
    convert_hf_to_gguf.py's BertModel.set_vocab writes): a word-start piece `w` becomes
    "\u2581w", a continuation `##w` becomes "w", CONTROL tokens stay as they are."""
    words = Counter(re.findall(r"[a-z]+", CORPUS.lower()))
    hf = [None] * 104
    for i in range(104):
        hf[i] = f"[unused{i - 1}]" if 1 <= i <= 99 else None
    for t, i in BERT_SPECIALS.items():
        hf[i] = t
    seen = set(hf)

    def push(t):
        if t not in seen:
            seen.add(t)
            hf.append(t)

    chars = [chr(c) for c in range(0x21, 0x7F) if not chr(c).isupper()] + list(BERT_EXTRA_CHARS)
    for c in chars:
        push(c)
        push("##" + c)
    for w, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:150]:
        push(w)
    for suf in BERT_SUFFIXES:
        push("##" + suf)
    types = [TokenType.CONTROL if t in BERT_SPECIALS else TokenType.NORMAL for t in hf]
    tokens = [t if ty == TokenType.CONTROL else (t[2:] if t.startswith("##") else "\u2581" + t)
              for t, ty in zip(hf, types)]
    assert len(set(tokens)) == len(tokens), "duplicate token"
    return tokens, types


def add_wordpiece_tokenizer(w, tokens, types):
    """The tokenizer keys the converter writes for a BERT (see wordpiece_vocab)."""
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_type_count(2)
    w.add_eos_token_id(BERT_SPECIALS["[SEP]"])
    w.add_unk_token_id(BERT_SPECIALS["[UNK]"])
    w.add_sep_token_id(BERT_SPECIALS["[SEP]"])
    w.add_pad_token_id(BERT_SPECIALS["[PAD]"])
    w.add_uint32("tokenizer.ggml.cls_token_id", BERT_SPECIALS["[CLS]"])
    w.add_mask_token_id(BERT_SPECIALS["[MASK]"])
    w.add_add_bos_token(True)
    w.add_add_eos_token(True)


def wordpiece_sidecar(tokens):
    return {"model": "bert", "pre": "default", "n_tokens": len(tokens), "token_type_count": 2,
            "specials": BERT_SPECIALS, "bos_token_id": "absent (llama.cpp's WPM default: 101 = [CLS])",
            "cls_token_id": BERT_SPECIALS["[CLS]"], "seperator_token_id": BERT_SPECIALS["[SEP]"],
            "eos_token_id": BERT_SPECIALS["[SEP]"], "unknown_token_id": BERT_SPECIALS["[UNK]"],
            "add_bos_token": True, "add_eos_token": True,
            "normalizer": "no tokenizer.ggml.normalizer.* keys: llama.cpp lower-cases and strips accents",
            "encode": "[CLS] + WordPiece(text) + [SEP]"}


def add_encoder_block(m, rng, il, hp, qtype, *, nomic):
    """One post-LayerNorm encoder block in llama.cpp's names (models/bert.cpp)."""
    d, ff = hp["n_embd"], hp["n_ff"]
    p = f"blk.{il}."
    if nomic:
        m.add(rng, p + "attn_qkv.weight", qtype, 3 * d, d, d ** -0.5)
    else:
        for name, std in (("attn_q", d ** -0.5), ("attn_k", d ** -0.5), ("attn_v", d ** -0.5)):
            m.add(rng, p + name + ".weight", qtype, d, d, std)
            m.add_vec(rng, p + name + ".bias", d, 0.1)
    m.add(rng, p + "attn_output.weight", qtype, d, d, d ** -0.5)
    if not nomic:
        m.add_vec(rng, p + "attn_output.bias", d, 0.1)
    m.add_norm(rng, p + "attn_output_norm.weight", d)
    m.add_vec(rng, p + "attn_output_norm.bias", d, 0.1)
    m.add(rng, p + "ffn_up.weight", qtype, ff, d, d ** -0.5)
    if nomic:
        m.add(rng, p + "ffn_gate.weight", qtype, ff, d, d ** -0.5)
    else:
        m.add_vec(rng, p + "ffn_up.bias", ff, 0.1)
    m.add(rng, p + "ffn_down.weight", qtype, d, ff, ff ** -0.5)
    if not nomic:
        m.add_vec(rng, p + "ffn_down.bias", d, 0.1)
    m.add_norm(rng, p + "layer_output_norm.weight", d)
    m.add_vec(rng, p + "layer_output_norm.bias", d, 0.1)


def add_encoder_hparams(w, hp, pooling):
    # TextModel.set_gguf_parameters + BertModel's causal / pooling keys
    w.add_context_length(hp["n_ctx_train"])
    w.add_embedding_length(hp["n_embd"])
    w.add_feed_forward_length(hp["n_ff"])
    w.add_head_count(hp["n_head"])
    w.add_layer_norm_eps(hp["norm_eps"])
    w.add_block_count(hp["n_layer"])
    w.add_causal_attention(False)
    w.add_pooling_type(pooling)


def write_tiny_bert(out_dir):
    hp = dict(n_layer=2, n_embd=128, n_ff=512, n_head=4, head_dim=32, n_ctx_train=512, norm_eps=1e-12)
    tokens, types = wordpiece_vocab()
    path = os.path.join(out_dir, "tiny-bert.gguf")
    w = GGUFWriter(path=None, arch="bert")
    w.add_name("tiny-bert (synthetic, random weights)")
    add_encoder_hparams(w, hp, gguf.PoolingType.CLS)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    add_wordpiece_tokenizer(w, tokens, types)

    rng = np.random.default_rng(7007)
    m = Model(w)
    d = hp["n_embd"]
    m.add(rng, "token_embd.weight", T.F16, len(tokens), d, 0.5)
    m.add(rng, "position_embd.weight", T.F16, hp["n_ctx_train"], d, 0.5)
    m.add(rng, "token_types.weight", T.F32, 2, d, 0.5)
    m.add_norm(rng, "token_embd_norm.weight", d)
    m.add_vec(rng, "token_embd_norm.bias", d, 0.1)
    for il, qtype in enumerate((T.F16, T.Q8_0)):
        add_encoder_block(m, rng, il, hp, qtype, nomic=False)

    sidecar = {
        "arch": "bert",
        "hparams": {**hp, "n_vocab": len(tokens), "n_head_kv": hp["n_head"], "causal": False,
                    "pooling_type": "cls (2)", "token_type_count": 2, "attention_scale": hp["head_dim"] ** -0.5},
        "forward": {
            "embeddings": "x = token_embd[id] + token_types[0] + position_embd[pos] (pos 0.. per input), then "
                          "LayerNorm(token_embd_norm weight/bias, eps 1e-12)",
            "block": "a = attn_output(attention(q, k, v)) + bias; x = LayerNorm_attn_output_norm(a + x); "
                     "f = ffn_down(gelu(ffn_up(x) + up bias)) + down bias; x = LayerNorm_layer_output_norm(f + x) "
                     "(llama.cpp LLM_FFN_GELU, sequential)",
            "attention": "non-causal over the input's own tokens, q/k/v = W x + b, scale 1/sqrt(32), no rope",
            "pooling": "CLS: the final hidden state of position 0 ([CLS]); then L2-normalised by the caller "
                       "(llama-embedding --embd-normalize 2)",
            "output": "no output_norm / output tensors: the last layer_output_norm is the final state",
        },
        "tokenizer": wordpiece_sidecar(tokens),
    }
    finish(w, m, path, sidecar)


def write_tiny_nomic_bert(out_dir):
    hp = dict(n_layer=2, n_embd=128, n_ff=256, n_head=4, head_dim=32, n_ctx_train=2048, norm_eps=1e-12,
              rope_freq_base=1000.0)
    tokens, types = wordpiece_vocab()
    path = os.path.join(out_dir, "tiny-nomic-bert.gguf")
    w = GGUFWriter(path=None, arch="nomic-bert")
    w.add_name("tiny-nomic-bert (synthetic, random weights)")
    add_encoder_hparams(w, hp, gguf.PoolingType.MEAN)
    w.add_rope_freq_base(hp["rope_freq_base"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    add_wordpiece_tokenizer(w, tokens, types)

    rng = np.random.default_rng(8008)
    m = Model(w)
    d = hp["n_embd"]
    m.add(rng, "token_embd.weight", T.F16, len(tokens), d, 0.5)
    m.add(rng, "token_types.weight", T.F32, 2, d, 0.5)
    m.add_norm(rng, "token_embd_norm.weight", d)
    m.add_vec(rng, "token_embd_norm.bias", d, 0.1)
    for il in range(hp["n_layer"]):
        add_encoder_block(m, rng, il, hp, T.F16, nomic=True)

    sidecar = {
        "arch": "nomic-bert",
        "hparams": {**hp, "n_vocab": len(tokens), "n_head_kv": hp["n_head"], "causal": False,
                    "pooling_type": "mean (1)", "token_type_count": 2, "rope_dimension_count": hp["head_dim"],
                    "attention_scale": hp["head_dim"] ** -0.5},
        "forward": {
            "embeddings": "x = token_embd[id] + token_types[0], then LayerNorm(token_embd_norm, eps 1e-12); "
                          "no position embeddings",
            "block": "qkv = attn_qkv x (rows 0..128 q, 128..256 k, 256..384 v; no biases); rope q and k (NEOX, "
                     "base 1000, all 32 dims); a = attn_output(attention); x = LayerNorm_attn_output_norm(a + x); "
                     "f = ffn_down(silu(ffn_gate x) * ffn_up x); x = LayerNorm_layer_output_norm(f + x)",
            "pooling": "mean over the input's tokens ([CLS] and [SEP] included); then L2-normalised by the caller",
        },
        "tokenizer": wordpiece_sidecar(tokens),
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
    write_tiny_qwen2(out_dir)
    write_tiny_qwen3(out_dir)
    write_tiny_llama3(out_dir)
    write_tiny_phi3(out_dir)
    write_tiny_gemma2(out_dir)
    write_tiny_bert(out_dir)
    write_tiny_nomic_bert(out_dir)


if __name__ == "__main__":
    main()
