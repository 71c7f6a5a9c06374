#!/usr/bin/env bash
# A/B of two (or more) kindling builds on the lent GPU machine: the binaries take turns,
# round by round, on the same noise-weight models (timing only; see bench/device_setup.sh),
# so drift on the shared machine hits both alike. Run from the repo root with .gl and
# .bench carried:
#   .bench/kindling, .bench/kindling-new   release binaries built here (strip them: carry <= 64 MiB)
#   .bench/op_timing, .bench/op_timing-new optional: per-op µs of the Qwen 1.5B shapes, run first
#     (compare its figures within one call only: two calls on fresh machines read the
#     vocabulary matvec at 614 and 145 µs)
# BINS (default "kindling kindling-new"), MODELS (default "qwen15 qwen05 gemma3"), PROMPTS
# ("8 512"), ROUNDS (3), EXTRA (more `kindling bench` arguments, e.g. --profile). A BINS
# entry may set environment variables for its binary: "kindling-x:KNOB=1,OTHER=2" runs
# .bench/kindling-x with KNOB=1 OTHER=2 (a build's variants side by side).
# Writes $OUT/ab.jsonl (one line per bench) and $OUT/ab.md (medians).
set -u
MODELS=${MODELS:-qwen15 qwen05 gemma3}
source bench/device_setup.sh
BINS=${BINS:-kindling kindling-new}
for spec in $BINS; do
  bin=${spec%%:*}
  t=.bench/${bin/kindling/op_timing}
  [ -x "$t" ] || continue
  QWEN_ONLY=1 timeout 120 "$t" 512 > "$OUT/$(basename "$t").txt" 2>&1
  echo "== $t"; cat "$OUT/$(basename "$t").txt"
done
for round in $(seq "${ROUNDS:-3}"); do
  for m in $MODELS; do
    for pt in ${PROMPTS:-8 512}; do
      for spec in $BINS; do
        bin=${spec%%:*}
        vars=""; [ "$spec" != "$bin" ] && vars=${spec#*:}
        line=$(env ${vars//,/ } timeout 120 ".bench/$bin" bench "/tmp/$m.gguf" --backend gpu --prompt-tokens "$pt" \
          --gen-tokens 128 --json ${EXTRA:-} 2>> "$OUT/errors.txt" | tail -n 1)
        echo "$line" | python3 -c "import json,sys; d=json.load(sys.stdin); d.update(bin='$spec', model='$m', round=$round); print(json.dumps(d))" \
          >> "$OUT/ab.jsonl" || echo "$spec $m p$pt round $round: no result" | tee -a "$OUT/errors.txt"
      done
    done
  done
done
python3 - "$OUT/ab.jsonl" > "$OUT/ab.md" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = sorted({(r["model"], r["prompt_tokens"]) for r in rows})
bins = list(dict.fromkeys(r["bin"] for r in rows))
print("| model | prompt | " + " | ".join(f"{b} decode | {b} prefill" for b in bins) + " |")
print("|---|---|" + "---|---|" * len(bins))
for m, p in keys:
    cells = []
    for b in bins:
        sel = [r for r in rows if (r["model"], r["prompt_tokens"], r["bin"]) == (m, p, b)]
        cells += [f'{statistics.median(r["decode_tok_s"] for r in sel):.1f}',
                  f'{statistics.median(r["prefill_tok_s"] for r in sel):.1f}'] if sel else ["-", "-"]
    print(f"| {m} | {p} | " + " | ".join(cells) + " |")
EOF
cat "$OUT/ab.md"
