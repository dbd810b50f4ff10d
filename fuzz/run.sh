#!/usr/bin/env bash
# Builds the fuzz targets with cargo-fuzz (nightly) and runs each for a bounded time; fails
# on any crash, leak, timeout or out-of-memory. A crash leaves its input in
# fuzz/artifacts/TARGET/: fix the code, then copy the input to fuzz/regressions/TARGET/ so
# that `cargo test --test fuzz_regressions` keeps it fixed.
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (defaults: 60, every target)
#
# The committed seeds (fuzz/corpus/TARGET) are read, never written: what a run discovers
# goes to a scratch corpus that is thrown away.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(query corefile cache_reply)
fi

command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked

# glommio (linked in, never started here) and the cache's tests want locked memory.
ulimit -l unlimited 2>/dev/null || true

start=$(date +%s)
# Every target at once (one build of the crate graph; `fuzz build` takes at most one name).
cargo +nightly fuzz build
echo "fuzz: built in $(($(date +%s) - start)) s"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# No network for the fuzzers when the kernel lets us take it away (the checks already skip
# inputs that would ask DNS); the loopback interface of the new namespace is down and unused.
isolate=()
if unshare -rn true 2>/dev/null; then
    isolate=(unshare -rn)
fi

for t in "${targets[@]}"; do
    mkdir -p "$scratch/$t" "artifacts/$t"
    echo "fuzz: $t for ${seconds} s"
    t0=$(date +%s)
    # stdout and stderr of the code under test are closed (setup warnings would flood the
    # log); libFuzzer keeps its own report. On a crash the input is run once more with
    # them open, to show the panic message.
    dict=()
    if [ -f "$t.dict" ]; then
        dict=(-dict="$t.dict")
    fi
    if ! "${isolate[@]}" cargo +nightly fuzz run "$t" "$scratch/$t" "corpus/$t" -- \
        "${dict[@]}" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=4096 \
        -print_final_stats=1 -close_fd_mask=3; then
        crash="$(ls -t "artifacts/$t"/* 2>/dev/null | head -1)"
        if [ -n "$crash" ]; then
            echo "fuzz: $t failed on $crash; once more, with its output:"
            cargo +nightly fuzz run "$t" "$crash" || true
        fi
        echo "fuzz: FAILED: $t"
        exit 1
    fi
    echo "fuzz: $t ran $(($(date +%s) - t0)) s, no crash"
done
echo "fuzz: all targets done in $(($(date +%s) - start)) s"
