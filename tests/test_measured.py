"""bench/measured.py sorts chapters by whether a results row carries their code's current hash.

From the synthetic fixture (all hashes old): chapter 01's rows re-stamped with its folder's hash as it
is now must read `current`; chapter 02's untouched rows `stale`; a chapter with no rows `none`; a
malformed CSV one line on stderr and exit 1; the emulator's counts beside the GPU CSVs (as in a fresh
clone's bench/results/) are not read. Run as: test_measured.py TMP_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "common", "harness"))
sys.dont_write_bytecode = True
from hash_sources import code_digest  # noqa: E402

MEASURED = os.path.join(ROOT, "bench", "measured.py")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "results_fixture.csv")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(results):
    result = subprocess.run([sys.executable, MEASURED, "--results", results], capture_output=True, text=True)
    lines = {line.split()[1].rstrip(":"): line for line in result.stdout.splitlines() if len(line.split()) > 1}
    return result, lines


def main():
    os.makedirs(sys.argv[1], exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="test_measured_", dir=sys.argv[1]) as tmp:
        current = code_digest(os.path.join(ROOT, "chapters", "01_cpu_loop"), ROOT)
        with open(FIXTURE) as f:
            lines = f.read().splitlines()
        old = lines[1].split(",")[-2]
        stamped = [line.replace(old, current) if line.startswith("01,") else line for line in lines]
        with open(os.path.join(tmp, "gpu.csv"), "w") as f:
            f.write("\n".join(stamped) + "\n")
        shutil.copy(os.path.join(ROOT, "bench", "results", "emulator.csv"), tmp)  # counts, not measurements
        result, by_chapter = run(tmp)
        check(result.returncode == 0, f"exit {result.returncode}: {result.stderr.strip()}")
        check(by_chapter.get("chapters/01_cpu_loop", "").startswith("current") and "3 pass" in
              by_chapter.get("chapters/01_cpu_loop", ""), f"01 current: {by_chapter.get('chapters/01_cpu_loop')!r}")
        check(by_chapter.get("chapters/02_naive_cuda", "").startswith("stale"),
              f"02 stale: {by_chapter.get('chapters/02_naive_cuda')!r}")
        check(by_chapter.get("chapters/10_resnet_block", "").startswith("none"),
              f"10 none: {by_chapter.get('chapters/10_resnet_block')!r}")

        with open(os.path.join(tmp, "gpu.csv"), "a") as f:
            f.write("01,too,few,fields\n")
        result, _ = run(tmp)
        check(result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1
              and "Traceback" not in result.stderr, f"malformed CSV: exit {result.returncode}, {result.stderr!r}")
    for failure in failures:
        print("FAIL", failure)
    print(f"test_measured: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
