"""The emulator tests' one way to run a PTX kernel and report a case (tests/test_emu_*.py import it).

    R = Runner(ptxrun, work_dir, ptx_dir)     # ptx files are named relative to ptx_dir; ptxrun None: on the GPU
    R.case("add.s32", check)                  # check() raises Fail (or returns a detail): one PASS/FAIL line
    arg, path = R.out("u32", n)               # ptxrun's argument for an output buffer, and its .npy file
    R.run("int.ptx", "add", grid, block, [R.inp(a), arg, "u32:%d" % n])   # Fail if ptxrun fails
    return R.summary("emu_isa")               # the counts, the failed cases again; 0 or 1 for sys.exit

An input array is written to a numbered .npy file (bfloat16 bits travel as uint16: NumPy has no bfloat16); grid
and block are an int or a tuple of up to three; a case that hangs past its timeout,
or whose check itself breaks, is a FAIL like any other, so that one case cannot hide the rest.

On a GPU (`Runner.on_gpu`, tests/ptxrun_gpu.py) the same cases run on hardware: what `run` launches must
compute what the case expects from the ISA there too. A case that judges the emulator's own report (its
errors, its diagnostics: anything it calls `launch` for) is a SKIP there: a GPU does not give that report.
"""
import glob
import os
import re
import subprocess
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common", "harness"))
from cuda_tools import find_tool  # noqa: E402

RUN_TIMEOUT = 120  # seconds for one ptxrun
INPUT_DTYPES = (np.float16, np.float32, np.float64, np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32,
                np.uint64, np.int64)


class Fail(Exception):
    """A case's expectation not met; str() says how."""


class Skip(Exception):
    """A case that does not apply where it runs; str() says why."""


def dims(value):
    """ptxrun's --grid/--block text for an int or a tuple."""
    return ",".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)


def command_line(doc):
    """What a case file's command line names: (ptxrun, work, gpu) for `PTXRUN WORK` (the emulator) or
    `--gpu WORK` (the GPU through tests/ptxrun_gpu.py; exit 77, a skip, where none answers)."""
    if len(sys.argv) != 3:
        print(doc)
        sys.exit(2)
    work = os.path.abspath(sys.argv[2])
    if sys.argv[1] != "--gpu":
        return os.path.abspath(sys.argv[1]), work, None
    import ptxrun_gpu
    if not ptxrun_gpu.gpu_answers():
        print("skip: no GPU answers (nvidia-smi -L): these cases run on the emulator alone (emu_isa, emu_hopper)")
        sys.exit(77)
    try:
        gpu = ptxrun_gpu.Gpu()
    except ptxrun_gpu.GpuError as e:
        print(f"FAIL  nvidia-smi sees a GPU but the driver does not open it: {e}")
        sys.exit(1)
    print(f"INFO  on {gpu.name}, the PTX compiled by its driver: what the ISA says must hold on hardware too")
    return None, work, gpu


