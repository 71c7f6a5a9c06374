#!/usr/bin/env python3
"""Native greedy continuations for the browser tests: tests/fixtures/browser_greedy.json.

    python3 crates/web/scripts/gen_greedy_fixture.py [--kindling target/release/kindling]

With `--all-prompts --max-tokens 32 --out tests/fixtures/dawn_greedy.json` it writes the
larger set that bench/dawn_greedy.mjs checks on a real GPU through Dawn. `--only
qwen2.5-0.5b,qwen2.5-1.5b` (re)makes those models' entries and keeps the others'.

For each model and prompt, the native CLI (CPU backend) generates MAX_TOKENS greedy
tokens (`run --temperature 0 --json`); then `logits --token-ids` evaluates prompt +
continuation in one pass and records, for every generated step, the margin between
the top-1 and top-2 logits. The browser test compares its ids with these up to the
first step whose margin is below 0.1 (a near-tie, where f32 summation order may flip
the choice).
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MAX_TOKENS = 8
# key: (file, prompt names, the key of a per-model prompt text in prompts.json). Qwen2.5
# speaks ChatML as SmolLM2 does, so it takes SmolLM2's chat prompt.
MODELS = {
    "smollm2": (".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf", ["story", "question", "chat"], "smollm2"),
    "gemma3": (".cache/models/gemma-3-270m-q4_k_m.gguf", ["story", "chat"], "gemma3"),
    "qwen2.5-0.5b": (".cache/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", ["code_python", "chat"], "smollm2"),
    "qwen2.5-1.5b": (".cache/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", ["code_python"], "smollm2"),
}


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kindling", default=os.path.join(ROOT, "target/release/kindling"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/fixtures/browser_greedy.json"))
    ap.add_argument("--max-tokens", type=int, default=MAX_TOKENS)
    ap.add_argument("--all-prompts", action="store_true", help="every prompt of tests/scripts/prompts.json")
    ap.add_argument("--only", help="comma-separated model keys to (re)generate; the others are kept from --out")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else set(MODELS)
    unknown = only - set(MODELS)
    if unknown:
        ap.error(f"unknown model keys {sorted(unknown)}: {sorted(MODELS)}")
    prompts = {p["name"]: p["text"] for p in json.load(open(os.path.join(ROOT, "tests/scripts/prompts.json")))["prompts"]}
    fixture = {
        "_doc": "Native greedy ids (kindling run --backend cpu --temperature 0) and the top-1/top-2 logit margin "
        "at each generated step; written by crates/web/scripts/gen_greedy_fixture.py.",
        "max_tokens": args.max_tokens,
        "models": {},
    }
    if args.only and os.path.exists(args.out):
        kept = json.load(open(args.out))
        if kept.get("max_tokens") != args.max_tokens:
            ap.error(f"{args.out} holds max_tokens {kept.get('max_tokens')}, not {args.max_tokens}")
        fixture["models"] = kept["models"]
    for key, (path, names, text_key) in MODELS.items():
        if key not in only:
            continue
        cases = []
        for name in (list(prompts) if args.all_prompts else names):
            text = prompts[name]
            text = text[text_key] if isinstance(text, dict) else text
            run = run_json([args.kindling, "run", path, "--backend", "cpu", "--temperature", "0",
                            "--max-tokens", str(args.max_tokens), "--prompt", text, "--json"])
            prompt_ids, ids = run["prompt_token_ids"], run["token_ids"]
            seq = prompt_ids + ids
            margins = []
            if ids:
                top = run_json([args.kindling, "logits", path, "--backend", "cpu", "--top", "2", "--json",
                                "--token-ids", ",".join(map(str, seq[:-1]))])["top"]
                for i in range(len(ids)):
                    row = top[len(prompt_ids) - 1 + i]
                    assert row[0][0] == ids[i], f"{key}/{name}: logits top-1 {row[0][0]} != generated {ids[i]}"
                    margins.append(round(row[0][1] - row[1][1], 4))
            cases.append({"name": name, "prompt": text, "prompt_token_ids": prompt_ids, "token_ids": ids,
                          "margins": margins, "text": run["text"]})
            print(f"{key}/{name}: {ids} margins {margins}", file=sys.stderr)
        fixture["models"][key] = {"file": path, "cases": cases}
    fixture["models"] = {k: fixture["models"][k] for k in MODELS if k in fixture["models"]}
    with open(args.out, "w") as f:
        json.dump(fixture, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
