#!/usr/bin/env python3
"""Generate logit reference fixtures from two independent references.

    nice python3 tests/scripts/gen_logit_refs.py MODEL_KEY [--no-f32-check]
    -> tests/fixtures/logits_<MODEL_KEY>.json

MODEL_KEY:
  smollm2       SmolLM2-135M-Instruct.Q4_1.gguf          } from tests/scripts/fetch_models.sh (run
  gemma3        gemma-3-270m-q4_k_m.gguf                 } by this script; KINDLING_MODELS_DIR
  qwen2.5-0.5b  qwen2.5-coder-0.5b-instruct-q4_k_m.gguf  } overrides the dir)
  qwen2.5-1.5b  qwen2.5-coder-1.5b-instruct-q4_k_m.gguf  }
  tiny-llama   tiny-llama.gguf    } synthetic, random weights: make_synthetic.py is run into a temp
  tiny-gemma3  tiny-gemma3.gguf   } dir (deterministic bytes; sha256 recorded in the fixture)
  tiny-qwen2, tiny-qwen3, tiny-llama3, tiny-phi3, tiny-gemma2   } (the same)
Prompts come from tests/scripts/prompts.json (the synthetic models skip long_paragraph, which
their tiny vocabs turn into > 512 tokens). The "chat" prompt is in each model's chat format:
prompts.json's ChatML entry for the Qwen models, its Gemma entry for gemma2, and CHAT_EXTRA below
for Llama 3 and Phi-3.

The two references (see "Judging fidelity" in docs/ARCHITECTURE.md):

* llama.cpp (llama-cpp-python, CPU, n_threads=2, f16 KV cache, no flash attention): it quantizes
  activations to 8 bits for its quantized dot products, so its logits are NOT an f32 forward pass.
* HF transformers on the same GGUF, dequantized to f32 (CPU, eager attention, float32): the
  f32 reference.

Per prompt:

1. prompt_token_ids: llama.cpp's `tokenize(prompt, add_bos=True, special=True)`; BOS is added
   only where the vocab asks for it (gemma3: yes, smollm2: no), and special=True turns the chat
   markers into their control tokens.
2. greedy_ids: 32 tokens of llama.cpp greedy decoding, one token per eval (the prompt in one
   batch, then token by token with the KV cache), argmax taken here in numpy on llm.scores
   (lowest id wins a tie) so no sampler is involved. EOS does NOT stop it: generation goes on
   past an end-of-generation token for all 32 steps (the forward pass is well defined there and
   every case then has the same length); `eos_positions` lists the greedy steps that produced
   an EOG token. greedy_margins[i] = top1 - top2 of the logits that chose greedy_ids[i].
3. token_ids = prompt ids + greedy ids. llama.cpp logits at every position from ONE batched eval
   after llm.reset(): llama_top = top-8 [id, logit] per position (logit rounded to 5 decimals,
   sorted by logit descending). Position p holds the logits predicting token_ids[p + 1].
   Note: these batched logits differ slightly from the token-by-token ones in step 2 (different
   matmul paths); `greedy_vs_batched_argmax_mismatches` lists the greedy steps where the argmax
   of the batched logits is not the greedy token (seen only at steps with greedy margin <= 0.54).
4. HF: one forward over token_ids (input_ids, no extra BOS). hf_top = HF top-8 per position;
   hf_at_llama_top = HF logits at llama_top's ids; llama_at_hf_top = llama.cpp logits at
   hf_top's ids. So a test can compare its own logits with each reference on a common id set.

Summary (per case and overall): top-1 agreement llama.cpp vs HF; max and median |llama - hf|
over the union of both top-8 id sets at every position; positions where llama.cpp's margin
(top1 - top2) >= 0.5; positions where both references are confident (both margins >= 0.5) and
agree on top-1 -- the positions a test should hold an engine to llama.cpp's top-1 -- and the
confident positions where they disagree.

Checking the HF reference itself:
* transformers builds the config from GGUF metadata; this script prints it, checks the fields
  that matter against what llama.cpp uses (EXPECTED_CONFIG), overrides any that are wrong
  (recorded as `hf_config_fixups`). Found so far: none for the two real models (transformers
  5.23 maps gemma3 fully, incl. per-layer-type rope 1e6/1e4 and the every-6th global layer);
  tiny-gemma3 needs query_pre_attn_scalar 256 -> 64 (no GGUF key carries it; transformers
  defaults to 256, llama.cpp scales by 1/sqrt(head_dim); equal for gemma-3-270m only by luck).
  transformers 5.23's GGUF mapping also leaves out (config default kept instead):
  qwen3.attention.key_length (Qwen3Config head_dim 128), gemma2.attn_logit_softcapping /
  final_logit_softcapping (50 / 30), phi3.rope.scaling.original_context_length (4096), and it
  reads no rope factor tensor (rope_freqs, rope_factors_short/long): tiny-qwen3, tiny-gemma2,
  tiny-phi3 and tiny-llama3 get those as fixups ("gguf:NAME" values in EXPECTED_CONFIG are read
  from the file). check_rope() then compares HF's inv_freq and cos/sin scaling with what
  llama.cpp derives from the GGUF (base^(-2i/d) / factors; phi3.rope.scaling.attn_factor).
* a few loaded tensors are compared with gguf-py's dequantization of the GGUF
  (`hf_tensor_checks`): llama Q/K un-permuted correctly; Gemma norms stored as (1 + w) by
  llama.cpp's converter, HF holds w and adds 1 in Gemma3RMSNorm; qwen2 biases, qwen3 q/k norms,
  phi3's fused qkv_proj / gate_up_proj taken as they are; lm_head == output.weight when untied.
* unless --no-f32-check: an all-F32 copy of the GGUF is written to a temp dir and run through
  llama.cpp (F32 KV cache), which removes llama.cpp's activation quantization; its full-vocab
  logits must then match HF closely (`hf_validation_f32_llama_cpp`). Seen: max 2e-4 (smollm2),
  1e-5 (tiny-llama, tiny-qwen2, tiny-qwen3), 3e-5 (tiny-phi3), 1.3e-4 (tiny-llama3), 0.06 (gemma3,
  logits up to ~45), 0.003 (tiny-gemma3), 0.0045 (tiny-gemma2); the gemma residual is
  about half ggml's f16 GELU lookup table (measured on tiny-gemma3), the rest unattributed
  llama.cpp f32 rounding -- either way 1-2 orders below the quantized gaps.

Deterministic: re-running gives byte-identical fixtures (checked for tiny-llama, tiny-llama3).
Times on the shared 2-core box: smollm2 ~2.3 min, gemma3 ~4.5 min, tiny-llama ~20 s, tiny-gemma3
~1 min, the other tiny-* 15-40 s, qwen2.5-0.5b ~9 min, qwen2.5-1.5b ~12 min (17 GB peak memory).
qwen2.5-1.5b: quantized llama.cpp is 6-15 off HF at each prompt's first ("attention sink")
token, while its F32 copy matches HF there (tests/fixtures/README.md).
Needs llama-cpp-python, torch, transformers (+ accelerate for GGUF loading), gguf, numpy.
"""

