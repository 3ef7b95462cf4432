"""Sampled launches count what full ones do: `conv bench --emulate` emulates a sample of each kind of
block of a grid and scales the counts to the grid (emu/counters.h). Here each kernel runs on a mid-size
problem twice, every block emulated (--sample 0) and sampled, and every count that the counter tables
and the bound from counts use must agree within 2%. The sample starts at 2 blocks of each kind (the
default is 8), so that these mid-size grids are sampled and the sample's growing to its precision is
exercised too. Where the blocks differ too much for a sample (09b's), the sample grows to the whole grid;
at least half of the kernels here must really be sampled, else the comparison proves nothing.

Run as: test_emu_sampling.py PATH_TO_CONV WORK_DIR
"""
import csv
import os
import subprocess
import sys

conv, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)

# (kernel, layer, batch): problems with a few hundred blocks, seconds to emulate in full
JOBS = [
    ("02b", "tutorial/first_graph", 1),
    ("03a", "tutorial/first_graph", 1),
    ("04d", "tutorial/first_graph", 1),
    ("05j", "tutorial/first_graph", 8),
    ("06b", "resnet50/res3_3x3_s2", 8),
    ("07b", "tutorial/first_graph", 16),
    ("08b", "resnet50/res4_3x3", 32),
    ("09b", "mobilenet/dw144_56", 4),
]
SAMPLE = 2
COMPARED = ("warp_inst", "thread_inst", "inst_integer", "inst_global", "inst_shared", "global_load_requests",
            "global_load_sectors", "global_store_sectors", "shared_load_wavefronts", "shared_store_wavefronts",
            "barriers", "tensor_flops")
TOLERANCE = 0.02


def counts(kernel, layer, n, sample):
    path = os.path.join(work, f"{kernel}_sample{sample}.csv")
    if os.path.exists(path):
        os.remove(path)
    run = subprocess.run([conv, "bench", "--emulate", "--kernels", kernel, "--layer", layer, "--n", str(n),
                          "--sample", str(sample), "--csv", path], capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        return None, f"exit {run.returncode}: {run.stdout.strip()} {run.stderr.strip()}"
    rows = [r for r in csv.DictReader(open(path)) if r["kernel"] == kernel]
    if len(rows) != 1 or rows[0]["status"] != "counted":
        return None, f"no counted row: {rows}"
    return {k: int(v) for k, v in rows[0].items() if k in COMPARED + ("grid_blocks", "emulated_blocks")}, ""


failures = really_sampled = 0
for kernel, layer, n in JOBS:
    full, why_full = counts(kernel, layer, n, 0)
    sampled, why_sampled = counts(kernel, layer, n, SAMPLE)
    if not full or not sampled:
        print(f"FAIL {kernel} {layer} N={n}: {why_full or why_sampled}")
        failures += 1
        continue
    problems = []
    if full["emulated_blocks"] != full["grid_blocks"]:
        problems.append(f"--sample 0 emulated {full['emulated_blocks']} of {full['grid_blocks']} blocks")
    really_sampled += sampled["emulated_blocks"] < sampled["grid_blocks"]
    worst = 0.0
    for column in COMPARED:
        if full[column] == 0 and sampled[column] == 0:
            continue
        error = abs(sampled[column] - full[column]) / max(full[column], 1)
        worst = max(worst, error)
        if error > TOLERANCE:
            problems.append(f"{column}: sampled {sampled[column]} vs full {full[column]} ({100 * error:.2f}%)")
    status = "FAIL" if problems else "PASS"
    failures += bool(problems)
    print(f"{status} {kernel} {layer} N={n}: {sampled['emulated_blocks']} of {sampled['grid_blocks']} blocks "
          f"emulated; largest difference {100 * worst:.2f}%" + ("; " + "; ".join(problems) if problems else ""))
if 2 * really_sampled < len(JOBS):
    print(f"FAIL only {really_sampled} of {len(JOBS)} kernels were sampled: the comparison proves too little")
    failures += 1
print(f"test_emu_sampling: {len(JOBS)} kernels, {really_sampled} sampled, {failures} failures")
sys.exit(1 if failures else 0)
