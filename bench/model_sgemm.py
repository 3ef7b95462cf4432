#!/usr/bin/env python3
"""The timing model's independent check: the first six fp32 GEMM kernels of Simon Boehm's SGEMM worklog, written in
bench/validation/sgemm_worklog.cu from the worklog's descriptions, each verified on the emulator, then modeled at
4096 x 4096 x 4096 on the RTX A6000's file beside the GFLOP/s the worklog published for it, measured on an RTX
A6000 (bench/a6000.json, published_measurements), and on the H100's file beside the times this project measured
on an H100 (bench/results/validation/sgemm_h100.csv, by bench/gpu_session.sh validation) with Nsight Compute's
count of each kernel's machine instructions and its warp states there. Written into emu/README.md between
<!-- model-sgemm:begin --> and <!-- model-sgemm:end -->.

    python3 bench/model_sgemm.py --write  [--ptxrun build/emu/ptxrun]   model the kernels, rewrite the table
    python3 bench/model_sgemm.py --check  [--ptxrun build/emu/ptxrun]   exit 1 when the table is not what the
                                                                        model gives now
    python3 bench/model_sgemm.py --verify [--ptxrun build/emu/ptxrun]   every kernel, every block, on two small
                                                                        shapes, against an fp64 product

The series is kept for this check: no figure of the model was chosen or changed to fit it. Its target: each
kernel's modeled time within 30% of the time its published throughput gives, and the kernels in the published
order. A 4096^3 grid has up to 16,384 blocks; the model runs the first 4 waves of the blocks one SM gets and
extrapolates the rest (ptxrun --sample-waves, emu/model.c ASSUME_STEADY_WAVES), which takes seconds per kernel;
the table says how far that is from modeling every block of the SM, on 1024^3.
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import markers  # noqa: E402
from model_validation import spearman  # noqa: E402
from ncu_profile import STALL, grid_blocks, launches, number  # noqa: E402

README = os.path.join(ROOT, "emu", "README.md")
SOURCE = os.path.join(HERE, "validation", "sgemm_worklog.cu")
MEASURED = os.path.join(HERE, "results", "validation")
ARCH = {"a6000": "sm_86", "h100": "sm_90"}  # each GPU's own machine code
SIZE = 4096
WAVES = 4
ALPHA, BETA = 1.5, -0.5

# (the worklog's row, the kernel here, threads per block, the C tile a block computes (rows, columns), whether
# blockIdx.x walks C's rows (kernels 1-3) or its columns (4-6))
KERNELS = [
    ("1: Naive", "sgemm_naive", "32,32", (32, 32), True),
    ("2: GMEM Coalescing", "sgemm_coalesced", "1024", (32, 32), True),
    ("3: SMEM Caching", "sgemm_smem", "1024", (32, 32), True),
    ("4: 1D Blocktiling", "sgemm_1d_blocktiling", "512", (64, 64), False),
    ("5: 2D Blocktiling", "sgemm_2d_blocktiling", "256", (128, 128), False),
    ("6: Vectorized Mem Access", "sgemm_vectorized", "256", (128, 128), False),
]
MODELED = re.compile(r"time\s+([\d.]+) us \((\d+) cycles of one SM; it ran (\d+) blocks, ([\d.]+) at once per launch"
                     r"(?:; (\d+) more extrapolated from its waves, standard error ([\d.]+)%)?\)")
STATES = re.compile(r"([\d.]+) in all:(.*)")


def compile_ptx(work, gpu="a6000"):
    ptx = os.path.join(work, f"sgemm_worklog_{gpu}.ptx")
    nvcc = os.path.join(os.environ.get("CUDA_HOME") or "/usr/local/cuda", "bin", "nvcc")
    done = subprocess.run([nvcc, "-ptx", f"-arch={ARCH[gpu]}", SOURCE, "-o", ptx], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"model_sgemm: nvcc failed: {done.stderr.strip()[-300:]}")
    return ptx


def grid(m, n, tile, rows_first):
    rows, cols = m // tile[0], n // tile[1]
    return f"{rows},{cols}" if rows_first else f"{cols},{rows}"


def ptxrun(args, env):
    done = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, **env))
    if done.returncode != 0:
        sys.exit(f"model_sgemm: {' '.join(args[1:3])}: {(done.stderr or done.stdout).strip()[-300:]}")
    return done.stdout


def buffers(work, m, n, k, rng):
    paths = {}
    for name, shape in (("A", (m, k)), ("B", (k, n)), ("C", (m, n))):
        paths[name] = os.path.join(work, f"{name}_{m}_{n}_{k}.npy")
        values = rng.standard_normal(shape).astype(np.float32) if rng else np.zeros(shape, np.float32)
        np.save(paths[name], values.reshape(-1))
    return paths


def launch_args(paths, m, n, k, out):
    return [f"s32:{m}", f"s32:{n}", f"s32:{k}", f"f32:{ALPHA}", "in:" + paths["A"], "in:" + paths["B"],
            f"f32:{BETA}", f"inout:{paths['C']}:{out}"]


def verify(ptxrun_path):
    """Every kernel computes C = alpha A B + beta C: every block, racecheck and initcheck on, two shapes."""
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory(prefix="model_sgemm_") as work:
        ptx = compile_ptx(work)
        for m, n, k in ((256, 256, 256), (128, 384, 256)):
            paths = buffers(work, m, n, k, rng)
            a, b, c = (np.load(paths[x]).astype(np.float64) for x in "ABC")
            a, b, c = a.reshape(m, k), b.reshape(k, n), c.reshape(m, n)
            want = ALPHA * a @ b + BETA * c
            # fp32 sums of k products: within k units of the last place of the sum of magnitudes
            bound = k * 2.0 ** -24 * (abs(ALPHA) * np.abs(a) @ np.abs(b) + abs(BETA) * np.abs(c)) + 1e-30
            for row, name, block, tile, rows_first in KERNELS:
                out = os.path.join(work, f"{name}_out.npy")
                ptxrun([ptxrun_path, ptx, name, "--grid", grid(m, n, tile, rows_first), "--block", block] +
                       launch_args(paths, m, n, k, out), {})
                got = np.load(out).astype(np.float64).reshape(m, n)
                worst = np.max(np.abs(got - want) / bound)
                if not np.all(np.isfinite(got)) or worst > 1:
                    sys.exit(f"model_sgemm: {name} on {m}x{n}x{k}: wrong, {worst:.2f} times the error bound")
                print(f"model_sgemm: {name} {m}x{n}x{k}: verified in emulation ({worst:.3f} of the error bound)")
    return 0


def published():
    with open(os.path.join(HERE, "a6000.json")) as f:
        found = {m["what"]: m for m in json.load(f)["published_measurements"]["list"]}
    out = {}
    for row, *_ in KERNELS:
        m = found.get(f"SGEMM worklog kernel {row}, 4096 x 4096 x 4096 fp32 GEMM throughput")
        if not m or m.get("also_model_input"):
            sys.exit(f"model_sgemm: bench/a6000.json has no published throughput for the worklog's kernel {row}")
        out[row] = m["value"]
    return out


def model_run(ptxrun_path, ptx, paths, size, kernel, waves, env=None, gpu="a6000"):
    """ptxrun --model GPU --sample-waves `waves` of one kernel on size^3: its labelled output."""
    row, name, block, tile, rows_first = kernel
    started = time.monotonic()
    text = ptxrun([ptxrun_path, ptx, name, "--grid", grid(size, size, tile, rows_first), "--block", block, "--model",
                   gpu, "--sample-waves", str(waves), "--counters"] +
                  launch_args(paths, size, size, size, paths["C"] + ".out"), dict(env or {}, EMU_THREADS="1"))
    if not MODELED.search(text) or not STATES.search(text) or "(a model, not a measurement)" not in text:
        sys.exit(f"model_sgemm: {name}: no labelled modeled time in: {text.strip()[-300:]}")
    print(f"model_sgemm: {name} on {size}^3 modeled in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return text


def top_states(pairs, n=2):
    """'long_scoreboard 9.96, not_selected 0.37': the n largest warp states but selected, of (state, cycles)."""
    top = sorted(((v, s) for s, v in pairs if s != "selected"), reverse=True)[:n]
    return ", ".join(f"{s} {v:.2f}" for v, s in top)


def modeled(ptxrun_path, gpu="a6000", alone=True):
    rows = []
    with tempfile.TemporaryDirectory(prefix="model_sgemm_") as work:
        ptx = compile_ptx(work, gpu)
        paths = buffers(work, SIZE, SIZE, SIZE, None)  # the values do not change the modeled time
        for kernel in KERNELS:
            text = model_run(ptxrun_path, ptx, paths, SIZE, kernel, WAVES, gpu=gpu)
            if "of machine code (SASS)" not in text:
                sys.exit(f"model_sgemm: {kernel[1]}: the model read no machine code (is nvdisasm installed? "
                         "bench/setup.sh)")
            found, states = MODELED.search(text), STATES.search(text)
            us = float(found[1])
            ran, extrapolated = int(found[3]), int(found[5] or 0)
            issued = int(re.search(r"issued\s+(\d+) warp instructions of machine code", text)[1])
            row = {"row": kernel[0], "us": us, "gflops": 2 * SIZE ** 3 / us / 1e3, "ran": ran,
                   "extrapolated": extrapolated, "error": float(found[6] or 0),
                   "per_block": issued / (ran + extrapolated),  # the modeled SM's blocks, extrapolated ones too
                   "states": top_states((s, float(v)) for s, v in re.findall(r"(\w+) ([\d.]+)", states[2]))}
            if alone:  # each PTX instruction one machine instruction
                row["alone"] = 2 * SIZE ** 3 / float(MODELED.search(model_run(
                    ptxrun_path, ptx, paths, SIZE, kernel, WAVES, {"EMU_NVDISASM": ""}, gpu))[1]) / 1e3
            rows.append(row)
    return rows


def extrapolation_errors(ptxrun_path, size=1024):
    """(kernel, error) where one SM has more than WAVES waves on size^3: the extrapolated time against the time of
    every one of its blocks modeled (--sample-waves 1000 models them all)."""
    errors = []
    with tempfile.TemporaryDirectory(prefix="model_sgemm_") as work:
        ptx = compile_ptx(work)
        paths = buffers(work, size, size, size, None)
        for kernel in KERNELS:
            sampled = model_run(ptxrun_path, ptx, paths, size, kernel, WAVES)
            if "more extrapolated" in sampled:
                whole = float(MODELED.search(model_run(ptxrun_path, ptx, paths, size, kernel, 1000))[1])
                errors.append((kernel[0], float(MODELED.search(sampled)[1]) / whole - 1))
    return errors


def measured_on(gpu):
    """This project's measurements of the series on `gpu` (bench/gpu_session.sh validation): {row: GFLOP/s}, the
    GPU's name and the day, cuBLAS's GFLOP/s, and from Nsight Compute {row: (machine instructions per block,
    warp states)}."""
    with open(os.path.join(MEASURED, f"sgemm_{gpu}.csv")) as f:
        rows = list(csv.DictReader(f))
    if any(r["status"] not in ("pass", "reference") for r in rows):
        sys.exit(f"model_sgemm: sgemm_{gpu}.csv has a kernel that failed its check against cuBLAS")
    gflops = {r["kernel"]: float(r["gflops"]) for r in rows}
    names = {name: row for row, name, *_ in KERNELS}
    counted = {}
    for launch in launches(os.path.join(MEASURED, f"sgemm_{gpu}_ncu.csv")):
        row = names[launch["Kernel Name"]]
        inst = number(launch["smsp__inst_executed.sum"])
        states = [(STALL.match(m)[1], number(v)) for m, v in launch.items() if STALL.match(m)]
        counted[row] = (inst / grid_blocks(launch["Grid Size"]), top_states(states))
    missing = [row for row, *_ in KERNELS if row not in gflops or row not in counted]
    if missing:
        sys.exit(f"model_sgemm: bench/results/validation has no measurement of {', '.join(missing)} on the {gpu}")
    return gflops, rows[0]["gpu"], rows[0]["date"], gflops.get("0: cuBLAS"), counted


def agreement(rows, measured):
    """(within 30%, mean absolute error of the time, Spearman, order kept) of modeled GFLOP/s against measured."""
    ratios = [r["gflops"] / measured[r["row"]] for r in rows]
    within = sum(1 for x in ratios if abs(1 / x - 1) <= 0.3)  # the modeled time within 30% of the measured
    mape = statistics.mean(abs(1 / x - 1) for x in ratios)  # error of the modeled time against the measured
    rank = spearman([r["gflops"] for r in rows], [measured[r["row"]] for r in rows])
    order = sorted(range(len(rows)), key=lambda i: measured[rows[i]["row"]])
    kept = all(rows[order[i]]["gflops"] < rows[order[i + 1]]["gflops"] for i in range(len(order) - 1))
    return ratios, within, mape, rank, kept


def naive_requests(gpu):
    """From Nsight Compute's memory counters of the series on `gpu` (sgemm_<gpu>_memory.csv): the naive kernel's
    L1 hit rate of its global loads' sectors (%), its sectors per load request, and an SM's cycles per request."""
    found = next(k for k in launches(os.path.join(MEASURED, f"sgemm_{gpu}_memory.csv"))
                 if k["Kernel Name"] == "sgemm_naive")
    requests = number(found["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"])
    sectors = number(found["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"])
    sms = number(found["device__attribute_multiprocessor_count"])
    return (number(found["l1tex__t_sector_hit_rate.pct"]), sectors / requests,
            number(found["sm__cycles_elapsed.avg"]) * sms / requests)


def h100_table(ptxrun_path):
    measured, gpu_name, day, cublas, counted = measured_on("h100")
    hit, per_request, cycles = naive_requests("h100")
    rows = modeled(ptxrun_path, "h100", alone=False)
    ratios, within, mape, rank, kept = agreement(rows, measured)
    counts = [r["per_block"] / counted[r["row"]][0] for r in rows]
    out = [f"On the NVIDIA H100 (SXM5), {SIZE} x {SIZE} x {SIZE}, against the times this project measured on an "
           f"{gpu_name} on {day} (`bench/results/validation/sgemm_h100.csv`, by `bash bench/gpu_session.sh "
           f"validation`: the median of timed launches, each kernel checked against cuBLAS first; cuBLAS's sgemm "
           f"measured beside them at {cublas:,.0f} GFLOP/s): {within} of {len(rows)} kernels with a modeled time "
           f"within 30% of the measured one; the mean absolute error of the modeled time {100 * mape:.0f}%; from "
           f"{min(ratios):.2f} to {max(ratios):.2f} times the measured throughput; a rank correlation of {rank:.2f}; "
           f"the measured order {'kept' if kept else 'not kept'}. The machine instructions the model issues per "
           f"block are {min(counts):.2f} to {max(counts):.2f} times what Nsight Compute counted on that GPU "
           "(smsp__inst_executed over the blocks). Nsight's warp states are its cycles per issued instruction "
           "(smsp__average_warps_issue_stalled_*_per_issue_active), the model's in the same unit. Nsight "
           f"Compute's memory counters there (`sgemm_h100_memory.csv`): the naive kernel's global loads hit the L1 "
           f"for {hit:.0f}% of their sectors, at {per_request:.1f} sectors a request, and took {cycles:.1f} cycles of "
           "an SM a request.", "",
           "| the worklog's kernel | modeled on NVIDIA H100 SXM5 80GB, GFLOP/s (a model, not a measurement) | "
           f"measured on an {gpu_name}, GFLOP/s | modeled / measured | machine instructions per block: modeled / "
           "counted by Nsight Compute | the modeled warps' top states | Nsight Compute's top states (measured) |",
           "| --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for r, ratio, count in zip(rows, ratios, counts):
        out.append(f"| {r['row']} | {r['gflops']:,.0f} | {measured[r['row']]:,.1f} | {ratio:.2f} | {count:.2f} | "
                   f"{r['states']} | {counted[r['row']][1]} |")
    return out


def table(ptxrun_path):
    measured = published()
    rows = modeled(ptxrun_path)
    ratios, within, mape, rank, kept = agreement(rows, measured)
    out = [f"On the NVIDIA RTX A6000, {SIZE} x {SIZE} x {SIZE}: {len(rows)} kernels, {within} of them with a modeled "
           f"time within 30% of the published one (the target: all); the mean absolute error of the modeled time "
           f"{100 * mape:.0f}%; from {min(ratios):.2f} to {max(ratios):.2f} times the published throughput; a rank "
           f"correlation (Spearman) of {rank:.2f}; the published order {'kept' if kept else 'not kept'}. The "
           f"extrapolation against every block of one SM modeled, on 1024 x 1024 x 1024: " +
           ", ".join(f"{k} {100 * e:+.2f}%" for k, e in extrapolation_errors(ptxrun_path)) + ".", "",
           "| the worklog's kernel | modeled on NVIDIA RTX A6000 (GA102), GFLOP/s (a model, not a measurement) | "
           "published, measured on an RTX A6000, GFLOP/s | modeled / published | modeled from the PTX alone, "
           "GFLOP/s (a model) | blocks of one SM: modeled, extrapolated (standard error) | the modeled warps' top "
           "states (cycles per issued machine instruction) |",
           "| --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for r, ratio in zip(rows, ratios):
        sampled = f"{r['ran']}, {r['extrapolated']} ({r['error']:.1f}%)" if r["extrapolated"] else f"{r['ran']}, 0"
        out.append(f"| {r['row']} | {r['gflops']:,.0f} | {measured[r['row']]:,.1f} | {ratio:.2f} | "
                   f"{r['alone']:,.0f} | {sampled} | "
                   f"{r['states']} |")
    return "\n".join(out + [""] + h100_table(ptxrun_path)) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--verify", action="store_true")
    ap.add_argument("--ptxrun", default=os.path.join(ROOT, "build", "emu", "ptxrun"))
    args = ap.parse_args(argv)
    if args.verify:
        return verify(args.ptxrun)
    return markers.refresh(README, "model-sgemm", table(args.ptxrun), args.check, "model_sgemm",
                           "python3 bench/model_sgemm.py --write")


if __name__ == "__main__":
    sys.exit(main())