import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROMPTS = os.path.join(ROOT, "tests", "scripts", "prompts.json")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

MODELS = {
    "smollm2": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3": "gemma-3-270m-q4_k_m.gguf",
    "qwen2.5-0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    # synthetic (random weights), written by make_synthetic.py into a temp dir at run time
    "tiny-llama": "tiny-llama.gguf",
    "tiny-gemma3": "tiny-gemma3.gguf",
    "tiny-qwen2": "tiny-qwen2.gguf",
    "tiny-qwen3": "tiny-qwen3.gguf",
    "tiny-llama3": "tiny-llama3.gguf",
    "tiny-phi3": "tiny-phi3.gguf",
    "tiny-gemma2": "tiny-gemma2.gguf",
}
SYNTHETIC = {k for k in MODELS if k.startswith("tiny-")}
# Prompts skipped for the synthetic models: their tiny vocabs make this one > 512 tokens.
SYNTHETIC_SKIP = {"long_paragraph"}
# Prompts skipped per model (too slow on the shared 2-core box); see tests/fixtures/README.md.
MODEL_SKIP = {}

# The "chat" prompt is written out in each model's own chat format. prompts.json holds the
# ChatML (smollm2) and Gemma turns; a model without its own entry there uses its family's.
CHAT_FAMILY = {"tiny-llama": "smollm2", "tiny-gemma3": "gemma3", "tiny-gemma2": "gemma3",
               # Qwen2.5 / Qwen3 use ChatML, the same markup as smollm2's entry
               "qwen2.5-0.5b": "smollm2", "qwen2.5-1.5b": "smollm2", "tiny-qwen2": "smollm2",
               "tiny-qwen3": "smollm2", "tiny-llama3": "llama3", "tiny-phi3": "phi3"}
# Chat turns for the families prompts.json lacks (the same conversation as its ChatML entry).
CHAT_EXTRA = {
    # Llama 3 format without the leading <|begin_of_text|>: tokenize(add_bos=True) adds that BOS
    "llama3": "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant.<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\nGive me three tips for learning a new language.<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "phi3": "<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nGive me three tips for learning a new "
            "language.<|end|>\n<|assistant|>\n",
}

# Extra facts recorded in a fixture (llama.cpp behaviour that depends on the run settings).
FIXTURE_NOTES = {
    "tiny-phi3": {"rope_factors_used": "short: llama.cpp picks rope_factors_short.weight because n_ctx (1024) <= "
                                       "phi3.rope.scaling.original_context_length (2048); HF picks short_factor "
                                       "because every sequence is shorter than original_max_position_embeddings"},
}

N_GREEDY = 32
TOP_K = 8
MARGIN = 0.5
N_CTX = 1024
N_THREADS = 2

