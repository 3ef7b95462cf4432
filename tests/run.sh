#!/usr/bin/env bash
# Runs every test suite: cpu, build and gpu (the gpu tests skip, exit 77, where no GPU answers).
#   bash tests/run.sh                 all suites
#   bash tests/run.sh --suite gpu     one suite (any meson test arguments pass through)
source "$(dirname "${BASH_SOURCE[0]}")/../bench/setup.sh"
# The fuzz test (tests/fuzz/run.sh) needs clang with libFuzzer and the sanitizers' runtime; on Debian
# they are two packages. Without them it skips (77), saying so.
if ! command -v clang >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "setup: installing clang and libclang-rt-14-dev with apt-get (for the fuzzers)"
        apt-get install -y -qq clang libclang-rt-14-dev >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq clang libclang-rt-14-dev >/dev/null 2>&1; } ||
            echo "setup: could not install clang with libFuzzer: the fuzz test will skip"
    fi
fi
status=0
meson test -C build --print-errorlogs "$@" || status=$?
# The skipped tests and why, from each one's own "skip: ..." line (on the console, not only in the log)
[ -f build/meson-logs/testlog.json ] && "$python" - build/meson-logs/testlog.json <<'PY'
import json, sys
skipped = []
for line in open(sys.argv[1]):
    test = json.loads(line)
    if test.get("result") == "SKIP":
        said = [l for l in (test.get("stdout") or "").splitlines() if l.startswith("skip:")]
        skipped.append((test["name"], said[-1][len("skip:"):].strip() if said else "(no reason printed)"))
for name, why in skipped:
    print(f"skipped: {name}: {why}")
PY
exit $status
