#!/usr/bin/env python3
"""Reference tokenizations from llama.cpp (through llama-cpp-python) for the Rust
tokenizer tests.

    python3 tests/scripts/gen_tokenizer_refs.py [MODELS_DIR [KEY,KEY...]]

Reads tests/fixtures/tokenizer_corpus.json and writes, for each real model,
tests/fixtures/tokenizer_ref_<smollm2|gemma3|qwen2.5-0.5b|qwen2.5-1.5b|nomic>.json:

- `ids`: llama_tokenize(text, add_special=true, parse_special=false) per corpus string;
- `ids_special`: the same with parse_special=true, `null` where it equals `ids`;
- `decoded`: llama_detokenize(ids, remove_special=false, unparse_special=false), `null`
  where it equals the input text;
- `decoded_special`: llama_detokenize(ids_special, ..., unparse_special=true), `null`
  where it equals the input text;
- `bos`, `eos`, `eot`, `eog` (every id llama_vocab_is_eog accepts), `add_bos`;
- `pieces_fnv1a`: FNV-1a-64 over every token's llama_token_to_piece (special false,
  then true), each piece preceded by its length as 4 little-endian bytes;
- for SmolLM2, `pre_variants`: the same vocabulary with `tokenizer.ggml.pre` replaced
  (a vocab-only copy of the GGUF is written to a temporary directory), `ids` and
  `decoded` `null` where they equal the base model's;
- `chat`: what Python's jinja2, set up as transformers' apply_chat_template sets it
  up, renders the model's own chat template to (SmolLM2 only), and what llama.cpp's
  built-in `chatml` and `gemma` formats give (llama_chat_apply_template).
- for the Qwen2.5-Coder models, `chat.template` instead holds what transformers'
  own `apply_chat_template(messages, tools=tools, tokenize=False)` gives, on the
  tokenizer transformers builds from the GGUF itself (`AutoTokenizer.from_pretrained(
  dir, gguf_file=...)`): `messages_json` / `tools_json` are the inputs as JSON text
  (key order matters: the template prints tool schemas and call arguments with
  `tojson`), `bos_token` / `eos_token` the tokenizer's special-token texts.
- The 1.5B's tokenizer arrays (tokens, types, merges, special ids) are checked equal
  to the 0.5B's and llama.cpp's tokenization of the corpus with them is checked
  identical; its fixture then holds only the vocabulary facts, `"tokenization":
  "qwen2.5-0.5b"` (the fixture whose ids it shares) and its own chat renderings (its
  template differs from the 0.5B's by one string literal).

- `nomic` (nomic-embed-text-v1.5, the WordPiece `bert` tokenizer) is made without
  llama-cpp-python: tests/scripts/llama_vocab_ref.cpp calls llama.cpp's C API directly
  (same functions, same fields as above, plus `sep`; no chat template, no variants).
  It needs a llama.cpp source tree and its CMake build (the llama.cpp vendored in the
  `llama-cpp-python==0.3.35` sdist, built as tests/scripts/gen_embed_refs.py says):

      LLAMA_CPP_SRC=.../vendor/llama.cpp LLAMA_CPP_BUILD=.../build \
          python3 tests/scripts/gen_tokenizer_refs.py .cache/models nomic

Only ids and short strings are stored, so the fixtures stay small.
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

import gguf

try:  # not needed for the nomic vocabulary (see the docstring)
    import jinja2
    import jinja2.ext
    import jinja2.sandbox
    import llama_cpp
    from llama_cpp import Llama
except ImportError:
    llama_cpp = None

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
MODELS = {
    "smollm2": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3": "gemma-3-270m-q4_k_m.gguf",
    "qwen2.5-0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    "nomic": "nomic-embed-text-v1.5.f16.gguf",
}
QWEN = ("qwen2.5-0.5b", "qwen2.5-1.5b")
# The GGUF keys that define a tokenizer: equal across two files means equal tokenization.
TOKENIZER_KEYS = [
    "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens",
    "tokenizer.ggml.token_type", "tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id", "tokenizer.ggml.padding_token_id",
    "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token",
]
PRE_VARIANTS = ["gpt-2", "llama-bpe", "qwen2", "default", "falcon"]

CHAT_CASES = [
    {
        "messages": [
            {"role": "user", "content": "Hello! Who are you?"},
            {"role": "assistant", "content": "I am SmolLM, a small model."},
        ],
        "add_generation_prompt": True,
    },
    {
        "messages": [
            {"role": "system", "content": "You answer in French."},
            {"role": "user", "content": "What is 2 + 2?"},
        ],
        "add_generation_prompt": True,
    },
    {
        "messages": [{"role": "user", "content": "  spaced  "}],
        "add_generation_prompt": False,
    },
]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city. Returns <json> & 'units' as \"text\".",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Zürich or 東京"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
                "days": {"type": "integer", "minimum": 1, "maximum": 16},
                "threshold": {"type": "number", "default": 0.5},
                "hourly": {"type": "boolean", "default": False},
                "fields": {"type": "array", "items": {"type": "string"}},
                "extra": {"type": "object", "properties": {}},
            },
            "required": ["city"],
        },
    },
}
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search_code",
        "description": "Search the repository.\nTabs\tand newlines are escaped.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "default": None}},
            "required": [],
        },
    },
}
# transformers' apply_chat_template on the Qwen models.
QWEN_CHAT_CASES = [
    {   # a plain conversation with a system message
        "messages": [
            {"role": "system", "content": "You are a concise coding assistant."},
            {"role": "user", "content": "Write hello world in Rust."},
            {"role": "assistant", "content": "fn main() {\n    println!(\"Hello, world!\");\n}"},
        ],
        "add_generation_prompt": False,
    },
    {   # the same, asking for the next assistant turn
        "messages": [
            {"role": "system", "content": "You are a concise coding assistant."},
            {"role": "user", "content": "Write hello world in Rust."},
        ],
        "add_generation_prompt": True,
    },
    {   # no system message: the template inserts Qwen's default one
        "messages": [
            {"role": "user", "content": "Hi! 你好 👋"},
            {"role": "assistant", "content": "Hello! How can I help?"},
            {"role": "user", "content": "  Explain `Box<dyn Fn()>`.\n"},
        ],
        "add_generation_prompt": True,
    },
    {   # a system message that is not the first one
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "system", "content": "Answer in French."},
            {"role": "user", "content": "Hello?"},
        ],
        "add_generation_prompt": False,
    },
    {   # tools: a call (content None, arguments a dict), a second call in OpenAI's shape
        # (arguments a JSON string, an id), two tool responses in a row, then the answer
        "messages": [
            {"role": "system", "content": "You can call tools."},
            {"role": "user", "content": "Weather in Zürich for 3 days, and find `fn main`?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": {
                    "city": "Zürich", "unit": "celsius", "days": 3, "threshold": 1.5e-05,
                    "hourly": True, "fields": ["temp", "wind"], "extra": {"note": "<b>&'\""}, "none": None}}},
                {"id": "call_2", "type": "function", "function": {
                    "name": "search_code", "arguments": "{\"query\": \"fn main\", \"limit\": 5}"}},
            ]},
            {"role": "tool", "name": "get_weather", "content": "{\"temp\": 21.5, \"sky\": \"clear\"}"},
            {"role": "tool", "name": "search_code", "content": "src/main.rs:1: fn main() {}"},
            {"role": "assistant", "content": "It is 21.5 °C and clear; `fn main` is in src/main.rs."},
            {"role": "user", "content": "Thanks!"},
        ],
        "tools": [WEATHER_TOOL, SEARCH_TOOL],
        "add_generation_prompt": True,
    },
    {   # tools without a system message (the default one goes in the tools header), an
        # assistant message with both text and a call given without the `function` wrapper
        "messages": [
            {"role": "user", "content": "Tokyo?"},
            {"role": "assistant", "content": "Let me check.", "tool_calls": [
                {"name": "get_weather", "arguments": {"city": "東京", "days": 1}}]},
            {"role": "tool", "content": "{\"temp\": 18}"},
        ],
        "tools": [WEATHER_TOOL],
        "add_generation_prompt": True,
    },
    {   # an empty tools list is no tools
        "messages": [{"role": "user", "content": "No tools here."}],
        "tools": [],
        "add_generation_prompt": True,
    },
]
BUILTIN_CASE = [
    {"role": "system", "content": " Be brief. "},
    {"role": "user", "content": "Hi there\n"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "Tell me a joke."},
]


def llama_version():
    lib = os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libggml-base.so")
    commit = "unknown"
    try:
        g = ctypes.CDLL(lib)
        g.ggml_commit.restype = ctypes.c_char_p
        commit = g.ggml_commit().decode()
    except (OSError, AttributeError):
        pass
    return f"llama-cpp-python {llama_cpp.__version__} (llama.cpp {commit})"


def fnv1a(h, data):
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def detokenize(vocab, ids, special):
    arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
    size = 256 + 64 * len(ids)
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_detokenize(vocab, arr, len(ids), buf, size, False, special)
    if n < 0:
        raise RuntimeError(f"detokenize needs {-n} bytes")
    return buf.raw[:n]


def piece(vocab, tok, special, buf):
    n = llama_cpp.llama_token_to_piece(vocab, tok, buf, len(buf), 0, special)
    if n < 0:
        raise RuntimeError(f"piece of {tok} needs {-n} bytes")
    return buf.raw[:n]


def as_text(b):
    # Decoding valid UTF-8 input gives valid UTF-8; keep the fixture JSON-clean anyway.
    return b.decode("utf-8", errors="replace")


def tokenize_all(llm, corpus):
    vocab = llm._model.vocab
    out = {"ids": [], "ids_special": [], "decoded": [], "decoded_special": []}
    for text in corpus:
        raw = text.encode("utf-8")
        ids = llm.tokenize(raw, add_bos=True, special=False)
        ids_sp = llm.tokenize(raw, add_bos=True, special=True)
        dec = as_text(detokenize(vocab, ids, False))
        dec_sp = as_text(detokenize(vocab, ids_sp, True))
        out["ids"].append(ids)
        out["ids_special"].append(None if ids_sp == ids else ids_sp)
        out["decoded"].append(None if dec == text else dec)
        out["decoded_special"].append(None if dec_sp == text else dec_sp)
    return out


def vocab_facts(llm):
    vocab = llm._model.vocab
    n = llama_cpp.llama_vocab_n_tokens(vocab)
    buf = ctypes.create_string_buffer(4096)
    facts = {
        "n_tokens": n,
        "bos": llama_cpp.llama_vocab_bos(vocab),
        "eos": llama_cpp.llama_vocab_eos(vocab),
        "eot": llama_cpp.llama_vocab_eot(vocab),
        "add_bos": bool(llama_cpp.llama_vocab_get_add_bos(vocab)),
        "eog": [t for t in range(n) if llama_cpp.llama_vocab_is_eog(vocab, t)],
    }
    digests = []
    for special in (False, True):
        h = 0xCBF29CE484222325
        for t in range(n):
            p = piece(vocab, t, special, buf)
            h = fnv1a(h, len(p).to_bytes(4, "little"))
            h = fnv1a(h, p)
        digests.append(f"{h:016x}")
    facts["pieces_fnv1a"] = {"special_false": digests[0], "special_true": digests[1]}
    return facts


def render_hf(template, case, bos, eos):
    # transformers' apply_chat_template environment.
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )

    def raise_exception(msg):
        raise jinja2.exceptions.TemplateError(msg)

    env.globals["raise_exception"] = raise_exception
    return env.from_string(template).render(
        messages=case["messages"],
        add_generation_prompt=case["add_generation_prompt"],
        bos_token=bos,
        eos_token=eos,
    )


def render_transformers(models_dir, file_name):
    """transformers' apply_chat_template on the tokenizer it builds from the GGUF."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(models_dir, gguf_file=file_name)
    special = tok.special_tokens_map
    out = []
    for case in QWEN_CHAT_CASES:
        rendered = tok.apply_chat_template(
            case["messages"], tools=case.get("tools"), tokenize=False,
            add_generation_prompt=case["add_generation_prompt"],
        )
        out.append({
            "messages_json": json.dumps(case["messages"], ensure_ascii=False),
            "tools_json": None if case.get("tools") is None else json.dumps(case["tools"], ensure_ascii=False),
            "add_generation_prompt": case["add_generation_prompt"],
            "bos_token": special.get("bos_token", ""),
            "eos_token": special.get("eos_token", ""),
            "rendered": rendered,
        })
    import transformers
    return {"transformers": transformers.__version__, "template": out}


