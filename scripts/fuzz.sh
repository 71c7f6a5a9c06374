#!/usr/bin/env bash
# Runs each fuzz target (fuzz/fuzz_targets/) for KINDLING_FUZZ_SECONDS seconds
# (30 by default; longer by hand: KINDLING_FUZZ_SECONDS=1800 scripts/fuzz.sh).
# Installs cargo-fuzz when it is missing. Uses the nightly toolchain when there is
# one, else stable with RUSTC_BOOTSTRAP=1 (cargo-fuzz needs nightly flags).
# A crash leaves its input in fuzz/artifacts/<target>/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds="${KINDLING_FUZZ_SECONDS:-30}"

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    fuzz=(cargo +nightly fuzz)
else
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
fi

# LeakSanitizer checks again at exit, whatever libFuzzer was told.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

for target in header chat_template; do
    mkdir -p "corpus/$target"
    seeds=()
    [ -d "seeds/$target" ] && seeds=("seeds/$target")
    echo "== fuzz $target for ${seconds}s"
    # -a: debug assertions (integer overflow panics). -timeout: one input may take
    # 5 s at most (a hang); -rss_limit_mb: 2 GiB at most (a blown budget).
    # -detect_leaks=0: a namespace stored in itself is an Arc cycle MiniJinja never
    # frees (bounded by the render budget; see crates/tokenizer/src/chat/budget.rs).
    "${fuzz[@]}" run -a "$target" "corpus/$target" "${seeds[@]}" -- \
        -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1
done