# What llama.cpp uses for these files (its loader's values / hard-coded arch defaults), which
# the HF config must match. Keys are HF config attributes; 'rope' is handled specially.
EXPECTED_CONFIG = {
    "smollm2": {
        "model_type": "llama",
        "hidden_size": 576,
        "num_hidden_layers": 30,
        "num_attention_heads": 9,
        "num_key_value_heads": 3,
        "head_dim": 64,
        "intermediate_size": 1536,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True,
        "vocab_size": 49152,
        "rope": {"default": 100000.0},
    },
    "gemma3": {
        "model_type": "gemma3_text",
        "hidden_size": 640,
        "num_hidden_layers": 18,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 256,
        "intermediate_size": 2048,
        "sliding_window": 512,
        # llama.cpp: swa pattern 6 (layers 5, 11, 17 global), fixed in its gemma3 loader
        "layer_types": ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(18)],
        "query_pre_attn_scalar": 256,  # llama.cpp: attention scale 1/sqrt(n_embd_head_k) = 1/16
        "rms_norm_eps": 1e-6,
        "hidden_activation": "gelu_pytorch_tanh",
        "final_logit_softcapping": None,
        "attn_logit_softcapping": None,
        "tie_word_embeddings": True,
        "vocab_size": 262144,
        # llama.cpp: rope.freq_base (1e6) for global layers, 10000 hard-coded for SWA layers
        "rope": {"full_attention": 1000000.0, "sliding_attention": 10000.0},
    },
    "tiny-llama": {
        "model_type": "llama",
        "hidden_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "intermediate_size": 512,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True,
        "vocab_size": 300,
        "rope": {"default": 100000.0},
    },
    "tiny-gemma3": {
        "model_type": "gemma3_text",
        "hidden_size": 256,
        "num_hidden_layers": 7,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 64,
        "intermediate_size": 512,
        "sliding_window": 4,
        "layer_types": ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(7)],
        # No GGUF key carries it; transformers defaults to 256, llama.cpp uses head_dim (scale
        # 1/sqrt(n_embd_head_k)). Equal for gemma-3-270m (head_dim 256), NOT for this model.
        "query_pre_attn_scalar": 64,
        "rms_norm_eps": 1e-6,
        "hidden_activation": "gelu_pytorch_tanh",
        "final_logit_softcapping": None,
        "attn_logit_softcapping": None,
        "tie_word_embeddings": True,
        "vocab_size": 673,
        "rope": {"full_attention": 1000000.0, "sliding_attention": 10000.0},
    },
    "qwen2.5-0.5b": {
        "model_type": "qwen2",
        "hidden_size": 896,
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "intermediate_size": 4864,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": False,  # output.weight (Q8_0) is in the file
        "vocab_size": 151936,
        "layer_types": ["full_attention"] * 24,  # llama.cpp qwen2: no sliding window
        "rope": {"default": 1000000.0},  # NEOX rope (llama.cpp) == HF rotate_half
    },
    "qwen2.5-1.5b": {
        "model_type": "qwen2",
        "hidden_size": 1536,
        "num_hidden_layers": 28,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
        "intermediate_size": 8960,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": False,  # output.weight (Q6_K) is in the file
        "vocab_size": 151936,
        "layer_types": ["full_attention"] * 28,
        "rope": {"default": 1000000.0},
    },
    "tiny-qwen2": {
        "model_type": "qwen2",
        "hidden_size": 256,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 512,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": False,
        "vocab_size": 400,
        "layer_types": ["full_attention"] * 3,
        "rope": {"default": 1000000.0},
    },
    "tiny-qwen3": {
        "model_type": "qwen3",
        "hidden_size": 256,
        "num_hidden_layers": 3,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        # qwen3.attention.key_length: transformers' GGUF mapping for qwen3 does not read it and
        # keeps Qwen3Config's default 128 (right for the real Qwen3 models only by luck).
        "head_dim": 64,
        "intermediate_size": 512,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": True,
        "vocab_size": 400,
        "layer_types": ["full_attention"] * 3,
        "rope": {"default": 1000000.0},
    },
    "tiny-llama3": {
        "model_type": "llama",
        "hidden_size": 256,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 64,
        "intermediate_size": 512,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True,
        "vocab_size": 420,
        "rope": {"default": 500000.0},
        # llama.cpp divides each pair's angle by rope_freqs.weight; transformers does not read that
        # tensor, so HF gets the Llama 3 rope_scaling that generated it (make_synthetic.py), and
        # check_rope() compares HF's resulting inv_freq with base^(-2i/d) / rope_freqs.
        "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 512},
    },
    "tiny-phi3": {
        "model_type": "phi3",
        "hidden_size": 256,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 512,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": False,
        "vocab_size": 672,
        "max_position_embeddings": 131072,
        # phi3.rope.scaling.original_context_length; transformers does not map it (Phi3Config's
        # default is 4096)
        "original_max_position_embeddings": 2048,
        "sliding_window": None,  # llama.cpp disables SWA for phi3
        "rope": {"default": 10000.0},
        # LongRoPE: the factor lists come from the file's rope_factors_{short,long}.weight
        # (transformers reads neither); check_rope() compares HF's inv_freq / attention scaling with
        # base^(-2i/d) / rope_factors_short and phi3.rope.scaling.attn_factor.
        "rope_scaling": {"rope_type": "longrope", "short_factor": "gguf:rope_factors_short.weight",
                         "long_factor": "gguf:rope_factors_long.weight", "original_max_position_embeddings": 2048},
    },
    "tiny-gemma2": {
        "model_type": "gemma2",
        "hidden_size": 256,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "intermediate_size": 512,
        "sliding_window": 4,
        # llama.cpp gemma2: swa pattern 2, even layers sliding
        "layer_types": ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(4)],
        "query_pre_attn_scalar": 64,  # llama.cpp: 1/sqrt(head_dim) (not the 27B's n_embd/n_head)
        "rms_norm_eps": 1e-6,
        "hidden_activation": "gelu_pytorch_tanh",
        # gemma2.{attn,final}_logit_softcapping: transformers' GGUF mapping reads neither and keeps
        # Gemma2Config's defaults (50 / 30, the real Gemma 2 values)
        "attn_logit_softcapping": "gguf:gemma2.attn_logit_softcapping",
        "final_logit_softcapping": "gguf:gemma2.final_logit_softcapping",
        "tie_word_embeddings": True,
        "vocab_size": 673,
        "rope": {"default": 10000.0},  # no rope.freq_base key: llama.cpp's default
    },
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def models_dir():
    d = os.environ.get("KINDLING_MODELS_DIR")
    if d:
        return d
    out = subprocess.run([os.path.join(ROOT, "tests", "scripts", "fetch_models.sh")], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()
    return out[-1]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def synthetic_dir():
    """Run make_synthetic.py into a fresh temp dir (deterministic bytes; ~1 s)."""
    import tempfile
    d = tempfile.mkdtemp(prefix="kindling-synthetic-")
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "scripts", "make_synthetic.py"), d], check=True,
                   stdout=subprocess.DEVNULL)
    return d


