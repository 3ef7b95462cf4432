#!/usr/bin/env python3
"""Nsight Compute on a GPU: every GPU kernel on its chapter's reference layers, what the hardware counted,
into bench/results/ncu/<gpu>.csv. On the GPU machine (bench/gpu_session.sh profile runs it):

    python3 bench/ncu_profile.py [--ncu PATH] [--conv build/conv] [--raw DIR] [--deadline SECONDS]
    python3 bench/ncu_profile.py --from-raw DIR --gpu-name "NVIDIA H100 80GB HBM3" --ncu-version 2025.3.1.0

Each (kernel, layer) is one `ncu --csv --page raw` of `conv run ID --layer L --reps 1 --warmup 0 --no-cudnn
--no-verify` (clocks left as they are, caches flushed before each launch: ncu's defaults but the clock), its
output kept in DIR as <id>_<suite>_<layer>.csv; --from-raw rebuilds the CSV from such a folder.

A run launches each of its kernels once or more (a warm-up, the timed run); a row is one of each distinct
kernel (the last launch of each), summed: the time (gpu__time_duration), the warp instructions executed
(smsp__inst_executed: machine code, SASS), the thread blocks launched, and for every warp state Nsight
Compute names, the warp-cycles spent in it per issued instruction
(smsp__average_warps_issue_stalled_<state>_per_issue_active.ratio), launches weighted by their instructions,
and the memory traffic: the global loads' requests to the L1 and their sectors (what the emulator counts as
global_load_requests and global_load_sectors: the counters' check, and the L1's work the model times a line a
cycle), the sectors the L2 served the SMs' loads and the bytes it read from DRAM (ncu flushes the caches
before each launch, so these say what one launch's blocks share in the L2, not what it inherits).
These are the units of the timing model's warp states (bench/modeled_csv.py, per_issued), which
bench/model_validation.py compares with them. Everything in the CSV is measured, by Nsight Compute.

Beside it, bench/results/ncu/<gpu>_sass.csv.gz: the same runs' second launch profiled again with
SourceCounters, one row per machine instruction (its offset in the kernel, its SASS, how many warp-level
times it executed, and Nsight Compute's warp-state samples on it): what the model's count of the machine
code per PTX line can be checked against, line by line.
"""
import argparse
import csv
import datetime
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "common", "harness"))
from hash_sources import code_digest  # noqa: E402

