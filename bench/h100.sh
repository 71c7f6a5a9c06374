#!/usr/bin/env bash
# GPU speed run on the lent H100/H200 (see docs/BENCHMARKS.md, "The GPU machine"). Run from the repo root
# on the device machine with `.gl/` and `.bench/` carried; writes everything under $OUT.
#   .bench/kindling        the release binary built here (cargo build --release -p kindling-cli)
#   .bench/op_timing       optional: crates/gpu/examples/op_timing (per-op µs), run first
# BINS (binaries in .bench/, default kindling), PROMPTS (default "8 512"), EXTRA_ARGS
# (appended to each bench command, e.g. --kv-f16).
#   .bench/{smollm2,gemma3}.hdr(.json), .bench/gguf_stub.py
# Noise weights of the real shapes: timings only.
set -u
source bench/device_setup.sh
if [ -x .bench/op_timing ]; then timeout 200 .bench/op_timing 512 > "$OUT/op_timing.txt" 2>&1; cat "$OUT/op_timing.txt"; fi
BINS=${BINS:-kindling}
for bin in $BINS; do
  for m in smollm2 gemma3; do
    for pt in ${PROMPTS:-8 512}; do
      cmd=".bench/$bin bench /tmp/$m.gguf --backend gpu --prompt-tokens $pt --gen-tokens 128 --json ${EXTRA_ARGS:-}"
      echo "\$ $cmd" >> "$OUT/$bin-$m-p$pt.txt"
      timeout 120 $cmd >> "$OUT/$bin-$m-p$pt.txt" 2>&1
      echo "== $bin $m p$pt"; tail -c 1500 "$OUT/$bin-$m-p$pt.txt"
    done
  done
done
