"""Our kernels against PyTorch, through the runner's .npy files.

For every registered kernel (or those whose id starts with a given prefix), on the fixed awkward shapes
and a few seeded random ones: `conv run ID ... --save-npy DIR` writes the kernel's inputs and output;
PyTorch recomputes the pass in float64 on the CPU from the same inputs
  fprop  torch.nn.functional.conv2d
  dgrad  torch.nn.grad.conv2d_input, and conv_transpose2d (the same operation seen as upsampling)
  wgrad  torch.nn.grad.conv2d_weight
and the two must agree to the tolerance of cuDNN's conv tutorial for fp16 (atol 5e-3, rtol 3e-3, on outputs
scaled to unit size) and to 1e-5 for fp32. Prints a table, exits 1 on any mismatch, 77 (skip) where
PyTorch or a GPU for GPU kernels is missing.

Run as: torch_crosscheck.py PATH_TO_CONV TMP_DIR [ID_PREFIX] [--random N] [--jobs N] [--report FILE.md]
--report also writes the table as Markdown, headed by the GPU and the PyTorch version (docs/ keeps the
one bench/gpu_session.sh wrote on a GPU).
"""
import argparse
import concurrent.futures
import datetime
import os
import random
import shutil
import subprocess
import sys

import numpy as np

SHAPES = [  # n, c, h, w, k, r, s, stride (h, w), pad (h, w), dilation (h, w), groups
    (1, 3, 17, 19, 8, 3, 3, (1, 1), (1, 1), (1, 1), 1),
    (2, 16, 16, 16, 16, 3, 3, (1, 1), (1, 1), (1, 1), 1),
    (2, 13, 15, 9, 11, 3, 3, (1, 1), (1, 1), (1, 1), 1),
    (2, 24, 20, 20, 40, 1, 1, (1, 1), (0, 0), (1, 1), 1),
    (1, 3, 37, 35, 16, 7, 7, (2, 2), (3, 3), (1, 1), 1),
    (2, 32, 14, 14, 24, 3, 3, (2, 2), (1, 1), (1, 1), 1),
    (2, 16, 19, 17, 16, 3, 3, (1, 1), (2, 2), (2, 2), 1),
    (1, 8, 9, 9, 8, 3, 3, (1, 1), (4, 4), (1, 1), 1),
    (2, 16, 12, 12, 32, 3, 3, (1, 1), (1, 1), (1, 1), 4),
    (2, 32, 13, 13, 32, 3, 3, (1, 1), (1, 1), (1, 1), 32),
    (2, 16, 18, 23, 24, 3, 5, (2, 1), (1, 2), (1, 2), 1),
    (1, 64, 14, 14, 128, 4, 4, (2, 2), (1, 1), (1, 1), 1),  # a transposed-convolution upsampler's shape
]


def random_shape(rng):
    while True:
        groups = rng.choice([1, 1, 1, 2, 4])
        c, k = groups * rng.choice([8, 16, 24, rng.randint(1, 20)]), groups * rng.choice([8, 16, rng.randint(1, 20)])
        h, w, r, s = rng.randint(1, 24), rng.randint(1, 24), rng.randint(1, 5), rng.randint(1, 5)
        stride, pad = (rng.randint(1, 3), rng.randint(1, 3)), (rng.randint(0, 3), rng.randint(0, 3))
        dil = (rng.choice([1, 1, 2]), rng.choice([1, 1, 2]))
        if h + 2 * pad[0] >= dil[0] * (r - 1) + 1 and w + 2 * pad[1] >= dil[1] * (s - 1) + 1:
            return (rng.randint(1, 3), c, h, w, k, r, s, stride, pad, dil, groups)


def flags(shape):
    n, c, h, w, k, r, s, stride, pad, dil, groups = shape
    return ["--n", n, "--c", c, "--h", h, "--w", w, "--k", k, "--r", r, "--s", s, "--stride-h", stride[0],
            "--stride-w", stride[1], "--pad-h", pad[0], "--pad-w", pad[1], "--dil-h", dil[0], "--dil-w", dil[1],
            "--groups", groups]


