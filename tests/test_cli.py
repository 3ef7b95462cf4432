"""The runner's command line: every kind of bad input gets one clear line on stderr and a non-zero
exit, never a crash; good input works. Run as: test_cli.py PATH_TO_CONV TMP_DIR"""
import csv
import json
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_check import CliCheck  # noqa: E402

conv, tmp = sys.argv[1], sys.argv[2]
cli = CliCheck(conv)
run, expect_error, failures = cli.run, cli.expect_error, cli.failures
# chapter 05's kernel ids, as the registry lists them (an ambiguous prefix names them all)
ch05_ids = [k["id"] for k in json.loads(subprocess.run([conv, "list", "--json"], capture_output=True, text=True,
                                                         check=True).stdout) if k["id"].startswith("05")]
assert len(ch05_ids) > 1, "conv list --json lists no chapter 05 steps"




def write_npy(path, descr, shape, payload):
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    total = (10 + len(header) + 1 + 63) // 64 * 64
    header = header + " " * (total - 10 - len(header) - 1) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload)


small = ["--n", "1", "--c", "2", "--h", "5", "--w", "5", "--k", "2", "--r", "3", "--s", "3"]

# usage errors
expect_error([], "no command given")
expect_error(["frobnicate"], "unknown command 'frobnicate'")
expect_error(["run"], "'run' needs a kernel id")
expect_error(["run", "--n", "3"], "'run' needs a kernel id")
expect_error(["run", "99z"], "unknown kernel '99z'")
expect_error(["run", "05"], " ".join(ch05_ids) + " (conv check 05 checks them all)")
expect_error(["run", "01", "--n"], "--n needs a value")
expect_error(["run", "01", "--layer"], "--layer needs a value")
expect_error(["run", "01", "--n", "abc"], "--n needs an integer, got 'abc'")
expect_error(["run", "01", "--n", "3x"], "--n needs an integer, got '3x'")
expect_error(["run", "01", "--n", ""], "--n needs an integer")
expect_error(["run", "01", "--n", "99999999999"], "--n needs an integer")
expect_error(["run", "01", "--n", "0"], "--n must be at least 1")
expect_error(["run", "01", "--pad", "-1"], "--pad must be at least 0")
expect_error(["run", "01", "--seed", "-5"], "--seed needs a non-negative integer")
expect_error(["run", "01", "--bogus", "3"], "unknown option '--bogus'")
expect_error(["run", "01", "--bogus"], "unknown option '--bogus'")
expect_error(["check", "zz"], "no kernel id starts with 'zz'")
expect_error(["bench", "--suite", "nope"], "unknown suite 'nope'")
expect_error(["check", "09", "--suite", "nope"], "unknown suite 'nope'")
# impossible and unknown problems
expect_error(["run", "01", *small, "--h", "1", "--r", "5"], "impossible problem: the output would be empty")
expect_error(["run", "01", *small, "--groups", "3"], "groups (3) must divide both c (2) and k (2)")
expect_error(["run", "01", "--layer", "resnet50/nope"], "unknown layer 'resnet50/nope'")
expect_error(["run", "01", "--n", "100000", "--c", "100000"], "over the 2^31-1 that 32-bit index math allows")
# files
expect_error(["run", "01", *small, "--load-npy", os.path.join(tmp, "missing")], "cannot open", code=2)
os.makedirs(os.path.join(tmp, "bad_npy"), exist_ok=True)
write_npy(os.path.join(tmp, "bad_npy", "x.npy"), "<i4", "(1, 2, 5, 5)", bytes(200))
expect_error(["run", "01", *small, "--load-npy", os.path.join(tmp, "bad_npy")], "unsupported dtype", code=2)
write_npy(os.path.join(tmp, "bad_npy", "x.npy"), "<f4", "(1, 3, 5, 5)", bytes(300))
expect_error(["run", "01", *small, "--load-npy", os.path.join(tmp, "bad_npy")],
             "shape (1, 3, 5, 5) does not match the problem: expected (1, 2, 5, 5)", code=2)
with open(os.path.join(tmp, "bad_npy", "x.npy"), "wb") as f:
    f.write(b"garbage")