def load_prompts(key):
    with open(PROMPTS) as f:
        prompts = json.load(f)["prompts"]
    out = []
    for p in prompts:
        if key in SYNTHETIC and p["name"] in SYNTHETIC_SKIP:
            continue
        if p["name"] in MODEL_SKIP.get(key, ()):
            continue
        text = p["text"]
        if isinstance(text, dict):
            # a model uses its family's chat format
            fam = CHAT_FAMILY.get(key, key)
            if fam in text:
                text = text[fam]
            elif fam in CHAT_EXTRA:
                text = CHAT_EXTRA[fam]
            else:
                continue
        out.append((p["name"], text))
    return out


def r5(x):
    return round(float(x), 5)


def topk(logits, k=TOP_K):
    """Top-k ids of a 1-D array, by logit descending (ties: lower id first)."""
    idx = np.argpartition(-logits, k)[:k]
    return sorted(idx.tolist(), key=lambda i: (-float(logits[i]), i))


# ---------------------------------------------------------------------------------------------
# HF config checks


def rope_of(cfg):
    """{layer_type or 'default': rope_theta} from an HF config (v5 rope_parameters or v4 fields)."""
    rp = getattr(cfg, "rope_parameters", None)
    if isinstance(rp, dict) and rp:
        if all(isinstance(v, dict) for v in rp.values()):
            return {k: float(v.get("rope_theta")) for k, v in rp.items()}
        return {"default": float(rp.get("rope_theta"))}
    out = {}
    if getattr(cfg, "rope_theta", None) is not None:
        out["default"] = float(cfg.rope_theta)
    if getattr(cfg, "rope_local_base_freq", None) is not None:
        out["full_attention"] = out.pop("default")
        out["sliding_attention"] = float(cfg.rope_local_base_freq)
    return out


def set_rope(cfg, want):
    rp = getattr(cfg, "rope_parameters", None)
    if isinstance(rp, dict):
        if "default" in want:
            rp["rope_theta"] = want["default"]
            rp.setdefault("rope_type", "default")
        else:
            for k, v in want.items():
                rp.setdefault(k, {"rope_type": "default"})["rope_theta"] = v
    else:
        if "default" in want:
            cfg.rope_theta = want["default"]
        else:
            cfg.rope_theta = want["full_attention"]
            cfg.rope_local_base_freq = want["sliding_attention"]


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def resolve_expected(key, gguf_path):
    """EXPECTED_CONFIG[key] with "gguf:NAME" values read from the GGUF (a metadata key, or an F32
    tensor as a list), so that such values are the file's own."""
    import copy
    import gguf

    reader = gguf.GGUFReader(gguf_path)
    tensors = {t.name: t for t in reader.tensors}

    def res(v):
        if isinstance(v, str) and v.startswith("gguf:"):
            name = v[5:]
            if name in tensors:
                return [float(x) for x in np.asarray(tensors[name].data, dtype=np.float32)]
            return float(reader.fields[name].contents())
        if isinstance(v, dict):
            return {k: res(x) for k, x in v.items()}
        return v

    return {k: res(copy.deepcopy(v)) for k, v in EXPECTED_CONFIG[key].items()}


def check_and_fix_config(expected, cfg):
    """Compare the HF config with what llama.cpp uses; override what is wrong. Returns fixups."""
    fixups = []
    for field, want in expected.items():
        if field == "rope_scaling":
            rp = cfg.rope_parameters
            for k, v in want.items():
                if not same(rp.get(k), v):
                    old = rp.get(k)
                    if isinstance(old, list) or isinstance(v, list):
                        old = f"<list of {len(old)}>" if isinstance(old, list) else old
                        shown = f"<{len(v)} values from the GGUF>"
                    else:
                        shown = v
                    fixups.append(f"rope_parameters[{k!r}]: {old!r} -> {shown}")
                    rp[k] = v
            continue
        if field == "rope":
            got = rope_of(cfg)
            if got != want:
                fixups.append(f"rope: {got} -> {want}")
                set_rope(cfg, want)
            continue
        got = getattr(cfg, field, None)
        if not same(got, want):
            fixups.append(f"{field}: {got!r} -> {want!r}")
            setattr(cfg, field, want)
    return fixups


def config_summary(key, cfg):
    out = {}
    for field in EXPECTED_CONFIG[key]:
        if field == "rope":
            out["rope_theta"] = rope_of(cfg)
        elif field == "rope_scaling":
            rp = cfg.rope_parameters
            out["rope_parameters"] = {k: (f"<{len(v)} values>" if isinstance(v, list) else v)
                                      for k, v in rp.items() if k in EXPECTED_CONFIG[key]["rope_scaling"]}
        elif field == "layer_types":
            lt = getattr(cfg, "layer_types", None)
            out["global_layers"] = [i for i, t in enumerate(lt) if t == "full_attention"] if lt else None
        else:
            out[field] = getattr(cfg, field, None)
    out["attn_implementation"] = getattr(cfg, "_attn_implementation", None)
    return out