class Runner:
    def __init__(self, ptxrun, work, ptx_dir, gpu=None):
        self.ptxrun, self.ptx_dir, self.gpu = ptxrun, ptx_dir, gpu
        self.work = work
        os.makedirs(work, exist_ok=True)
        self.files = 0
        self.passed, self.failed = [], []

    # ---- reporting
    def report(self, status, name, detail=""):
        """One line: PASS, FAIL, SKIP or INFO, the case and what it found."""
        if status == "PASS":
            self.passed.append(name)
        elif status == "FAIL":
            self.failed.append(name)
        print(f"{status:5} {name}{': ' + detail if detail else ''}", flush=True)

    def case(self, name, check):
        try:
            detail = check()
            self.report("PASS", name, detail if isinstance(detail, str) else "")
        except Skip as e:
            self.report("SKIP", name, str(e))
        except Fail as e:
            self.report("FAIL", name, str(e))
        except subprocess.TimeoutExpired as e:
            self.report("FAIL", name, f"timed out after {e.timeout} s (a hang)")
        except Exception:  # a bug in the check itself must not hide the other cases
            self.report("FAIL", name, "(test error) " + traceback.format_exc().strip().splitlines()[-1])

    def summary(self, title):
        print(f"\n{title}: {len(self.passed)} passed, {len(self.failed)} failed")
        for name in self.failed:
            print(f"  FAILED  {name}")
        return 1 if self.failed else 0

    def assemble_each(self, arch=None):
        """A case per PTX file of ptx_dir: ptxas assembles it (for arch, else its own .target). The files are
        written by hand from the ISA: what ptxas refuses is no valid PTX, whatever the emulator accepts."""
        ptxas = find_tool("ptxas", "PTXAS")
        for path in sorted(glob.glob(os.path.join(self.ptx_dir, "*.ptx"))):
            name = "ptxas_" + os.path.basename(path)
            if not ptxas:
                self.report("SKIP", name, "no ptxas")
                continue

            def check(path=path):
                with open(path) as f:
                    target = arch or re.search(r"^\s*\.target\s+(\w+)", f.read(), re.M).group(1)
                p = subprocess.run([ptxas, "-arch=" + target, path, "-o", os.devnull], capture_output=True, text=True,
                                   timeout=300)
                if p.returncode != 0:
                    raise Fail(" | ".join((p.stdout + p.stderr).strip().splitlines()[-3:]))
                return "assembles for " + target
            self.case(name, check)

    # ---- buffers
    def path(self, tag):
        self.files += 1
        return os.path.join(self.work, f"{self.files:04d}_{tag}.npy")

    def inp(self, array):
        """ptxrun's argument for an input array."""
        array = np.ascontiguousarray(array)
        assert array.dtype in INPUT_DTYPES, array.dtype
        path = self.path("in")
        np.save(path, array)
        return "in:" + path

    def inout(self, array):
        """ptxrun's argument for a buffer read and written, and the .npy file it is written back to."""
        path, written = self.path("io"), self.path("io_out")
        np.save(path, np.ascontiguousarray(array))
        return f"inout:{path}:{written}", written

    def out(self, dtype, count):
        """ptxrun's argument for an output buffer of count elements, and its .npy file."""
        path = self.path("out")
        return f"out:{path}:{dtype}:{count}", path

    # ---- launches
    def launch(self, ptx, kernel, grid, block, args, smem=None, timeout=RUN_TIMEOUT, env=None):
        """ptxrun as it ran (the caller judges the emulator's exit status and report: a SKIP on a GPU)."""
        if self.gpu:
            raise Skip("judges the emulator's own report, which a GPU does not give")
        return self.invoke(ptx, kernel, grid, block, args, smem, timeout, env)

    def invoke(self, ptx, kernel, grid, block, args, smem, timeout, env):
        command = [os.path.join(self.ptx_dir, ptx), kernel, "--grid", dims(grid), "--block", dims(block)]
        if smem is not None:
            command += ["--smem", str(smem)]
        command += list(args)
        if self.gpu:
            if any(arg in ("--counters", "--model") for arg in args):
                raise Skip("reads the emulator's counters or model, which a GPU does not give")
            status, out, err = self.gpu.run(command)
            return subprocess.CompletedProcess(command, status, out, err)
        return subprocess.run([self.ptxrun] + command, capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, **env) if env else None)

    def run(self, ptx, kernel, grid, block, args, smem=None, timeout=RUN_TIMEOUT, env=None):
        """ptxrun that must succeed: Fail with its last lines otherwise."""
        result = self.invoke(ptx, kernel, grid, block, args, smem, timeout, env)
        if result.returncode != 0:
            lines = (result.stdout + result.stderr).strip().splitlines()
            raise Fail(f"ptxrun exited {result.returncode}: {' | '.join(lines[-3:])}")
        return result