expect_error(["run", "01", *small, "--load-npy", os.path.join(tmp, "bad_npy")], "bad magic", code=2)
expect_error(["run", "01", *small, "--save-npy", "/proc/forbidden/dir"], "cannot create", code=1)

# good input
result = run("--help")
if result.returncode != 0 or not all(w in result.stdout for w in ("list", "run ID", "check PREFIX", "bench", "--layer", "--load-npy")):
    failures.append("--help is incomplete")
result = run("list")
if result.returncode != 0 or "01" not in result.stdout or "seven nested loops" not in result.stdout:
    failures.append(f"list: {result.stdout!r}")
result = run("layers")
if result.returncode != 0 or "resnet50/res2_3x3" not in result.stdout or "tutorial/ck_dgrad" not in result.stdout:
    failures.append(f"layers: {result.stdout!r}")
result = run("run", "01", *small, "--pad", "1", "--seed", "7", "--reps", "3")
if result.returncode != 0 or " pass" not in result.stdout or "seed 7" not in result.stdout or "ms" not in result.stdout:
    failures.append(f"run 01: exit {result.returncode}: {result.stdout!r} {result.stderr!r}")
# --pad, --stride and --dil set both directions; --pad-h and the like one (the problem line says which)
result = run("run", "01", *small, "--pad", "2", "--stride", "2", "--dil", "2", "--pad-w", "1", "--reps", "1")
if result.returncode != 0 or " s2 p2x1 d2 " not in result.stdout:
    failures.append(f"run 01 --pad 2 --stride 2 --dil 2 --pad-w 1: the problem line should read s2 p2x1 d2: "
                    f"{result.stdout!r} {result.stderr!r}")
result = run("run", "01", "--layer", "tutorial/first_graph", "--n", "1", "--no-verify", "--reps", "3")
if result.returncode != 0 or "not verified" not in result.stdout:
    failures.append(f"run 01 --no-verify: {result.stdout!r}")

# a GPU kernel without a GPU: the emulator answers by itself, saying so in one line; --gpu refuses it
expect_error(["run", "02b", *small, "--emulate", "--gpu"], "--emulate and --gpu ask for different devices", code=2)
os.environ["CONV_EMULATE"] = "sometimes"
expect_error(["run", "02b", *small], "CONV_EMULATE is 'sometimes': it takes auto or never", code=2)
del os.environ["CONV_EMULATE"]
gpu = run("check", "02", "--random", "0", "--gpu")
if gpu.returncode == 77:
    if not gpu.stdout.startswith("skip:") or "no CUDA device" not in gpu.stdout:
        failures.append(f"check 02 --gpu skip line: {gpu.stdout!r}")
    expect_error(["run", "02b", *small, "--gpu"], "runs on the GPU: no CUDA device", code=1)
    os.environ["CONV_EMULATE"] = "never"
    expect_error(["run", "02b", *small], "runs on the GPU: no CUDA device", code=1)
    del os.environ["CONV_EMULATE"]
    result = run("run", "02b", *small)
    notice = [line for line in result.stderr.splitlines() if "running on the PTX emulator instead" in line]
    if result.returncode != 0 or " pass" not in result.stdout or "emulated, not timed" not in result.stdout \
            or len(notice) != 1 or not notice[0].startswith("conv: no CUDA device"):
        failures.append(f"run 02b without a GPU: exit {result.returncode}: {result.stdout!r} {result.stderr!r}")
    result = run("run", "02b")  # the default problem: at batch 1 on the emulator, said
    if result.returncode != 0 or " n1 c64 56x56 k32 " not in result.stdout or "at batch 1 (--n 8" not in result.stderr:
        failures.append(f"run 02b (default problem) without a GPU: {result.stdout!r} {result.stderr!r}")

# --emulate: the same binary on the PTX emulator (emu/); verified, never timed
result = run("run", "02b", *small, "--pad", "1", "--emulate")
if result.returncode != 0 or " pass" not in result.stdout or "emulated, not timed" not in result.stdout \
        or " ms " in result.stdout:
    failures.append(f"run 02b --emulate: exit {result.returncode}: {result.stdout!r} {result.stderr!r}")
