"""Which chapters have a GPU measurement of their code as it is now?

    python3 bench/measured.py [--results DIR]      (default: bench/results)

Every row of a GPU results CSV carries `source_sha256`, the hash of its chapter's code as it was built
(common/harness/hash_sources.py: the folder's sources and every project header they include). This script
hashes each chapter folder as it is in the tree and sorts the chapters three ways:
  current   some row carries today's hash: what it says about that chapter still holds;
  stale     rows exist, but for older code: the chapter changed after it was last measured;
  none      no row at all: not yet measured on a GPU.
`bash bench/gpu_session.sh` on a machine with a GPU measures what is not current. The emulator's
counts (emulator.csv) are not measurements and are not read. Chapter 11 (training) writes no results
rows: its record is its loss log in docs/, reported as there or not. Prints one line per chapter;
exit 0, or 1 with one line on stderr for a malformed CSV.
"""
import argparse
import glob
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "common", "harness"))
from hash_sources import code_digest  # noqa: E402
import emulator_csv  # noqa: E402
from results_csv import CsvError, load  # noqa: E402

ROOT = os.path.dirname(HERE)
# Chapters whose GPU record is a file of their own rather than results rows (bench/gpu_session.sh).
OWN_RECORD = {"11": os.path.join("docs", "gpu_ch11_train_cnn_compare.csv")}


def chapter_folders():
    """{"05": "chapters/05_implicit_gemm_tc", ...} for every chapter with code."""
    folders = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "chapters", "[0-9][0-9]_*"))):
        if any(name.endswith((".c", ".cu", ".h")) for name in os.listdir(path)):
            folders[os.path.basename(path)[:2]] = path
    return folders


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "results"), help="folder of <gpu>.csv files")
    args = ap.parse_args(argv)

    rows = []
    for path in sorted(glob.glob(os.path.join(args.results, "*.csv"))):
        if os.path.basename(path) == emulator_csv.CSV_NAME:
            continue
        try:
            rows += load(path).rows
        except CsvError as e:
            print(f"measured: {path}: {e}", file=sys.stderr)
            return 1

    for chapter, folder in chapter_folders().items():
        digest = code_digest(folder, ROOT)
        mine = [r for r in rows if r["chapter"] == chapter]
        current = [r for r in mine if r["source_sha256"] == digest]
        name = os.path.relpath(folder, ROOT)
        if chapter in OWN_RECORD:
            there = os.path.exists(os.path.join(ROOT, OWN_RECORD[chapter]))
            print(f"{'recorded' if there else 'none':<8} {name}: its record is {OWN_RECORD[chapter]}"
                  f"{'' if there else ', not written yet'} (not hash-checked)")
        elif current:
            gpus = sorted({r["gpu"] for r in current})
            counts = {s: sum(r["status"] == s for r in current) for s in ("pass", "fail", "unsupported")}
            summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
            print(f"current  {name}: {summary} on {' / '.join(gpus)}")
        elif mine:
            print(f"stale    {name}: {len(mine)} rows, all for older code (now {digest[:12]})")
        else:
            print(f"none     {name}: not yet measured on a GPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
