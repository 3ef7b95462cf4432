"""The GPU programs of bench/validation/ (the timing model's measured side, which bench/gpu_session.sh validation
runs on a GPU) build with the toolkit, and behave as they must where they run:

1. each compiles without a warning (sgemm_time, latency and shared_wavefronts for sm_90, throughput for sm_90a,
   as on an H100);
2. each refuses words it does not take (sgemm_time also a size that is no multiple of 128) with its usage line
   and exit 2, before it touches a GPU;
3. without a GPU, each stops at its first CUDA call with one line naming the program, the call and CUDA's
   error, and exit 1 (never a crash, never a partial CSV);
4. where a GPU answers, sgemm_time on 256^3 prints its header and one row per kernel and cuBLAS, every kernel
   checked against cuBLAS ("pass"), latency its five chases, throughput and shared_wavefronts every row, each a
   CSV line.

Run as: test_validation_programs.py NVCC SOURCE_ROOT OUT_DIR
"""
import csv
import io
import os
import subprocess
import sys

nvcc, root, out = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
failures = []


def claim(text, holds):
    print(f"{'PASS' if holds else 'FAIL'} {text}")
    if not holds:
        failures.append(text)


def build(name, arch, libraries=()):
    program = os.path.join(out, name)
    done = subprocess.run([nvcc, "-O3", f"-arch={arch}", "-I", os.path.join(root, "common", "kernel"),
                           os.path.join(root, "bench", "validation", name + ".cu"),
                           os.path.join(root, "common", "kernel", "check.c"), *libraries, "-o", program],
                          capture_output=True, text=True)
    said = (done.stdout + done.stderr).strip()
    claim(f"{name}.cu compiles for {arch} without a warning ({said[-300:]})", done.returncode == 0 and not said)
    return program if done.returncode == 0 else None


def run(program, *args):
    done = subprocess.run([program, *args], capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr.strip()


programs = {"sgemm_time": build("sgemm_time", "sm_90", ["-lcublas"]), "latency": build("latency", "sm_90"),
            "throughput": build("throughput", "sm_90a"), "shared_wavefronts": build("shared_wavefronts", "sm_90")}

for name, bads in (("sgemm_time", (["100"], ["256", "--twice"], ["256", "--once", "more"])),
                   ("throughput", (["--fast"], ["--issue-rates", "more"])),
                   ("shared_wavefronts", (["--counts"], ["--count", "more"]))):
    for bad in bads if programs[name] else ():
        code, stdout, stderr = run(programs[name], *bad)
        claim(f"{name} {' '.join(bad)}: usage, exit 2, nothing on stdout (exit {code}: {stderr[-200:]})",
              code == 2 and not stdout and stderr.startswith(f"{name}: usage:") and "\n" not in stderr)

expected = {"sgemm_time": ["256"], "latency": [], "throughput": [], "shared_wavefronts": []}
for name, program in programs.items():
    if not program:
        continue
    code, stdout, stderr = run(program, *expected[name])
    if code != 0:  # no GPU here: one line naming the failed call, and no CSV
        claim(f"{name} without a GPU: one line naming the program and CUDA's error, exit 1, no rows "
              f"(exit {code}: {stderr[-300:]!r}, stdout {stdout[:80]!r})",
              code == 1 and "\n" not in stderr and stderr.startswith(f"{name}: ") and "cuda" in stderr.lower()
              and stdout.count("\n") <= 1)
        continue
    rows = list(csv.DictReader(io.StringIO(stdout)))
    if name == "sgemm_time":
        claim(f"sgemm_time 256 on a GPU: 6 kernels checked against cuBLAS and cuBLAS's row "
              f"({[(r['name'], r['status']) for r in rows]})",
              len(rows) == 7 and all(r["status"] == "pass" for r in rows[:6]) and rows[6]["status"] == "reference")
    elif name == "latency":
        claim(f"latency on a GPU: its five chases, each clocks per link > 0 ({rows})",
              len(rows) == 5 and all(float(r["clocks_per_link"]) > 0 for r in rows))
    elif name == "throughput":
        claim(f"throughput on a GPU: every row a positive value ({len(rows)} rows)",
              len(rows) > 30 and all(float(r["value"]) > 0 for r in rows))
    else:
        clocks = [float(list(r.values())[4]) for r in rows]
        claim(f"shared_wavefronts on a GPU: 6 kernels at each pattern, every row at least one clock an access "
              f"({len(rows)} rows)", len(rows) > 60 and len(rows) % 6 == 0 and all(c >= 1 for c in clocks))

print(f"test_validation_programs: {len(failures)} failed" if failures else "test_validation_programs: all passed")
sys.exit(1 if failures else 0)
