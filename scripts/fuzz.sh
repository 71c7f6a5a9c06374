#!/usr/bin/env bash
# Runs each fuzz target (fuzz/fuzz_targets/) for KINDLING_FUZZ_SECONDS seconds
# (15 by default; longer by hand: KINDLING_FUZZ_SECONDS=1800 scripts/fuzz.sh).
# Builds the targets as `cargo fuzz build -a` does (libFuzzer's coverage instrumentation,
# AddressSanitizer, debug assertions), with cargo alone: no cargo-fuzz to install (three
# minutes on a fresh machine). The flags are unstable ones: the nightly toolchain when
# there is one, else stable with RUSTC_BOOTSTRAP=1.
# A crash leaves its input in fuzz/artifacts/<target>/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds="${KINDLING_FUZZ_SECONDS:-15}"
targets=(header chat_template)

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    cargo=(cargo +nightly)
    rustc_host=$(rustc +nightly -vV | sed -n 's/^host: //p')
else
    export RUSTC_BOOTSTRAP=1
    cargo=(cargo)
    rustc_host=$(rustc -vV | sed -n 's/^host: //p')
fi

# cargo-fuzz 0.13's flags for `build -a` on Linux. The explicit --target keeps them off
# build scripts and proc macros.
flags=(
    -Cpasses=sancov-module
    -Cllvm-args=-sanitizer-coverage-level=4
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
    -Cllvm-args=-sanitizer-coverage-pc-table
    -Cllvm-args=-sanitizer-coverage-trace-compares
    -Cllvm-args=-sanitizer-coverage-stack-depth
    -Cllvm-args=-simplifycfg-branch-fold-threshold=0
    --cfg fuzzing
    -Zsanitizer=address
    -Cdebug-assertions
    -Ccodegen-units=1
)
echo "== building the fuzz targets (${targets[*]}) for $rustc_host"
RUSTFLAGS="${flags[*]}" "${cargo[@]}" build --release --target "$rustc_host" \
    --config 'profile.release.debug="line-tables-only"' "${targets[@]/#/--bin=}"

# LeakSanitizer checks again at exit, whatever libFuzzer was told.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

for target in "${targets[@]}"; do
    mkdir -p "corpus/$target" "artifacts/$target"
    seeds=()
    [ -d "seeds/$target" ] && seeds=("seeds/$target")
    echo "== fuzz $target for ${seconds}s"
    # -timeout: one input may take 5 s at most (a hang); -rss_limit_mb: 2 GiB at most
    # (a blown budget). -detect_leaks=0: a namespace stored in itself is an Arc cycle
    # MiniJinja never frees (bounded by the render budget; see
    # crates/tokenizer/src/chat/budget.rs).
    "target/$rustc_host/release/$target" -artifact_prefix="artifacts/$target/" "corpus/$target" "${seeds[@]}" \
        -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1
done
