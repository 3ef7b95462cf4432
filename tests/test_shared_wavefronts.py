"""The emulator's shared-memory wavefronts against Nsight Compute's, measured on a GPU.

bench/validation/shared_wavefronts.cu makes one warp load or store 32, 64 or 128 bits a thread at the byte
offsets of its address patterns (some with lanes that make no access); `bash bench/gpu_session.sh validation shared` ran each once under Nsight
Compute on an H100 (bench/results/validation/shared_wavefronts_h100_launches.csv: the launches in order, with
each lane's offset; shared_wavefronts_h100_ncu.csv.gz: Nsight's raw counts per launch). Here the same
kernels, compiled to PTX, run on the emulator (ptxrun --counters) at the same offsets, and each launch's
wavefronts and bank conflicts per instruction must be what Nsight Compute counted on the GPU.

Run as: test_shared_wavefronts.py PATH_TO_PTXRUN PATH_TO_NVCC SOURCE_ROOT WORK_DIR
"""
import csv
import gzip
import os
import re
import subprocess
import sys

import numpy as np

ptxrun, nvcc, root, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
records = os.path.join(root, "bench", "results", "validation")
ROUNDS = 8  # the --count launches' rounds of 8 accesses: 64 a launch, as measured
NO_ACCESS = 0xFFFFFFFF  # a lane that makes no access ("-" in the offsets column)

ptx = os.path.join(work, "shared_wavefronts.ptx")
done = subprocess.run([nvcc, "-ptx", "-arch=sm_90", "-I", os.path.join(root, "common", "kernel"),
                       os.path.join(root, "bench", "validation", "shared_wavefronts.cu"), "-o", ptx],
                      capture_output=True, text=True)
if done.returncode != 0:
    sys.exit(f"test_shared_wavefronts: nvcc failed: {done.stderr.strip()[-400:]}")

launches = list(csv.DictReader(open(os.path.join(records, "shared_wavefronts_h100_launches.csv"))))
text = gzip.open(os.path.join(records, "shared_wavefronts_h100_ncu.csv.gz"), "rt").read().splitlines()
table = list(csv.reader(text[next(i for i, line in enumerate(text) if line.startswith('"ID"')):]))
header, measured = table[0], table[2:]  # (the second row gives the units)
if len(measured) != len(launches):
    sys.exit(f"test_shared_wavefronts: {len(launches)} launches but {len(measured)} rows counted by Nsight Compute")


def metric(row, name):
    return float(row[header.index(name)].replace(",", ""))


COUNTS = re.compile(r"shared (loads|stores)\s+(\d+) requests, (\d+) wavefronts \(ideal (\d+)\)")
failures = []
for launch, nsight in zip(launches, measured):
    op = "ld" if launch["access"] == "load" else "st"
    kernel = f"shared_{launch['access']}_{launch['bits']}"
    instructions = metric(nsight, f"smsp__inst_executed_op_shared_{op}.sum")
    want = (metric(nsight, f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum") / instructions,
            metric(nsight, f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum") / instructions)
    offsets = os.path.join(work, "offsets.npy")
    np.save(offsets, np.array([NO_ACCESS if x == "-" else int(x) for x in launch["offsets"].split()], dtype=np.uint32))
    run = subprocess.run([ptxrun, ptx, kernel, "--grid", "1", "--block", "32", "--counters", "in:" + offsets,
                          f"s32:{ROUNDS}", "out:" + os.path.join(work, "sink.npy") + ":u32:128",
                          "out:" + os.path.join(work, "clocks.npy") + ":s64:1"], capture_output=True, text=True)
    counted = {m[1]: m for m in COUNTS.finditer(run.stdout)}.get("loads" if op == "ld" else "stores")
    if run.returncode != 0 or not counted:
        failures.append(f"{kernel} at {launch['pattern']}: ptxrun failed: {(run.stderr or run.stdout)[-300:]}")
        continue
    requests, wavefronts, ideal = int(counted[2]), int(counted[3]), int(counted[4])
    got = (wavefronts / requests, (wavefronts - ideal) / requests)
    if requests != instructions or got != want:
        failures.append(f"{launch['bits']}-bit {launch['access']}, {launch['pattern']}: the emulator counts {requests} "
                        f"requests, {got[0]:g} wavefronts and {got[1]:g} bank conflicts each; Nsight Compute "
                        f"counted {instructions:g}, {want[0]:g} and {want[1]:g} on {launch['gpu']}")

# emu/README.md ("Counters") quotes two of these measurements as where the rule for paired lanes comes from
measured = {(launch["pattern"], launch["bits"], launch["access"]): nsight for launch, nsight in zip(launches, measured)}
for pattern, want in (("one address for all", (2, 0)), ("even lanes only, contiguous", (4, 2))):
    nsight = measured[(pattern, "128", "load")]
    instructions = metric(nsight, "smsp__inst_executed_op_shared_ld.sum")
    got = (metric(nsight, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") / instructions,
           metric(nsight, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum") / instructions)
    if got != want:
        failures.append(f"emu/README.md says a 128-bit load, {pattern}, took {want[0]} wavefronts ({want[1]} of them "
                        f"conflicts) on the H100; the record says {got[0]:g} ({got[1]:g})")

for f in failures:
    print("FAIL", f)
print(f"test_shared_wavefronts: {len(launches) - len(failures)} of {len(launches)} launches counted as Nsight Compute "
      f"counted them on {launches[0]['gpu']}")
sys.exit(1 if failures else 0)