FOLDER = os.path.join(ROOT, "bench", "results", "ncu")
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$")
SECTIONS = ["WarpStateStats", "Occupancy", "LaunchStats"]
# the memory traffic: the global loads' requests to the L1 and the sectors they asked for (the emulator counts
# the same: global_load_requests and global_load_sectors, bench/results/emulator.csv); the sectors the SMs' L1s
# read from the L2, and the bytes it read from DRAM (with the caches flushed before each launch, as ncu does by
# default: what one launch's own blocks share in the L2)
TRAFFIC = {"l1_global_load_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
           "l1_global_load_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "l2_sectors_read": "lts__t_sectors_srcunit_tex_op_read.sum", "dram_bytes_read": "dram__bytes_read.sum"}
METRICS = ["gpu__time_duration.sum", "smsp__inst_executed.sum"] + list(TRAFFIC.values())
COLUMNS = ["chapter", "kernel", "layer", "n", "kernels", "time_us", "blocks", "inst_executed", "registers",
           *TRAFFIC, "gpu", "ncu", "source_sha256", "date"]


def gpu_key(name):
    """'NVIDIA H100 80GB HBM3' -> 'h100': the results CSVs' naming."""
    model = re.search(r"\b([A-Z]+\d+[A-Z]?)\b", name.replace("NVIDIA", ""))
    return model.group(1).lower() if model else re.sub(r"\W+", "_", name.lower())


def number(text):
    return float(text.replace(",", "")) if text not in ("", "n/a") else 0.0


def launches(path):
    """The launches of one raw ncu file: a list of {metric: text}, or [] when the run launched nothing."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    start = text.find('"ID"')
    if start < 0:
        return []
    rows = list(csv.reader(io.StringIO(text[start:])))
    header = rows[0]
    return [dict(zip(header, row)) for row in rows[2:] if len(row) == len(header)]  # rows[1]: the units


def condense(kernel_id, layer, found):
    """One CSV row from a run's launches: the last launch of each distinct kernel, summed."""
    last = {}
    for launch in found:
        last[launch["Kernel Name"]] = launch
    kept = list(last.values())
    inst = [number(k["smsp__inst_executed.sum"]) for k in kept]
    grid = [grid_blocks(k["Grid Size"]) for k in kept]
    row = {"kernel": kernel_id, "layer": layer, "kernels": len(kept),
           "time_us": f"{sum(number(k['gpu__time_duration.sum']) for k in kept) / 1000:.3f}",
           "blocks": sum(grid), "inst_executed": int(sum(inst)),
           "registers": "+".join(k["launch__registers_per_thread"] for k in kept)}
    for column, metric in TRAFFIC.items():  # absent from profiles taken before these were asked for
        if all(k.get(metric, "") not in ("", "n/a") for k in kept):
            row[column] = f"{sum(number(k[metric]) for k in kept):.0f}"
    states = sorted({m.group(1) for k in kept for m in map(STALL.match, k) if m})
    total = sum(inst) or 1.0
    for state in states:
        metric = f"smsp__average_warps_issue_stalled_{state}_per_issue_active.ratio"
        row["stall_" + state] = f"{sum(number(k.get(metric, '')) * n for k, n in zip(kept, inst)) / total:.3f}"
    return row


def grid_blocks(text):
    """'(98, 1, 1)' -> 98."""
    x, y, z = (int(v) for v in re.findall(r"\d+", text))
    return x * y * z


def pairs(conv):
    """(id, chapter, layer) for every GPU kernel on its chapter's reference layers (conv list --json)."""
    listing = json.loads(subprocess.run([conv, "list", "--json"], capture_output=True, text=True, check=True).stdout)
    return [(k["id"], k["id"][:2], layer) for k in listing if k["device"] == "gpu" for layer in k["layers"]]


def raw_name(kernel_id, layer, what="csv"):
    return f"{kernel_id}_{layer.replace('/', '_')}.{what}"


def sass_rows(kernel_id, layer, path):
    """One row per machine instruction from `ncu --page source --print-source sass --csv`'s output."""
    with open(path, encoding="utf-8", errors="replace") as f:
        rows = list(csv.reader(f))
    if len(rows) < 3 or not rows[0] or rows[0][0] != "Kernel Name":
        return []
    header, function = rows[1], rows[0][1]
    at = {name: header.index(name) for name in ("Address", "Source", "Instructions Executed", "# Samples")}
    states = [(name[len("stall_"):], i) for i, name in enumerate(header)
              if name.startswith("stall_") and "(" not in name]
    out, first = [], None
    for row in rows[2:]:
        if len(row) != len(header):
            continue
        address = int(row[at["Address"]], 16)
        first = address if first is None else first
        out.append(dict({"kernel": kernel_id, "layer": layer, "function": function, "offset": address - first,
                         "sass": row[at["Source"]].strip(),
                         "executed": int(number(row[at["Instructions Executed"]])),
                         "samples": int(number(row[at["# Samples"]]))},
                        **{"samples_" + state: int(number(row[i])) for state, i in states}))
    return out


def profile(args, raw):
    """Run ncu over every pair into `raw`; returns (pairs, ncu version)."""
    ncu = args.ncu or shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    if not os.access(ncu, os.X_OK):
        sys.exit(f"ncu_profile: no Nsight Compute at {ncu} (--ncu names it)")
    version = subprocess.run([ncu, "--version"], capture_output=True, text=True, check=True).stdout
    version = re.search(r"Version (\S+)", version).group(1)
    todo, start = pairs(args.conv), time.time()
    for i, (kernel_id, _chapter, layer) in enumerate(todo):
        if time.time() - start > args.deadline:
            print(f"ncu_profile: stopped at the deadline, before {kernel_id} {layer}", file=sys.stderr)
            break
        command = [ncu, "--clock-control", "none", *[a for s in SECTIONS for a in ("--section", s)],
                   "--metrics", ",".join(METRICS), "--csv", "--page", "raw",
                   args.conv, "run", kernel_id, "--layer", layer, "--reps", "1", "--warmup", "0", "--no-cudnn",
                   "--no-verify"]
        with open(os.path.join(raw, raw_name(kernel_id, layer)), "w") as out:
            run = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=120)
        # the second launch (the first is the warm-up) again, per machine instruction
        report = os.path.join(raw, raw_name(kernel_id, layer, "ncu-rep"))
        subprocess.run([ncu, "--clock-control", "none", "--section", "SourceCounters", "--launch-skip", "1",
                        "--launch-count", "1", "-f", "-o", report, *command[command.index(args.conv):]],
                       capture_output=True, timeout=120)
        with open(os.path.join(raw, raw_name(kernel_id, layer, "sass.csv")), "w") as out:
            subprocess.run([ncu, "-i", report, "--page", "source", "--print-source", "sass", "--csv"], stdout=out,
                           stderr=subprocess.DEVNULL, timeout=120)
        print(f"ncu_profile: {kernel_id} {layer} ({i + 1} of {len(todo)}, {time.time() - start:.0f} s): "
              f"exit {run.returncode}", file=sys.stderr, flush=True)
    return todo, version


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncu")
    ap.add_argument("--conv", default=os.path.join(ROOT, "build", "conv"))
    ap.add_argument("--raw", help="keep ncu's own output here (default: a temporary folder)")
    ap.add_argument("--deadline", type=float, default=600, help="start no profile after this many seconds")
    ap.add_argument("--from-raw", help="no profiling: rebuild the CSV from this folder of ncu's outputs")
    ap.add_argument("--gpu-name", help="with --from-raw: the GPU the folder was measured on")
    ap.add_argument("--ncu-version", help="with --from-raw: the Nsight Compute that measured it")
    ap.add_argument("--date", default=str(datetime.date.today()))
    ap.add_argument("--out", help="the CSV (default bench/results/ncu/<gpu>.csv)")
    args = ap.parse_args()

    if args.from_raw:
        if not (args.gpu_name and args.ncu_version):
            sys.exit("ncu_profile: --from-raw needs --gpu-name and --ncu-version")
        raw, gpu, version, todo = args.from_raw, args.gpu_name, args.ncu_version, pairs(args.conv)
    else:
        smi = shutil.which("nvidia-smi")
        names = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                               text=True).stdout.splitlines() if smi else []
        if not names:
            sys.exit("ncu_profile: no GPU here (nvidia-smi names none): Nsight Compute needs one")
        gpu = names[0].strip()
        raw = args.raw or tempfile.mkdtemp(prefix="ncu_")
        os.makedirs(raw, exist_ok=True)
        todo, version = profile(args, raw)

    digests, rows = {}, []
    for kernel_id, chapter, layer in todo:
        path = os.path.join(raw, raw_name(kernel_id, layer))
        found = launches(path) if os.path.exists(path) else []
        if not found:  # not profiled, or the run refused the layer (05l needs an epilogue; 06a, stride 1)
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            batch = re.search(r"\| n(\d+) c\d+ ", f.read())  # conv run's line: the layer's batch
        if chapter not in digests:
            folder = next(p for p in sorted(os.listdir(os.path.join(ROOT, "chapters"))) if p.startswith(chapter))
            digests[chapter] = code_digest(os.path.join(ROOT, "chapters", folder), ROOT)
        rows.append(dict(condense(kernel_id, layer, found), chapter=chapter, n=batch.group(1) if batch else "", gpu=gpu, ncu=version,
                         source_sha256=digests[chapter], date=args.date))
    sass = [row for kernel_id, _chapter, layer in todo
            if os.path.exists(os.path.join(raw, raw_name(kernel_id, layer, "sass.csv")))
            for row in sass_rows(kernel_id, layer, os.path.join(raw, raw_name(kernel_id, layer, "sass.csv")))]
    states = sorted({c for r in rows for c in r if c.startswith("stall_")})
    out = args.out or os.path.join(FOLDER, gpu_key(gpu) + ".csv")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", newline="") as f:
        measured = COLUMNS.index("gpu")  # the states go after the measured columns
        writer = csv.DictWriter(f, COLUMNS[:measured] + states + COLUMNS[measured:], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"ncu_profile: {len(rows)} rows written to {os.path.relpath(out, ROOT)}")
    if sass:
        per_instruction = out[:-len(".csv")] + "_sass.csv.gz"
        with gzip.open(per_instruction, "wt", newline="") as f:
            columns = list(dict.fromkeys(c for r in sass for c in r))
            writer = csv.DictWriter(f, columns, restval=0, lineterminator="\n")
            writer.writeheader()
            writer.writerows(sass)
        print(f"ncu_profile: {len(sass)} machine instructions written to {os.path.relpath(per_instruction, ROOT)}")


if __name__ == "__main__":
    main()