# --model: the emulator's timing model, one line under its label after the result (time, TFLOP/s, share of
# the peak, the warp states that held it most); with --counters the whole breakdown too; a GPU it has no
# file for is refused
MODELED_LINE = re.compile(r"^modeled on NVIDIA H100 SXM5 80GB \(a model, not a measurement\): [\d.]+ us, "
                          r"[\d.]+ TFLOP/s, \d+% of its fp32 peak; its warps waited most on \w+ [\d.]+", re.M)
result = run("run", "02b", *small, "--emulate", "--model", "h100")
if result.returncode != 0 or " pass" not in result.stdout or not MODELED_LINE.search(result.stdout) or \
        "warp states" in result.stdout:
    failures.append(f"run 02b --emulate --model h100: exit {result.returncode}: {result.stdout!r} {result.stderr!r}")
result = run("run", "02b", *small, "--emulate", "--model", "h100", "--counters")
if result.returncode != 0 or not MODELED_LINE.search(result.stdout) or "warp states" not in result.stdout or \
        "issued" not in result.stdout:
    failures.append(f"run 02b --emulate --model h100 --counters: exit {result.returncode}: {result.stdout!r}")
expect_error(["run", "02b", *small, "--emulate", "--model", "h200x"], "--model 'h200x': no such GPU file", code=2)
expect_error(["run", "02b", *small, "--emulate", "--model", "../h100"], "--model '../h100': no such GPU file", code=2)
result = run("run", "04x", *small, "--emulate")
if result.returncode != 2 or "unsupported: 04x calls cuBLAS" not in result.stdout:
    failures.append(f"run 04x --emulate: exit {result.returncode}: {result.stdout!r}")
result = run("check", "04x", "--random", "0", "--emulate")
if result.returncode != 77 or "04x  n/a: calls cuBLAS" not in result.stdout:
    failures.append(f"check 04x --emulate: exit {result.returncode}: {result.stdout!r}")
# a kernel whose PTX the emulator cannot find (or run) is n/a, never passed: here no PTX at all
os.makedirs(os.path.join(tmp, "no_ptx"), exist_ok=True)
os.environ["EMU_PTX_PATH"] = os.path.join(tmp, "no_ptx")
result = run("check", "08", "--random", "0", "--emulate")
del os.environ["EMU_PTX_PATH"]
if result.returncode != 77 or "08a  n/a on the emulator" not in result.stdout or "no PTX defines it" \
        not in result.stdout:
    failures.append(f"check 08 --emulate without PTX: exit {result.returncode}: {result.stdout!r}")
emulator_csv = os.path.join(tmp, "emulator.csv")
if os.path.exists(emulator_csv):
    os.remove(emulator_csv)
result = run("bench", "--emulate", "--kernels", "02b,04x", "--n", "1", "--csv", emulator_csv)
rows = list(csv.DictReader(open(emulator_csv))) if os.path.exists(emulator_csv) else []
statuses = {row["kernel"]: row["status"] for row in rows}
if result.returncode != 0 or statuses != {"02b": "counted", "04x": "unsupported"} or "time" in "".join(rows[0]):
    failures.append(f"bench --emulate: exit {result.returncode}, rows {statuses}: {result.stdout!r}")
elif int(rows[0]["warp_inst"]) <= 0 or int(rows[0]["emulated_blocks"]) > int(rows[0]["grid_blocks"]):
    failures.append(f"bench --emulate: implausible counts {rows[0]}")
for args, words in ((["bench", "--emulate", "--layer", "no/such", "--csv", emulator_csv], "unknown layer"),
                    (["bench", "--sample", "4", "--gpu"], "needs the emulator"),
                    (["bench", "--emulate", "--sample", "-1"], "at least 0")):
    result = run(*args)
    if result.returncode != 2 or words not in result.stderr:
        failures.append(f"{' '.join(args)}: exit {result.returncode}, want 2 and '{words}': {result.stderr!r}")
if "--emulate" not in run("--help").stdout or "--gpu" not in run("--help").stdout:
    failures.append("--help does not mention --emulate and --gpu")

sys.exit(cli.finish("test_cli"))
