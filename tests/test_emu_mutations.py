"""The emulator catches bugs in the real chapter 08 kernels, not only in small test kernels.

Each case plants one bug in the PTX the build compiled from the kernel's file in chapters/08_hopper/ (a
copy of the build's PTX folder, one instruction changed or removed), points the emulator at it (EMU_PTX_PATH) and runs
`conv check 08a|08b --emulate` on the fixed shapes. The unchanged PTX must pass; every mutant must be caught:
a check that fails, or the emulator stopping the run (a deadlock, an access it refuses). A mutant that
passes is a bug the emulator would let through, and fails this test.

Run as: test_emu_mutations.py PATH_TO_CONV PTX_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

conv, ptx_dir, work = sys.argv[1], sys.argv[2], sys.argv[3]

# 128-byte swizzle in a wgmma shared-memory descriptor: bits 63..62 = 01 (PTX ISA, "Matrix Descriptor
# Format"), with SBO = 1024 bytes and LBO = 16. The mutant says 64-byte swizzle (10) for the same tiles.
SWIZZLE_128B = (1 << 62) | (64 << 32) | (1 << 16)
SWIZZLE_64B = (2 << 62) | (64 << 32) | (1 << 16)

MUTANTS = [
    # (name, kernel, pattern, replacement): the bug, as a change to the PTX text
    ("mbarrier wait on the wrong parity", "08b",
     r"(mbarrier\.try_wait\.parity\.shared::cta\.b64 done, \[%r\d+\]), %r\d+;", r"\1, 0;"),
    ("TMA bytes never expected (no mbarrier.expect_tx)", "08b",
     r"\n\s*mbarrier\.expect_tx\.[^\n]*;", "\n"),
    ("no thread ever arrives on an mbarrier", "08b",
     r"\n\s*mbarrier\.arrive\.shared::cta\.b64 _, \[%r\d+\];", "\n"),
    ("accumulators read before the last wgmma group is waited for", "08a",
     r"wgmma\.wait_group\.sync\.aligned 0;", "wgmma.wait_group.sync.aligned 1;"),
    ("accumulators read before the last wgmma group is waited for", "08b",
     r"wgmma\.wait_group\.sync\.aligned 0;", "wgmma.wait_group.sync.aligned 1;"),
    ("wgmma descriptor with the wrong swizzle", "08a", str(SWIZZLE_128B), str(SWIZZLE_64B)),
    ("wgmma descriptor with the wrong swizzle", "08b", str(SWIZZLE_128B), str(SWIZZLE_64B)),
    ("cp.async gather never waited for", "08a", r"cp\.async\.wait_group \d+;", "membar.cta;"),
    # wgmma reads shared memory through the async proxy; the gathered tiles were written through the
    # generic proxy (cp.async), so without the proxy fence racecheck reports wgmma's read.
    ("generic-proxy writes not fenced before wgmma reads them", "08a", r"fence\.proxy\.async\.shared::cta;", "membar.cta;"),
    ("generic-proxy writes not fenced before wgmma reads them", "08b", r"fence\.proxy\.async\.shared::cta;", "membar.cta;"),
    # The producer goes on whether or not the consumers released the stage (it ignores its try_wait's
    # answer): it overwrites tiles still being read. Seen when copies may land at once and a try_wait may
    # give up, which EMU_INTERLEAVE allows (seeded, so this run is the same every time).
    ("producer overwrites a stage the consumers still read", "08b+interleave",
     r"\n@!done bra MBAR_WAIT_0;", "\n"),
]


def check(kernel, folder):
    """kernel is an id, or an id + "+interleave" to run with warps and copies in a seeded random order."""
    env = dict(os.environ, EMU_PTX_PATH=folder)
    if kernel.endswith("+interleave"):
        kernel, env["EMU_INTERLEAVE"] = kernel[: -len("+interleave")], "1"
    return subprocess.run([conv, "check", kernel, "--random", "0", "--emulate"], capture_output=True, text=True,
                          env=env, timeout=600)


# Each kernel's PTX file (emu/meson.build: one per CUDA source, named for it)
PTX_OF = {"08a": "08a_wgmma.ptx", "08b": "08b_warp_specialized.ptx"}


def main():
    failures = []
    control = os.path.join(work, "mutants", "unchanged")
    os.makedirs(control, exist_ok=True)
    for name in os.listdir(ptx_dir):
        if name.endswith(".ptx"):
            shutil.copy(os.path.join(ptx_dir, name), control)
    for kernel in ("08a", "08b", "08b+interleave"):
        run = check(kernel, control)
        ok = run.returncode == 0 and " pass, 0 fail" in run.stdout
        print(f"{'PASS' if ok else 'FAIL'} unchanged PTX, {kernel}: exit {run.returncode}")
        if not ok:
            failures.append(f"the unchanged PTX does not pass {kernel}: {run.stdout.strip()} {run.stderr.strip()}")
    for index, (name, kernel, pattern, replacement) in enumerate(MUTANTS):
        ptx_name = PTX_OF[kernel.split("+")[0]]
        with open(os.path.join(ptx_dir, ptx_name)) as f:
            mutated, count = re.subn(pattern, replacement, f.read())
        if count == 0:
            failures.append(f"{name} ({kernel}): the pattern {pattern!r} is not in {ptx_name} any more")
            print(f"FAIL {name} ({kernel}): nothing to mutate")
            continue
        folder = os.path.join(work, "mutants", str(index))
        shutil.copytree(control, folder, dirs_exist_ok=True)
        with open(os.path.join(folder, ptx_name), "w") as f:
            f.write(mutated)
        run = check(kernel, folder)
        emulator_line = next((line for line in run.stderr.splitlines() if line.startswith("emu: ")), "")
        caught = run.returncode != 0 and (" fail" in run.stdout and "FAIL" in run.stdout or emulator_line)
        found = re.search(r"thread \(\d+,\d+,\d+\): (.*)", emulator_line)
        how = found.group(1)[:110] if found else "the check failed"
        print(f"{'PASS' if caught else 'FAIL'} {name} ({kernel}, {count} change{'s' if count > 1 else ''}): "
              f"{'caught: ' + how if caught else 'NOT caught'}")
        if not caught:
            failures.append(f"{name} ({kernel}) was not caught: exit {run.returncode}: {run.stdout.strip()}")
    for failure in failures:
        print("FAIL", failure)
    print(f"emu_mutations: {len(MUTANTS)} mutants, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
