#!/usr/bin/env bash
# Runs every test suite: cpu, build and gpu (the gpu tests skip, exit 77, where no GPU answers).
#   bash tests/run.sh                 all suites
#   bash tests/run.sh --suite gpu     one suite (any meson test arguments pass through)
source "$(dirname "${BASH_SOURCE[0]}")/../bench/setup.sh"
meson test -C build --print-errorlogs "$@"
