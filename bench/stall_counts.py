#!/usr/bin/env python3
"""The compiler's stall counts beside Nsight Compute's `wait` state, kernel by kernel: the evidence for the
timing model's holding each warp for them (ASSUME_STALL_COUNTS in emu/model.c).

Every machine instruction since Volta carries control information that ptxas sets: among it a stall count, the
cycles its warp waits before it may issue its next instruction, which is how a fixed-latency result is waited for
(Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018, section 2.2, "Control
information": reuse flags, wait barrier mask, read and write barrier indexes, yield flag and stall cycles in the
high bits of the 128-bit instruction word, the stall cycles lowest, at bit 105). Nsight Compute's `wait` state is a
warp "waiting on a fixed latency execution dependency". This reads the stall counts of each kernel that
`bench/ncu_profile.py` profiled per machine instruction (`bench/results/ncu/GPU_sass.csv.gz`): ptxas compiles the
build's PTX of the kernel for that GPU (the timing model's own way of reading the machine code, and the same code:
the build's objects hold the same instructions), cuobjdump lists every instruction with its encoding; the profile
gives each instruction's executions and its warp-state samples. Per (kernel, layer): the executed-weighted mean of
(stall count - 1), the cycles a warp is held beyond the one it issued in, beside Nsight's `wait` samples per
`selected` (issuing) sample on the same instructions.

    python3 bench/stall_counts.py [--gpu h100] [--build build]             print the table
    python3 bench/stall_counts.py --write | --check [--gpu h100] [--build build]   emu/README.md's stall-counts section

Needs ptxas ($PTXAS, PATH or /usr/local/cuda/bin) and cuobjdump (PATH, or the nvidia-cuda-cuobjdump wheel that
bench/setup.sh installs); exit 77 without them.
"""
import argparse
import collections
import csv
import glob
import gzip
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common", "harness"))
import markers  # noqa: E402
from cuda_tools import find_tool  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "emu", "README.md")
STALL_SHIFT = 105 - 64  # the stall cycles' first bit in the instruction word's high 64 bits


def machine_code(ptx_path, ptxas, cuobjdump):
    """{kernel's mangled name: {offset: (opcode, stall count)}} of the PTX file compiled for its own target."""
    with open(ptx_path) as f:
        target = re.search(r"^\s*\.target\s+(\w+)", f.read(), re.M).group(1)
    with tempfile.TemporaryDirectory() as work:
        cubin = os.path.join(work, "k.cubin")
        subprocess.run([ptxas, "-arch=" + target, "-lineinfo", ptx_path, "-o", cubin], check=True,
                       capture_output=True)
        lines = subprocess.run([cuobjdump, "-sass", cubin], check=True, capture_output=True,
                               text=True).stdout.splitlines()
    functions, current = {}, None
    for i, line in enumerate(lines):
        named = re.match(r"\s*Function : (\S+)", line)
        if named:
            current = functions.setdefault(named.group(1), {})
            continue
        instruction = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\* 0x[0-9a-f]{16} \*/", line)
        if instruction and current is not None and i + 1 < len(lines):
            high = int(re.search(r"0x([0-9a-f]{16})", lines[i + 1]).group(1), 16)
            current[int(instruction.group(1), 16)] = (opcode(instruction.group(2)), high >> STALL_SHIFT & 15)
    return functions


def opcode(sass):
    """An instruction's opcode with its modifiers, its guard left out: `@!P0 BRA` -> `BRA`."""
    words = sass.split()
    return words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "")


def rows_by_kernel(gpu):
    path = os.path.join(ROOT, "bench", "results", "ncu", gpu + "_sass.csv.gz")
    grouped = collections.defaultdict(list)
    with gzip.open(path, "rt") as f:
        for row in csv.DictReader(f):
            grouped[(row["kernel"], row["layer"], row["function"])].append(row)
    return grouped


def table(gpu, build):
    ptxas, cuobjdump = find_tool("ptxas", "PTXAS"), find_tool("cuobjdump")
    if not ptxas or not cuobjdump:
        print("stall_counts: needs ptxas and cuobjdump (bash bench/setup.sh installs cuobjdump)", file=sys.stderr)
        sys.exit(77)
    per_pair = collections.defaultdict(collections.Counter)
    compiled = {}
    for (kernel, layer, function), rows in sorted(rows_by_kernel(gpu).items()):
        ptx = sorted(glob.glob(os.path.join(build, "emu", kernel + "_*.ptx")))
        if not ptx:
            raise SystemExit(f"stall_counts: no {build}/emu/{kernel}_*.ptx (build first: bash bench/setup.sh)")
        if ptx[0] not in compiled:
            compiled[ptx[0]] = machine_code(ptx[0], ptxas, cuobjdump)
        # the profiled function: the compiled one whose instructions stand at the profile's offsets
        def agreeing(code):
            return sum(code.get(int(r["offset"]), ("",))[0] == opcode(r["sass"]) for r in rows)
        code = max(compiled[ptx[0]].values(), key=agreeing)
        if agreeing(code) < len(rows):
            raise SystemExit(f"stall_counts: {kernel} {function[:60]}: the profile's machine code is not what ptxas "
                             f"makes of {ptx[0]} now ({agreeing(code)} of {len(rows)} instructions agree)")
        pair = per_pair[(kernel, layer)]
        for r in rows:
            executed, stall = int(r["executed"]), code[int(r["offset"])][1]
            pair["executed"] += executed
            pair["held"] += executed * max(stall - 1, 0)
            pair["wait"] += int(r["samples_wait"])
            pair["selected"] += int(r["samples_selected"])
    lines = ["| kernel | layer | machine instructions executed | stall count - 1, mean per executed instruction "
             "(ptxas's control bits) | Nsight Compute's `wait` per issued instruction (samples, measured) | ratio |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    ratios = []
    for (kernel, layer), pair in sorted(per_pair.items()):
        held = pair["held"] / pair["executed"]
        wait = pair["wait"] / pair["selected"]
        ratios.append(held / wait if wait else float("inf"))
        lines.append(f"| {kernel} | {layer.split('/')[-1]} | {pair['executed']:,} | {held:.2f} | {wait:.2f} | "
                     f"{ratios[-1]:.2f} |")
    within = sum(abs(x - 1) <= 0.2 for x in ratios)
    summary = (f"On the {len(ratios)} (kernel, layer) pairs profiled per machine instruction "
               f"(`bench/results/ncu/{gpu}_sass.csv.gz`): the cycles ptxas's stall counts hold a warp beyond its issue "
               f"are {min(ratios):.2f} to {max(ratios):.2f} times the `wait` cycles Nsight Compute sampled on the same "
               f"instructions, median {statistics.median(ratios):.2f}, {within} within 20%. Generated by `python3 "
               f"bench/stall_counts.py --write`.")
    return summary + "\n\n" + "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    parser.add_argument("--gpu", default="h100")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args(argv)
    content = table(args.gpu, args.build)
    if not (args.write or args.check):
        print(content)
        return 0
    return markers.refresh(README, "stall-counts", content, args.check, "stall_counts",
                           "python3 bench/stall_counts.py --write")


if __name__ == "__main__":
    sys.exit(main())
