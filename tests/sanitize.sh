#!/usr/bin/env bash
# tests/sanitize.sh: the cpu test suite built with AddressSanitizer and UndefinedBehaviorSanitizer (meson's
# b_sanitize), in its own build folder, so a memory error or undefined behaviour anywhere the cpu tests
# reach (the harness, the references, the emulator under conv --emulate and ptxrun) stops a test.
#
#   bash tests/sanitize.sh [--suite NAME]... [BUILD_DIR] [meson test arguments...]
#                          (default: the cpu suite, in build-asan; --suite gpu runs the kernels on the
#                          sanitized emulator, --suite cpu --suite gpu both)
#
# The first build takes longer than ./build's (about 10 minutes on two cores). Leak checking is off here:
# the programs exit with their buffers allocated, by design; the parser's leaks are the fuzzers' to find
# (tests/fuzz/). UBSan stops at the first finding (meson test sets halt_on_error).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
suites=()
while [ "${1:-}" = --suite ]; do
    suites+=(--suite "$2")
    shift 2
done
((${#suites[@]})) || suites=(--suite cpu)
dir=${1:-build-asan}
shift || true
source bench/setup.sh >/dev/null 2>&1 || true # meson, ninja, numpy on PATH (it builds ./build if needed)
if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized
fi
meson compile -C "$dir"
# --emulate restarts a program with the emulator preloaded (common/harness/device.c), ahead of the ASan runtime;
# the emulator is built with ASan too, so the order does not matter and the check is off
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1:verify_asan_link_order=0
meson test -C "$dir" "${suites[@]}" --print-errorlogs --timeout-multiplier 3 "$@"
