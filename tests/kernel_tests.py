#!/usr/bin/env python3
"""Where each kernel is tested: one row per registered kernel id, from the registry (`conv list --json`) and
the tests' own files, written into tests/README.md between <!-- kernel-tests:begin --> and
<!-- kernel-tests:end -->, so that "the tests of 05c" is one line to find.

    python3 tests/kernel_tests.py CONV --write     rewrite the table
    python3 tests/kernel_tests.py CONV --check     exit 1 when it is not what the tree gives

Columns: its chapter's host tests (tests/test_chNN_*), the meson test that runs it on the emulator
(`gpu_chNN`: `conv check NN --emulate`, on a GPU when there is one), whether the build checks the instructions
its registry row names (`no_spills_and_instructions`, `_sm90a` for chapter 08; tests/check_build.py), the planted bugs that must make
a test fail (tests/mutants/ID_*.patch and the chapter's NN_*.patch), and the test files that check a claim
about it by its id.
"""
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.dont_write_bytecode = True
import markers  # noqa: E402
README = os.path.join(ROOT, "tests", "README.md")
# The test files that name kernels in the claims they check.
CLAIM_FILES = ("test_counter_tables.py", "test_emu_counters.py", "test_measured_claims.py", "test_emu_sampling.py")


def names(paths):
    return ", ".join(f"`{os.path.basename(p)}`" for p in sorted(paths)) or "-"


def table(conv):
    kernels = json.loads(subprocess.run([conv, "list", "--json"], capture_output=True, text=True, check=True).stdout)
    claims = {}
    for name in CLAIM_FILES:
        with open(os.path.join(ROOT, "tests", name), encoding="utf-8") as f:
            claims[name] = f.read()
    lines = ["| kernel | its chapter's host tests | on the emulator | its PTX/SASS patterns checked "
             "(`no_spills_and_instructions*`) | planted bugs | claims checked by its id in |",
             "| --- | --- | --- | --- | --- | --- |"]
    for k in kernels:
        kid, chapter = k["id"], k["id"][:2]
        host = glob.glob(os.path.join(ROOT, "tests", f"test_ch{chapter}_*"))
        emulated = f"`gpu_ch{chapter}`" if k["device"] == "gpu" else f"`check_ch{chapter}` (CPU)"
        built = "yes" if k["ptx"] or k["sass"] else "-"
        mutants = glob.glob(os.path.join(ROOT, "tests", "mutants", f"{kid}_*.patch"))
        if len(kid) > 2:
            mutants += glob.glob(os.path.join(ROOT, "tests", "mutants", f"{chapter}_*.patch"))
        quoted = re.compile(r"[\"'(]" + re.escape(kid) + r"[\"',+)]")
        claimed = [n for n in CLAIM_FILES if quoted.search(claims[n])]
        lines.append(f"| {kid} | {names(host)} | {emulated} | {built} | {names(mutants)} | {names(claimed)} |")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("--write", "--check"):
        sys.exit("usage: kernel_tests.py CONV --write|--check")
    return markers.refresh(README, "kernel-tests", table(sys.argv[1]), sys.argv[2] == "--check", "kernel_tests",
                           "python3 tests/kernel_tests.py build/conv --write")


if __name__ == "__main__":
    sys.exit(main())