def check_tensors(key, model, gguf_path):
    """Cross-check a few HF tensors against gguf-py's dequantization of the same GGUF tensors."""
    import gguf

    reader = gguf.GGUFReader(gguf_path)
    arch = str(reader.fields["general.architecture"].contents())
    tensors = {t.name: t for t in reader.tensors}

    def deq(name):
        t = tensors[name]
        return gguf.quants.dequantize(t.data, t.tensor_type).reshape([int(x) for x in reversed(t.shape)])

    sd = model.state_dict()
    checks = []
    n = min(3, model.config.num_hidden_layers - 1)  # a layer to check

    def cmp(label, hf, ref):
        err = float(np.max(np.abs(hf.detach().float().numpy() - ref)))
        checks.append({"check": label, "max_abs_err": err})
        if err > 1e-5:
            raise SystemExit(f"tensor check failed: {label}: max abs err {err}")

    cmp("embed_tokens == token_embd", sd["model.embed_tokens.weight"], deq("token_embd.weight"))
    tied = model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    checks.append({"check": "lm_head tied to embed_tokens", "ok": bool(tied)})
    if tied == ("output.weight" in tensors):
        raise SystemExit(f"tensor check failed: HF tied={tied} but output.weight in GGUF={'output.weight' in tensors}")
    if not tied:
        src = "output.weight" if "output.weight" in tensors else "token_embd.weight"
        cmp(f"lm_head == {src[:-len('.weight')]}", sd["lm_head.weight"], deq(src))
    L = f"model.layers.{n}."
    if arch in ("gemma2", "gemma3"):
        # llama.cpp's converter stores Gemma norms as (1 + w); HF keeps w and adds 1 itself.
        cmp("norm.weight + 1 == output_norm", sd["model.norm.weight"] + 1, deq("output_norm.weight"))
        for hf_name, gg in [("input_layernorm", "attn_norm"), ("post_attention_layernorm", "post_attention_norm"),
                            ("pre_feedforward_layernorm", "ffn_norm"), ("post_feedforward_layernorm", "post_ffw_norm"),
                            ("self_attn.q_norm", "attn_q_norm"), ("self_attn.k_norm", "attn_k_norm")]:
            if f"blk.{n}.{gg}.weight" not in tensors:
                continue  # gemma2 has no q/k norms
            cmp(f"layers.{n}.{hf_name} + 1 == blk.{n}.{gg}", sd[L + hf_name + ".weight"] + 1,
                deq(f"blk.{n}.{gg}.weight"))
        cmp(f"q_proj == attn_q (no permutation for gemma), layer {n}", sd[L + "self_attn.q_proj.weight"],
            deq(f"blk.{n}.attn_q.weight"))
    elif arch == "llama":
        cmp("norm.weight == output_norm", sd["model.norm.weight"], deq("output_norm.weight"))
        # llama.cpp's converter permutes Q/K rows for its rope layout (HF rotates halves, ggml
        # adjacent pairs): gguf = hf.reshape(nh, 2, hd/2, n).swapaxes(1, 2). Undo it and compare.
        cfg = model.config
        for proj, gg, nh in [("q_proj", "attn_q", cfg.num_attention_heads), ("k_proj", "attn_k", cfg.num_key_value_heads)]:
            w = deq(f"blk.{n}.{gg}.weight")
            hd = w.shape[0] // nh
            unperm = w.reshape(nh, hd // 2, 2, w.shape[1]).swapaxes(1, 2).reshape(w.shape)
            cmp(f"{proj} == unpermute(blk.{n}.{gg})", sd[L + f"self_attn.{proj}.weight"], unperm)
    elif arch in ("qwen2", "qwen3"):
        cmp("norm.weight == output_norm", sd["model.norm.weight"], deq("output_norm.weight"))
        # NEOX rope in both: the converter does not permute Q/K
        for x in "qkv":
            cmp(f"{x}_proj == blk.{n}.attn_{x} (no permutation)", sd[L + f"self_attn.{x}_proj.weight"],
                deq(f"blk.{n}.attn_{x}.weight"))
            if arch == "qwen2":
                cmp(f"{x}_proj.bias == blk.{n}.attn_{x}.bias", sd[L + f"self_attn.{x}_proj.bias"],
                    deq(f"blk.{n}.attn_{x}.bias"))
        if arch == "qwen3":
            for x in "qk":
                cmp(f"{x}_norm == blk.{n}.attn_{x}_norm (plain RMSNorm weight)", sd[L + f"self_attn.{x}_norm.weight"],
                    deq(f"blk.{n}.attn_{x}_norm.weight"))
    elif arch == "phi3":
        cmp("norm.weight == output_norm", sd["model.norm.weight"], deq("output_norm.weight"))
        cmp(f"qkv_proj == blk.{n}.attn_qkv (q, k, v rows; no permutation)", sd[L + "self_attn.qkv_proj.weight"],
            deq(f"blk.{n}.attn_qkv.weight"))
        cmp(f"gate_up_proj == blk.{n}.ffn_up (gate rows, then up rows)", sd[L + "mlp.gate_up_proj.weight"],
            deq(f"blk.{n}.ffn_up.weight"))
    else:
        raise SystemExit(f"no tensor checks for arch {arch}")
    return checks


def check_rope(model, gguf_path):
    """Compare HF's rotary inverse frequencies (and cos/sin scaling) with what llama.cpp computes
    from the GGUF: base^(-2i/d) / factor_i, with factor_i from rope_freqs.weight (Llama 3) or
    rope_factors_short.weight (Phi-3 LongRoPE at n_ctx <= original context; else 1), and the cos/sin
    scale phi3.rope.scaling.attn_factor (else 1). Only for models with a single rotary embedding."""
    import gguf

    rot = getattr(model.model, "rotary_emb", None)
    if rot is None or not hasattr(rot, "inv_freq"):
        return None
    reader = gguf.GGUFReader(gguf_path)
    arch = str(reader.fields["general.architecture"].contents())
    tensors = {t.name: t for t in reader.tensors}

    def field(k, default=None):
        f = reader.fields.get(f"{arch}.{k}")
        return default if f is None else f.contents()

    n_embd, n_head = int(field("embedding_length")), int(field("attention.head_count"))
    d = int(field("rope.dimension_count", field("attention.key_length", n_embd // n_head)))
    base = float(field("rope.freq_base", 10000.0))
    factors, src = np.ones(d // 2), "none"
    if "rope_freqs.weight" in tensors:
        factors, src = np.asarray(tensors["rope_freqs.weight"].data, dtype=np.float64), "rope_freqs.weight"
    elif "rope_factors_short.weight" in tensors:
        orig = int(field("rope.scaling.original_context_length", field("context_length")))
        name = "rope_factors_short.weight" if N_CTX <= orig else "rope_factors_long.weight"
        factors, src = np.asarray(tensors[name].data, dtype=np.float64), name
    want = base ** (-np.arange(0, d, 2, dtype=np.float64) / d) / factors
    got = rot.inv_freq.detach().double().numpy()
    rel = float(np.max(np.abs(got - want) / want))
    want_scale = float(field("rope.scaling.attn_factor", 1.0))
    got_scale = float(rot.attention_scaling)
    out = {"check": f"HF inv_freq == base^(-2i/d) / factors ({src}), cos/sin scale == {want_scale:.6f}",
           "max_rel_err_inv_freq": rel, "hf_attention_scaling": got_scale}
    if rel > 1e-5 or abs(got_scale - want_scale) > 1e-6:
        raise SystemExit(f"rope check failed: {out}")
    return out


# ---------------------------------------------------------------------------------------------
# Validation of the HF reference: llama.cpp on an all-F32 copy of the GGUF


def write_f32_copy(src, dst):
    """Same metadata, every tensor dequantized (gguf-py) to F32. With F32 weights llama.cpp's CPU
    matmuls take f32 activations (no 8-bit activation quantization), so llama.cpp then computes
    (almost) the f32 forward pass, and must agree closely with HF if HF maps the model right.
    Tensors are dequantized and written one at a time (the 1.5B model's copy is 6 GB)."""
    import gguf

    r = gguf.GGUFReader(src)
    w = gguf.GGUFWriter(dst, r.fields["general.architecture"].contents())
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name in ("general.architecture", "general.file_type"):
            continue
        vtype = f.types[0]
        sub = f.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(name, f.contents(), vtype, sub)
    w.add_file_type(0)  # LLAMA_FTYPE_ALL_F32
    shapes = []
    for t in r.tensors:
        shape = [int(x) for x in reversed(t.shape)]
        shapes.append(shape)
        w.add_tensor_info(t.name, shape, np.dtype(np.float32), int(np.prod(shape)) * 4)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for t, shape in zip(r.tensors, shapes):
        a = gguf.quants.dequantize(t.data, t.tensor_type).reshape(shape)
        w.write_tensor_data(np.ascontiguousarray(a, dtype=np.float32))
    w.close()


# ---------------------------------------------------------------------------------------------
# JSON output, one position per line so diffs stay readable


def dump_fixture(obj, path):
    def enc(v):
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))

    lines = ["{"]
    top = list(obj.items())
    for ti, (k, v) in enumerate(top):
        comma = "," if ti + 1 < len(top) else ""
        if k == "cases":
            lines.append(f' {enc(k)}: [')
            for ci, case in enumerate(v):
                lines.append("  {")
                items = list(case.items())
                for ii, (ck, cv) in enumerate(items):
                    c2 = "," if ii + 1 < len(items) else ""
                    if ck in ("llama_top", "hf_top", "hf_at_llama_top", "llama_at_hf_top"):
                        rows = ",\n".join("    " + enc(r) for r in cv)
                        lines.append(f"   {enc(ck)}: [\n{rows}\n   ]{c2}")
                    else:
                        lines.append(f"   {enc(ck)}: {enc(cv)}{c2}")
                lines.append("  }" + ("," if ci + 1 < len(v) else ""))
            lines.append(" ]" + comma)
        else:
            lines.append(f" {enc(k)}: {json.dumps(v, ensure_ascii=False, indent=None)}{comma}")
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------


def stats_for(case):
    """Per-case figures from the stored (rounded) data."""
    diffs, agree, n = [], 0, 0
    llama_conf = both_conf_agree = both_conf_disagree = 0
    for lt, ht, hal, lah in zip(case["llama_top"], case["hf_top"], case["hf_at_llama_top"], case["llama_at_hf_top"]):
        n += 1
        common = {}
        for (i, lv), hv in zip(lt, hal):
            common[i] = abs(lv - hv)
        for (i, hv), lv in zip(ht, lah):
            common[i] = abs(lv - hv)
        diffs.extend(common.values())
        a = lt[0][0] == ht[0][0]
        agree += a
        lm = lt[0][1] - lt[1][1]
        hm = ht[0][1] - ht[1][1]
        llama_conf += lm >= MARGIN
        if lm >= MARGIN and hm >= MARGIN:
            if a:
                both_conf_agree += 1
            else:
                both_conf_disagree += 1
    return {
        "positions": n,
        "top1_agree": agree,
        "top1_agree_frac": r5(agree / n),
        "max_abs_diff": r5(max(diffs)),
        "median_abs_diff": r5(float(np.median(diffs))),
        "llama_margin_ge_0_5": llama_conf,
        "both_margin_ge_0_5_agree": both_conf_agree,
        "both_margin_ge_0_5_disagree": both_conf_disagree,
    }, diffs


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1 or args[0] not in MODELS:
        raise SystemExit(f"usage: {sys.argv[0]} {'|'.join(MODELS)} [--no-f32-check]")
    key = args[0]
    t_start = time.time()

    import llama_cpp
    from llama_cpp import Llama
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.set_num_threads(N_THREADS)
    mdir = synthetic_dir() if key in SYNTHETIC else models_dir()
    name = MODELS[key]
    path = os.path.join(mdir, name)
    prompts = load_prompts(key)

    # ---- llama.cpp
    llm = Llama(path, n_ctx=N_CTX, logits_all=True, n_threads=N_THREADS, seed=0, verbose=False)
    system_info = llama_cpp.llama_print_system_info().decode().strip()
    vocab = llm._model.vocab if hasattr(llm._model, "vocab") else None
    eog = set()
    for i in range(llm.n_vocab()):
        try:
            if llama_cpp.llama_vocab_is_eog(vocab, i):
                eog.add(i)
        except Exception:
            if i == llm.token_eos():
                eog.add(i)
    log(f"llama.cpp system info: {system_info}")
    log(f"EOG ids: {sorted(eog)}")

    # ---- HF (f32 reference)
    t0 = time.time()
    cfg = AutoConfig.from_pretrained(mdir, gguf_file=name)
    expected = resolve_expected(key, path)
    fixups = check_and_fix_config(expected, cfg)
    for f in fixups:
        log(f"HF config fix-up: {f}")
    hf = AutoModelForCausalLM.from_pretrained(mdir, gguf_file=name, config=cfg, dtype=torch.float32,
                                              attn_implementation="eager")
    hf.eval()
    assert next(hf.parameters()).dtype == torch.float32
    post = check_and_fix_config(expected, hf.config)
    if post:
        raise SystemExit(f"HF model config differs from the fixed config: {post}")
    hf_cfg = config_summary(key, hf.config)
    log("HF config:", json.dumps(hf_cfg))
    tensor_checks = check_tensors(key, hf, path)
    rope_check = check_rope(hf, path)
    if rope_check is not None and (key not in ("smollm2", "gemma3", "tiny-llama", "tiny-gemma3")):
        tensor_checks.append(rope_check)  # (not recorded for the four older fixtures, made before it)
    for c in tensor_checks:
        log("tensor check:", c)
    log(f"HF load {time.time() - t0:.1f}s")

    f32_check = "--no-f32-check" not in sys.argv
    llm32, tmpdir = None, None
    if f32_check:
        import tempfile
        t0 = time.time()
        tmpdir = tempfile.mkdtemp(prefix="kindling-f32-")
        f32_path = os.path.join(tmpdir, "model-f32.gguf")
        write_f32_copy(path, f32_path)
        llm32 = Llama(f32_path, n_ctx=N_CTX, logits_all=True, n_threads=N_THREADS, seed=0, verbose=False,
                      type_k=0, type_v=0, flash_attn=False)  # GGML_TYPE_F32 KV cache
        log(f"F32 copy + load {time.time() - t0:.1f}s")
    f32_rows = []

    cases = []
    t_llama = t_hf = 0.0
    for pname, text in prompts:
        t0 = time.time()
        prompt_ids = llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        # greedy, token by token
        llm.reset()
        llm.eval(prompt_ids)
        greedy, margins = [], []
        for _ in range(N_GREEDY):
            logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
            t1, t2 = topk(logits, 2)
            greedy.append(int(t1))
            margins.append(r5(logits[t1] - logits[t2]))
            llm.eval([int(t1)])
        token_ids = list(prompt_ids) + greedy
        # teacher forced, one batch
        assert len(token_ids) <= llm.n_batch, "sequence must fit one batch"
        llm.reset()
        llm.eval(token_ids)
        L = np.array(llm.scores[: len(token_ids)], dtype=np.float32)
        t_llama += time.time() - t0

        t0 = time.time()
        with torch.no_grad():
            H = hf(input_ids=torch.tensor([token_ids], dtype=torch.long)).logits[0].float().numpy()
        t_hf += time.time() - t0
        assert H.shape == L.shape, (H.shape, L.shape)
        if llm32 is not None:
            llm32.reset()
            llm32.eval(token_ids)
            L32 = np.array(llm32.scores[: len(token_ids)], dtype=np.float32)
            dd = np.abs(L32 - H)
            f32_rows.append({"name": pname, "max_abs_diff": r5(dd.max()), "median_abs_diff": float(np.median(dd)),
                             "top1_agree": int(np.sum(L32.argmax(-1) == H.argmax(-1))), "positions": len(token_ids)})
            log(f"  f32 llama.cpp vs HF: max {dd.max():.4f} median {np.median(dd):.5f} "
                f"top1 {f32_rows[-1]['top1_agree']}/{len(token_ids)}")

        llama_top, hf_top, hf_at_llama, llama_at_hf = [], [], [], []
        for p in range(len(token_ids)):
            lt = topk(L[p])
            ht = topk(H[p])
            llama_top.append([[i, r5(L[p, i])] for i in lt])
            hf_top.append([[i, r5(H[p, i])] for i in ht])
            hf_at_llama.append([r5(H[p, i]) for i in lt])
            llama_at_hf.append([r5(L[p, i]) for i in ht])
        n_p = len(prompt_ids)
        batched_argmax = [int(np.argmax(L[p])) for p in range(n_p - 1, len(token_ids) - 1)]
        case = {
            "name": pname,
            "prompt": text,
            "prompt_token_ids": [int(i) for i in prompt_ids],
            "greedy_ids": greedy,
            "greedy_margins": margins,
            "eos_positions": [i for i, t in enumerate(greedy) if t in eog],
            "greedy_vs_batched_argmax_mismatches": [i for i, (a, b) in enumerate(zip(greedy, batched_argmax)) if a != b],
            "token_ids": token_ids,
            "llama_top": llama_top,
            "hf_top": hf_top,
            "hf_at_llama_top": hf_at_llama,
            "llama_at_hf_top": llama_at_hf,
        }
        cases.append(case)
        st, _ = stats_for(case)
        log(f"{pname:16s} prompt {n_p:3d} tok | top1 agree {st['top1_agree']}/{st['positions']} "
            f"max {st['max_abs_diff']:.3f} median {st['median_abs_diff']:.3f} | greedy: "
            f"{llm.detokenize(greedy).decode('utf-8', 'replace')!r}")

    # ---- summary
    per_case, all_diffs = {}, []
    tot = {"positions": 0, "top1_agree": 0, "llama_margin_ge_0_5": 0, "both_margin_ge_0_5_agree": 0,
           "both_margin_ge_0_5_disagree": 0}
    for c in cases:
        st, diffs = stats_for(c)
        st["greedy_vs_batched_argmax_mismatches"] = len(c["greedy_vs_batched_argmax_mismatches"])
        per_case[c["name"]] = st
        all_diffs.extend(diffs)
        for k in tot:
            tot[k] += st[k]
    overall = dict(tot)
    overall["top1_agree_frac"] = r5(tot["top1_agree"] / tot["positions"])
    overall["max_abs_diff"] = r5(max(all_diffs))
    overall["median_abs_diff"] = r5(float(np.median(all_diffs)))
    overall["p99_abs_diff"] = r5(float(np.percentile(all_diffs, 99)))
    overall["greedy_vs_batched_argmax_mismatches"] = sum(s["greedy_vs_batched_argmax_mismatches"] for s in per_case.values())

    f32_summary = None
    if llm32 is not None:
        f32_summary = {
            "what": "llama.cpp on an all-F32 dequantized copy of the GGUF (F32 KV cache, no flash attention: "
                    "no 8-bit activation quantization) vs the HF logits, over the FULL vocab at every position of "
                    "every case. Small numbers here show HF's model is the same function llama.cpp computes, so "
                    "the llama.cpp-vs-HF gaps above are llama.cpp's quantized arithmetic, not a mapping error.",
            "max_abs_diff": max(r["max_abs_diff"] for r in f32_rows),
            "median_abs_diff": float(f"{np.median([r['median_abs_diff'] for r in f32_rows]):.3g}"),
            "top1_agree": sum(r["top1_agree"] for r in f32_rows),
            "positions": sum(r["positions"] for r in f32_rows),
            "per_case_max_abs_diff": {r["name"]: r["max_abs_diff"] for r in f32_rows},
        }
        log("f32 check:", json.dumps(f32_summary))
        del llm32
        import shutil
        shutil.rmtree(tmpdir, ignore_errors=True)

    model_sha = sha256(path)
    synthetic = None
    if key in SYNTHETIC:
        with open(os.path.join(mdir, os.path.splitext(name)[0] + ".json")) as f:
            side = json.load(f)
        synthetic = {"generator": "tests/scripts/make_synthetic.py", "sidecar_sha256": side["sha256"],
                     "note": "regenerate this fixture whenever make_synthetic.py changes the model bytes"}
        import shutil
        shutil.rmtree(mdir, ignore_errors=True)

    fixture = {
        "model": name,
        "sha256": model_sha,
        "llama_cpp_python": llama_cpp.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "n_greedy": N_GREEDY,
        "synthetic": synthetic,
        "top_k": TOP_K,
        "margin_threshold": MARGIN,
        "llama_cpp_settings": {"n_ctx": N_CTX, "n_threads": N_THREADS, "n_batch": llm.n_batch, "logits_all": True,
                               "seed": 0, "flash_attn": False, "kv_cache_type": "f16 (default)",
                               "tokenize": "add_bos=True, special=True"},
        "llama_cpp_system_info": system_info,
        "eog_ids": sorted(eog),
        "greedy_policy": "argmax over llm.scores in numpy (lowest id on ties), one token per eval after a batched "
                         "prompt eval; does not stop at EOG tokens (eos_positions lists them); all 32 steps run",
        "position_convention": "row p of llama_top/hf_top/... holds the logits after token_ids[0..=p], i.e. "
                               "predicting token_ids[p+1]; llama_top = one batched eval of token_ids after reset",
        "hf_reference": "transformers AutoModelForCausalLM.from_pretrained(models_dir, gguf_file=model, "
                        "dtype=float32, attn_implementation='eager'), CPU, torch.no_grad(), one forward over "
                        "token_ids; GGUF tensors dequantized to f32 by transformers (gguf-py)",
        "hf_config": hf_cfg,
        "hf_config_fixups": fixups,
        **({"notes": FIXTURE_NOTES[key]} if key in FIXTURE_NOTES else {}),
        "hf_tensor_checks": tensor_checks,
        "hf_validation_f32_llama_cpp": f32_summary,
        "summary_doc": "abs diffs are over the union of both top-8 id sets at every position; margins are "
                       "top1 - top2 of the teacher-forced logits; 'both_margin_ge_0_5_agree' positions are "
                       "where an f32 engine can be held to llama.cpp's top-1",
        "summary": {"overall": overall, "per_case": per_case},
        "cases": cases,
    }
    os.makedirs(FIXTURES, exist_ok=True)
    out = os.path.join(FIXTURES, f"logits_{key}.json")
    dump_fixture(fixture, out)
    log(json.dumps(overall, indent=1))
    log(f"llama.cpp {t_llama:.1f}s, HF forward {t_hf:.1f}s, total {time.time() - t_start:.1f}s")
    print(f"{out} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main()