def tokenizer_fields(path):
    reader = gguf.GGUFReader(path)
    return {k: reader.fields[k].contents() if k in reader.fields else None for k in TOKENIZER_KEYS}


def builtin_chat(name, messages, add_ass):
    arr = (llama_cpp.llama_chat_message * len(messages))()
    keep = []
    for i, m in enumerate(messages):
        r, c = m["role"].encode(), m["content"].encode()
        keep += [r, c]
        arr[i].role, arr[i].content = r, c
    size = 4096
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_chat_apply_template(name.encode(), arr, len(messages), add_ass, buf, size)
    if n < 0 or n > size:
        raise RuntimeError(f"llama_chat_apply_template({name}) returned {n}")
    return buf.raw[:n].decode("utf-8")


def write_variant(src_path, dst_path, pre):
    """A vocab-only copy of `src_path` with tokenizer.ggml.pre = `pre` (no tensors)."""
    reader = gguf.GGUFReader(src_path)
    arch = reader.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(dst_path, arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        value = pre if name == "tokenizer.ggml.pre" else field.contents()
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(name, value, vtype, sub_type=sub)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()


def write_fixture(key, ref, corpus):
    out = os.path.join(FIXTURES, f"tokenizer_ref_{key}.json")
    with open(out, "w", encoding="utf-8") as f:
        # One corpus entry per line keeps diffs readable and the file small.
        f.write("{\n")
        items = list(ref.items())
        for i, (k, v) in enumerate(items):
            sep = "," if i + 1 < len(items) else ""
            if isinstance(v, list) and len(v) == len(corpus):
                f.write(f" {json.dumps(k)}: [\n")
                for j, x in enumerate(v):
                    f.write("  " + json.dumps(x, ensure_ascii=False, separators=(",", ":")))
                    f.write(",\n" if j + 1 < len(v) else "\n")
                f.write(f" ]{sep}\n")
            else:
                f.write(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False, separators=(',', ':'))}{sep}\n")
        f.write("}\n")
    print(f"{out}: {os.path.getsize(out)} bytes")


