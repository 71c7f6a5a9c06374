#!/usr/bin/env python3
"""Generate logit reference fixtures from two independent references.

    nice python3 tests/scripts/gen_logit_refs.py MODEL_KEY [--no-f32-check]
    -> tests/fixtures/logits_<MODEL_KEY>.json

MODEL_KEY:
  smollm2      SmolLM2-135M-Instruct.Q4_1.gguf   } from tests/scripts/fetch_models.sh (run by this
  gemma3       gemma-3-270m-q4_k_m.gguf          } script; KINDLING_MODELS_DIR overrides the dir)
  tiny-llama   tiny-llama.gguf    } synthetic, random weights: make_synthetic.py is run into a temp
  tiny-gemma3  tiny-gemma3.gguf   } dir (deterministic bytes; sha256 recorded in the fixture)
Prompts come from tests/scripts/prompts.json (the synthetic models skip long_paragraph, which
their tiny vocabs turn into > 512 tokens).

The two references (see "Judging fidelity" in DESIGN.md):

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
* a few loaded tensors are compared with gguf-py's dequantization of the GGUF
  (`hf_tensor_checks`): llama Q/K un-permuted correctly; Gemma norms stored as (1 + w) by
  llama.cpp's converter, HF holds w and adds 1 in Gemma3RMSNorm.
* unless --no-f32-check: an all-F32 copy of the GGUF is written to a temp dir and run through
  llama.cpp (F32 KV cache), which removes llama.cpp's activation quantization; its full-vocab
  logits must then match HF closely (`hf_validation_f32_llama_cpp`). Seen: max 2e-4 (smollm2),
  1e-5 (tiny-llama), 0.06 (gemma3, logits up to ~45), 0.003 (tiny-gemma3); the gemma residual is
  about half ggml's f16 GELU lookup table (measured on tiny-gemma3), the rest unattributed
  llama.cpp f32 rounding -- either way 1-2 orders below the quantized gaps.

Deterministic: re-running gives byte-identical fixtures (checked for tiny-llama). Times on the
shared 2-core box: smollm2 ~2.3 min, gemma3 ~4.5 min, tiny-llama ~20 s, tiny-gemma3 ~1 min.
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
    # synthetic (random weights), written by make_synthetic.py into a temp dir at run time
    "tiny-llama": "tiny-llama.gguf",
    "tiny-gemma3": "tiny-gemma3.gguf",
}
SYNTHETIC = {"tiny-llama", "tiny-gemma3"}
# Prompts skipped for the synthetic models: their tiny vocabs make this one > 512 tokens.
SYNTHETIC_SKIP = {"long_paragraph"}

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
        text = p["text"]
        if isinstance(text, dict):
            # synthetic models share their family's chat format
            fam = {"tiny-llama": "smollm2", "tiny-gemma3": "gemma3"}.get(key, key)
            if fam not in text:
                continue
            text = text[fam]
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
        return list(a) == list(b)
    return a == b


def check_and_fix_config(key, cfg):
    """Compare the HF config with what llama.cpp uses; override what is wrong. Returns fixups."""
    fixups = []
    for field, want in EXPECTED_CONFIG[key].items():
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
    import torch

    reader = gguf.GGUFReader(gguf_path)
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
    if not tied:
        cmp("lm_head == token_embd", sd["lm_head.weight"], deq("token_embd.weight"))
    if "gemma3" in key:
        # llama.cpp's converter stores Gemma norms as (1 + w); HF keeps w and adds 1 itself.
        cmp("norm.weight + 1 == output_norm", sd["model.norm.weight"] + 1, deq("output_norm.weight"))
        for hf_name, gg in [("input_layernorm", "attn_norm"), ("post_attention_layernorm", "post_attention_norm"),
                            ("pre_feedforward_layernorm", "ffn_norm"), ("post_feedforward_layernorm", "post_ffw_norm"),
                            ("self_attn.q_norm", "attn_q_norm"), ("self_attn.k_norm", "attn_k_norm")]:
            cmp(f"layers.{n}.{hf_name} + 1 == blk.{n}.{gg}", sd[f"model.layers.{n}.{hf_name}.weight"] + 1,
                deq(f"blk.{n}.{gg}.weight"))
        cmp(f"q_proj == attn_q (no permutation for gemma), layer {n}", sd[f"model.layers.{n}.self_attn.q_proj.weight"],
            deq(f"blk.{n}.attn_q.weight"))
    else:
        cmp("norm.weight == output_norm", sd["model.norm.weight"], deq("output_norm.weight"))
        # llama.cpp's converter permutes Q/K rows for its rope layout (HF rotates halves, ggml
        # adjacent pairs): gguf = hf.reshape(nh, 2, hd/2, n).swapaxes(1, 2). Undo it and compare.
        cfg = model.config
        for proj, gg, nh in [("q_proj", "attn_q", cfg.num_attention_heads), ("k_proj", "attn_k", cfg.num_key_value_heads)]:
            w = deq(f"blk.{n}.{gg}.weight")
            hd = w.shape[0] // nh
            unperm = w.reshape(nh, hd // 2, 2, w.shape[1]).swapaxes(1, 2).reshape(w.shape)
            cmp(f"{proj} == unpermute(blk.{n}.{gg})", sd[f"model.layers.{n}.self_attn.{proj}.weight"], unperm)
    del torch
    return checks


# ---------------------------------------------------------------------------------------------
# Validation of the HF reference: llama.cpp on an all-F32 copy of the GGUF


def write_f32_copy(src, dst):
    """Same metadata, every tensor dequantized (gguf-py) to F32. With F32 weights llama.cpp's CPU
    matmuls take f32 activations (no 8-bit activation quantization), so llama.cpp then computes
    (almost) the f32 forward pass, and must agree closely with HF if HF maps the model right."""
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
    for t in r.tensors:
        a = gguf.quants.dequantize(t.data, t.tensor_type).reshape([int(x) for x in reversed(t.shape)])
        w.add_tensor(t.name, np.ascontiguousarray(a, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
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
    fixups = check_and_fix_config(key, cfg)
    for f in fixups:
        log(f"HF config fix-up: {f}")
    hf = AutoModelForCausalLM.from_pretrained(mdir, gguf_file=name, config=cfg, dtype=torch.float32,
                                              attn_implementation="eager")
    hf.eval()
    assert next(hf.parameters()).dtype == torch.float32
    post = check_and_fix_config(key, hf.config)
    if post:
        raise SystemExit(f"HF model config differs from the fixed config: {post}")
    hf_cfg = config_summary(key, hf.config)
    log("HF config:", json.dumps(hf_cfg))
    tensor_checks = check_tensors(key, hf, path)
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
