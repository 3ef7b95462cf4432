"""gpu suite: kernels that promise bitwise reproducible results keep the promise.

Chapter 07's wgrad adds split-K partial sums in a fixed order, so the same inputs must give the same
bits on every run. This runs each wgrad kernel twice on the same seeded inputs (the runner's
`--save-npy`) and compares the outputs byte for byte; it also reruns each on a second shape with a long
reduction, where an unordered (atomic) reduction would almost surely differ.
Run as: test_ch07_determinism.py PATH_TO_CONV TMP_DIR; without a GPU the runs go to the emulator, and where
the emulator is refused (CONV_EMULATE=never) it exits 77 (skip).
"""
import os
import subprocess
import sys

conv, tmp = sys.argv[1], sys.argv[2]
listing = subprocess.run([conv, "list"], capture_output=True, text=True, check=True).stdout.splitlines()[1:]
kernels = [line.split()[0] for line in listing if line.split()[1] == "wgrad" and line.split()[4] == "gpu"]
problems = [["--layer", "resnet50/res2_3x3", "--n", "2"], ["--layer", "resnet50/conv1", "--n", "4"]]

failures, compared = [], 0
for kernel in kernels:
    for index, problem in enumerate(problems):
        outputs = []
        for attempt in range(2):
            folder = os.path.join(tmp, f"determinism_{kernel}_{index}_{attempt}")
            run = subprocess.run([conv, "run", kernel, *problem, "--reps", "3", "--warmup", "1", "--no-cudnn",
                                  "--save-npy", folder], capture_output=True, text=True)
            if run.returncode != 0 and "no CUDA device" in run.stderr:  # --gpu, or CONV_EMULATE=never
                print(f"skip: {run.stderr.strip()}")
                sys.exit(77)
            if "unsupported:" in run.stdout:
                break
            if run.returncode != 0:
                failures.append(f"{kernel} {' '.join(problem)}: {run.stdout.strip()} {run.stderr.strip()}")
                break
            with open(os.path.join(folder, "dw.npy"), "rb") as f:
                outputs.append(f.read())
        if len(outputs) == 2:
            compared += 1
            if outputs[0] != outputs[1]:
                failures.append(f"{kernel} {' '.join(problem)}: two runs on the same inputs differ")
for failure in failures:
    print("FAIL", failure)
print(f"test_ch07_determinism: {compared} kernel/problem pairs compared, {len(failures)} failures")
sys.exit(1 if failures or not compared else 0)