def torch_answer(torch, pass_name, shape, tensors):
    n, c, h, w, k, r, s, stride, pad, dil, groups = shape
    t = {name: torch.from_numpy(array.astype(np.float64)) for name, array in tensors.items()}
    geometry = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    if pass_name == "fprop":
        return {"y": torch.nn.functional.conv2d(t["x"], t["w"], **geometry)}
    if pass_name == "dgrad":
        dx = torch.nn.grad.conv2d_input((n, c, h, w), t["w"], t["dy"], **geometry)
        p, q = t["dy"].shape[2:]
        output_padding = tuple(size - ((o - 1) * st - 2 * pd + dl * (f - 1) + 1)
                               for size, o, st, pd, dl, f in zip((h, w), (p, q), stride, pad, dil, (r, s)))
        upsampled = torch.nn.functional.conv_transpose2d(t["dy"], t["w"], stride=stride, padding=pad,
                                                         output_padding=output_padding, groups=groups,
                                                         dilation=dil)
        return {"dx": dx, "dx (conv_transpose2d)": upsampled}
    return {"dw": torch.nn.grad.conv2d_weight(t["x"], (k, c // groups, r, s), t["dy"], **geometry)}


def write_report(path, rows, summary, torch):
    """The table as Markdown, with what it ran on: written by the script, never by hand."""
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                         text=True) if shutil.which("nvidia-smi") else None
    gpu = smi.stdout.splitlines()[0].strip() if smi and smi.returncode == 0 and smi.stdout.strip() else "no GPU"
    commit = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    lines = ["# Our kernels against PyTorch", "",
             f"Written by `tests/torch_crosscheck.py --report` on {datetime.date.today()}: {gpu}, "
             f"PyTorch {torch.__version__}, commit {commit}. PyTorch computes each pass in float64 on the "
             "CPU from the inputs our kernel read (`--save-npy`); fp16 must agree to atol 5e-3, rtol 3e-3 and "
             "fp32 to 1e-5, on outputs scaled to unit size.", "",
             f"**{summary}.**", "",
             "| kernel | problem (n c h w k r s stride pad dil groups) | output | result |",
             "| --- | --- | --- | --- |"]
    lines += [f"| {kernel_id} | `{shape}` | {label} | {result} |" for kernel_id, shape, label, result in rows]
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("conv")
    parser.add_argument("tmp")
    parser.add_argument("prefix", nargs="?", default="")
    parser.add_argument("--random", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--report", help="also write the table as Markdown to this file")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at once (default: one per CPU)")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("skip: PyTorch is not installed")
        return 77

    listing = subprocess.run([args.conv, "list"], capture_output=True, text=True, check=True).stdout.splitlines()[1:]
    kernels = [line.split()[:5] for line in listing if line.split()[0].startswith(args.prefix)]
    if not kernels:
        print(f"torch_crosscheck: no kernel id starts with {args.prefix!r}")
        return 2
    rng = random.Random(args.seed)
    shapes = SHAPES + [random_shape(rng) for _ in range(args.random)]

    def run_kernel(job):
        """One `conv run` writing its .npy files: the runs are separate processes, so they go in parallel."""
        kernel_id, index, shape = job
        folder = os.path.join(args.tmp, f"torch_{kernel_id}_{index}")
        os.makedirs(folder, exist_ok=True)
        command = [args.conv, "run", kernel_id, *map(str, flags(shape)), "--save-npy", folder, "--reps", "1",
                   "--warmup", "0", "--no-cudnn", "--seed", str(args.seed + index)]
        return folder, subprocess.run(command, capture_output=True, text=True)

    jobs = [(kernel[0], index, shape) for kernel in kernels for index, shape in enumerate(shapes)]
    passes = {kernel[0]: kernel[1:] for kernel in kernels}
    rows, mismatches, skipped_gpu, done = [], 0, None, set()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for (kernel_id, index, shape), (folder, run) in zip(jobs, pool.map(run_kernel, jobs)):
            pass_name, dtype, _layout, where = passes[kernel_id]
            if kernel_id not in done:  # progress: one line per kernel, as its first run comes back
                done.add(kernel_id)
                print(f"torch_crosscheck: {kernel_id} ({len(done)} of {len(kernels)})", file=sys.stderr, flush=True)
            if "unsupported:" in run.stdout:
                continue
            if where == "gpu" and "no CUDA device" in run.stderr:
                skipped_gpu = run.stderr.strip()
                continue
            if run.returncode not in (0, 1):  # 1: our own check failed, which PyTorch may confirm
                rows.append((kernel_id, shape, "runner error", run.stderr.strip() or run.stdout.strip()))
                mismatches += 1
                continue
            load = lambda name: np.load(os.path.join(folder, f"{name}.npy"))
            inputs = {"fprop": ("x", "w"), "dgrad": ("dy", "w"), "wgrad": ("x", "dy")}[pass_name]
            output = {"fprop": "y", "dgrad": "dx", "wgrad": "dw"}[pass_name]
            ours = load(output).astype(np.float64)
            for label, theirs in torch_answer(torch, pass_name, shape, {n: load(n) for n in inputs}).items():
                theirs = theirs.numpy()
                if ours.shape != theirs.shape:
                    rows.append((kernel_id, shape, label, f"shape {ours.shape} != PyTorch's {theirs.shape} MISMATCH"))
                    mismatches += 1
                    continue
                scale = max(np.abs(theirs).max(), 1e-30)  # the tutorial's tolerances, on unit-sized outputs
                atol, rtol = (5e-3, 3e-3) if dtype == "f16" else (1e-5, 1e-5)
                error = np.abs(ours - theirs) / scale
                ok = bool(np.all(error <= atol + rtol * np.abs(theirs) / scale))  # NaN compares false: fails
                mismatches += not ok
                rows.append((kernel_id, shape, label, f"max err {error.max():.2e} (of max |out|) {'ok' if ok else 'MISMATCH'}"))
    if skipped_gpu and not rows:
        print(f"skip: {skipped_gpu}")
        return 77
    if skipped_gpu:
        print(f"torch_crosscheck: GPU kernels not compared: {skipped_gpu}")
    print(f"{'kernel':<6} {'problem (n c h w k r s stride pad dil groups)':<58} {'output':<22} result")
    for kernel_id, shape, label, result in rows:
        print(f"{kernel_id:<6} {str(shape):<58} {label:<22} {result}")
    summary = f"{len(rows)} comparisons, {mismatches} mismatches (PyTorch {torch.__version__})"
    print(f"torch_crosscheck: {summary}")
    if args.report:
        write_report(args.report, rows, summary, torch)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
