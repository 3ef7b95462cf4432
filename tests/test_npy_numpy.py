"""Our .npy files against NumPy itself, end to end through the runner: the saved inputs, output and
fp64 reference load in NumPy and agree with a NumPy convolution; inputs written by NumPy (float64 and
float16) load in the runner and give NumPy's answer. Run as: test_npy_numpy.py PATH_TO_CONV TMP_DIR"""
import os
import subprocess
import sys

import numpy as np

conv, tmp = sys.argv[1], sys.argv[2]
failures = []


def conv2d(x, w, stride, pad, dil, groups):
    """fprop, in NumPy: one strided slice of the padded input per filter tap."""
    n, c, h, wd = x.shape
    k, c_per_group, r_size, s_size = w.shape
    p = (h + 2 * pad[0] - dil[0] * (r_size - 1) - 1) // stride[0] + 1
    q = (wd + 2 * pad[1] - dil[1] * (s_size - 1) - 1) // stride[1] + 1
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    y = np.zeros((n, k, p, q))
    k_per_group = k // groups
    for g in range(groups):
        channels = slice(g * c_per_group, (g + 1) * c_per_group)
        outputs = slice(g * k_per_group, (g + 1) * k_per_group)
        for r in range(r_size):
            for s in range(s_size):
                patch = padded[:, channels,
                               r * dil[0]: r * dil[0] + stride[0] * (p - 1) + 1: stride[0],
                               s * dil[1]: s * dil[1] + stride[1] * (q - 1) + 1: stride[1]]
                y[:, outputs] += np.einsum("ncpq,kc->nkpq", patch, w[outputs, :, r, s].astype(np.float64))
    return y


problem = ["--n", "2", "--c", "4", "--h", "9", "--w", "7", "--k", "6", "--r", "3", "--s", "2",
           "--stride-h", "2", "--pad-w", "2", "--pad-h", "1", "--dil-w", "2", "--groups", "2", "--reps", "3"]
geometry = dict(stride=(2, 1), pad=(1, 2), dil=(1, 2), groups=2)

saved = os.path.join(tmp, "saved")
result = subprocess.run([conv, "run", "01", *problem, "--save-npy", saved], capture_output=True, text=True)
if result.returncode != 0:
    failures.append(f"run --save-npy failed: {result.stdout} {result.stderr}")
else:
    x, w, y, y_ref = (np.load(os.path.join(saved, f"{name}.npy")) for name in ("x", "w", "y", "y_ref"))
    expected = conv2d(x, w, **geometry)
    if x.dtype != np.float32 or y_ref.dtype != np.float64 or x.shape != (2, 4, 9, 7) or w.shape != (6, 2, 3, 2):
        failures.append(f"saved dtypes/shapes: {x.dtype} {x.shape} {w.shape} {y_ref.dtype}")
    if y.shape != expected.shape or np.abs(y_ref - expected).max() > 1e-12:
        failures.append(f"fp64 reference disagrees with NumPy: {np.abs(y_ref - expected).max()}")
    if np.abs(y - expected).max() > 1e-5:
        failures.append(f"chapter 01 output disagrees with NumPy: {np.abs(y - expected).max()}")

loaded = os.path.join(tmp, "from_numpy")
os.makedirs(loaded, exist_ok=True)
rng = np.random.default_rng(5)
x = rng.standard_normal((2, 4, 9, 7))                       # float64: converted on load
w = rng.standard_normal((6, 2, 3, 2)).astype(np.float16)    # float16: exact in fp32
np.save(os.path.join(loaded, "x.npy"), x)
np.save(os.path.join(loaded, "w.npy"), w)
out = os.path.join(tmp, "from_numpy_out")
result = subprocess.run([conv, "run", "01", *problem, "--load-npy", loaded, "--save-npy", out],
                        capture_output=True, text=True)
if result.returncode != 0:
    failures.append(f"run --load-npy failed: {result.stdout} {result.stderr}")
else:
    y = np.load(os.path.join(out, "y.npy"))
    expected = conv2d(x.astype(np.float32), w, **geometry)
    error = np.abs(y - expected).max() / np.abs(expected).max()
    if error > 1e-5:
        failures.append(f"output from NumPy's inputs disagrees: relative {error}")

for failure in failures:
    print("FAIL", failure)
print(f"test_npy_numpy: {len(failures)} failures")
sys.exit(1 if failures else 0)