def nomic_ref(path, file_name, corpus_path, n_corpus):
    """The reference for a vocabulary through llama.cpp's C API (llama_vocab_ref.cpp)."""
    src, build = os.environ.get("LLAMA_CPP_SRC"), os.environ.get("LLAMA_CPP_BUILD")
    if not src or not build:
        raise SystemExit("nomic: set LLAMA_CPP_SRC (llama.cpp tree) and LLAMA_CPP_BUILD (its CMake build)")
    lib = os.path.join(build, "bin")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "llama_vocab_ref")
        subprocess.run(["g++", "-std=c++17", "-O1", "-I", os.path.join(src, "include"), "-I",
                        os.path.join(src, "ggml", "include"), "-I", os.path.join(src, "vendor"),
                        os.path.join(ROOT, "tests", "scripts", "llama_vocab_ref.cpp"), "-L", lib, "-lllama",
                        f"-Wl,-rpath,{lib}", "-o", exe], check=True)
        out = subprocess.run([exe, path, corpus_path], check=True, capture_output=True).stdout
    got = json.loads(out)
    version = subprocess.run([os.path.join(lib, "llama-tokenize"), "--version"], capture_output=True, text=True)
    ver = (version.stdout + version.stderr).strip().splitlines()[0]
    ref = {"llama_cpp": f"llama.cpp {ver} (vendored in llama-cpp-python 0.3.35), C API",
           "model": file_name, "corpus_size": n_corpus}
    for k in ("n_tokens", "bos", "eos", "eot", "sep", "add_bos", "eog", "pieces_fnv1a"):
        ref[k] = got[k]
    with open(corpus_path, encoding="utf-8") as f:
        corpus = json.load(f)["strings"]
    ref["ids"] = got["ids"]
    ref["ids_special"] = [None if b == a else b for a, b in zip(got["ids"], got["ids_special"])]
    for k in ("decoded", "decoded_special"):
        texts = [bytes(d["bytes"]).decode("utf-8", errors="replace") for d in got[k]]
        ref[k] = [None if t == c else t for t, c in zip(texts, corpus)]
    return ref


def main():
    models_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".cache", "models")
    only = sys.argv[2].split(",") if len(sys.argv) > 2 else [
        k for k in MODELS if k != "nomic" or os.environ.get("LLAMA_CPP_SRC")]
    with open(os.path.join(FIXTURES, "tokenizer_corpus.json"), encoding="utf-8") as f:
        corpus = json.load(f)["strings"]
    tokenized = {}
    for key, file_name in MODELS.items():
        if key not in only:
            continue
        path = os.path.join(models_dir, file_name)
        if key == "nomic":
            corpus_path = os.path.join(FIXTURES, "tokenizer_corpus.json")
            write_fixture(key, nomic_ref(path, file_name, corpus_path, len(corpus)), corpus)
            continue
        version = llama_version()
        llm = Llama(model_path=path, vocab_only=True, verbose=False)
        ref = {"llama_cpp": version, "model": file_name, "corpus_size": len(corpus)}
        ref.update(vocab_facts(llm))
        toks = tokenize_all(llm, corpus)
        tokenized[key] = toks
        if key == "qwen2.5-1.5b":
            # Same tokenizer as the 0.5B: say so rather than storing the same ids twice.
            base = "qwen2.5-0.5b"
            same = tokenizer_fields(path) == tokenizer_fields(os.path.join(models_dir, MODELS[base]))
            if base not in tokenized:
                bllm = Llama(model_path=os.path.join(models_dir, MODELS[base]), vocab_only=True, verbose=False)
                tokenized[base] = tokenize_all(bllm, corpus)
                del bllm
            if not same or tokenized[base] != toks:
                raise SystemExit(f"{key}: tokenizer differs from {base}; store its ids too")
            ref["tokenization"] = base
        else:
            ref.update(toks)
        chat = {}
        template = llm.metadata.get("tokenizer.chat_template")
        del llm
        if key in QWEN:
            chat = render_transformers(models_dir, file_name)
        else:
            if template is not None:
                bos = "<|im_start|>" if key == "smollm2" else "<bos>"
                eos = "<|im_end|>" if key == "smollm2" else "<eos>"
                chat["template"] = [
                    dict(case, bos_token=bos, eos_token=eos, rendered=render_hf(template, case, bos, eos))
                    for case in CHAT_CASES
                ]
            chat["builtin"] = {
                name: {"messages": BUILTIN_CASE, "add_generation_prompt": True,
                       "rendered": builtin_chat(name, BUILTIN_CASE, True)}
                for name in ("chatml", "gemma")
            }
        ref["chat"] = chat
        if key == "smollm2":
            variants = {}
            with tempfile.TemporaryDirectory() as tmp:
                for pre in PRE_VARIANTS:
                    vpath = os.path.join(tmp, f"variant-{pre}.gguf")
                    write_variant(path, vpath, pre)
                    vllm = Llama(model_path=vpath, vocab_only=True, verbose=False)
                    v = tokenize_all(vllm, corpus)
                    variants[pre] = {
                        "ids": [None if a == b else a for a, b in zip(v["ids"], ref["ids"])],
                        "decoded": v["decoded"],
                    }
                    del vllm
            ref["pre_variants"] = variants
        write_fixture(key, ref, corpus)


if __name__ == "__main__":
    main()
