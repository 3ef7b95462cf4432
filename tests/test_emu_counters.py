"""The emulator's counters: their definitions on access patterns whose counts are known by hand, then
what the chapters claim about their kernels, checked against the counts.

Definitions (Nsight Compute's; emu/README.md, "Counters"): a global request is one warp's load or store
instruction, and it touches the distinct 32-byte sectors its threads' bytes fall in; a shared request is
served in wavefronts, one word from each of the 32 four-byte banks per wavefront (threads reading the same
word share it), 8-byte accesses in two half-warp phases and 16-byte ones in four quarter-warp phases (a
load whose lanes t and t^1, or t and t^2, share addresses in phases of twice the lanes).

Run as: test_emu_counters.py PATH_TO_PTXRUN PATH_TO_CONV WORK_DIR
"""
import os
import re
import subprocess
import sys

import numpy as np

ptxrun, conv, work = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(work, exist_ok=True)
failures = []

# One kernel per access pattern: each thread computes an element index from %tid.x (index = tid * stride
# + offset, in elements of the access's size), then loads from global or shared memory.
PTX = """
.version 9.0
.target sm_90
.address_size 64
.shared .align 16 .b8 tile[8192];

.visible .entry global_f32(.param .u64 p, .param .u32 stride)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .f32 %f<2>;
  ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [stride];
  mov.u32 %r2, %tid.x; mul.lo.s32 %r3, %r2, %r1;
  mul.wide.u32 %rd2, %r3, 4; add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f1, [%rd3];
  st.global.f32 [%rd3], %f1;
  ret;
}

.visible .entry shared_f32(.param .u64 p, .param .u32 stride)
{
  .reg .b32 %r<6>; .reg .f32 %f<2>;
  ld.param.u32 %r1, [stride];
  mov.u32 %r2, %tid.x; mul.lo.s32 %r3, %r2, %r1; shl.b32 %r4, %r3, 2;
  mov.u32 %r5, tile; add.s32 %r4, %r4, %r5;
  ld.shared.f32 %f1, [%r4];
  ret;
}

.visible .entry shared_v4(.param .u64 p, .param .u32 stride)
{
  .reg .b32 %r<6>; .reg .f32 %f<5>;
  ld.param.u32 %r1, [stride];
  mov.u32 %r2, %tid.x; mul.lo.s32 %r3, %r2, %r1; shl.b32 %r4, %r3, 4;
  mov.u32 %r5, tile; add.s32 %r4, %r4, %r5;
  ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%r4];
  ret;
}
"""


def counts(kernel, stride):
    ptx = os.path.join(work, "counters.ptx")
    with open(ptx, "w") as f:
        f.write(PTX)
    data = os.path.join(work, "data.npy")
    np.save(data, np.zeros(32 * 64, dtype=np.float32))
    # only the addresses matter here: the shared-memory patterns read a tile nobody wrote (initcheck), and
    # at stride 0 every thread stores to one word of global memory, a race on purpose (racecheck)
    run = subprocess.run([ptxrun, ptx, kernel, "--grid", "1", "--block", "32", "--counters",
                          f"inout:{data}:{os.path.join(work, 'out.npy')}", f"u32:{stride}"],
                         capture_output=True, text=True, env=dict(os.environ, EMU_INITCHECK="0", EMU_RACECHECK="0"))
    if run.returncode != 0:
        failures.append(f"{kernel} stride {stride}: ptxrun failed: {run.stderr.strip()}")
        return ""
    return run.stdout


def number(text, pattern):
    found = re.search(pattern, text)
    return float(found.group(1)) if found else None


def expect(label, value, wanted):
    ok = value is not None and abs(value - wanted) < 1e-9
    print(f"{'PASS' if ok else 'FAIL'} {label}: {value} (expected {wanted})")
    if not ok:
        failures.append(f"{label}: {value}, expected {wanted}")


# global: 32 consecutive floats = 128 bytes = 4 sectors; every 8th float: one sector per thread
for stride, sectors in ((1, 4), (2, 8), (8, 32), (0, 1)):
    out = counts("global_f32", stride)
    expect(f"global f32 loads, stride {stride}: sectors per request",
           number(out, r"global loads\s+\d+ requests, \d+ sectors: ([\d.]+)"), sectors)
# the instruction mix: global_f32's nine instructions, each counted in its class (two ld.param; mov, two
# mul and add.s64 are integer; ld.global and st.global; ret)
by_class = re.search(r"by class\s+(.*)", counts("global_f32", 1))
mix = {name.strip(): float(share) for name, share in re.findall(r"([a-z/ ]+?) ([\d.]+)%", by_class.group(1) if by_class else "")}
for name, share in (("integer", 44.4), ("control", 11.1), ("global memory", 22.2), ("param/local", 22.2)):
    expect(f"global_f32's instructions by class: {name} %", mix.get(name), share)
expect("global_f32's instructions by class: how many classes", float(len(mix)), 4.0)
# shared f32: stride 1 -> 1 wavefront; stride 2 -> 2-way conflict; stride 32 -> all in bank 0: 32;
# stride 0 -> every thread the same word: a broadcast, 1
for stride, wavefronts in ((1, 1), (2, 2), (32, 32), (0, 1), (33, 1)):
    out = counts("shared_f32", stride)
    expect(f"shared f32 loads, stride {stride} words: wavefronts",
           number(out, r"shared loads\s+\d+ requests, (\d+) wavefronts"), wavefronts)
# shared 16-byte loads: four quarter-warp phases of 8 threads x 16 bytes = 128 bytes each: 4 wavefronts at
# best; at a stride of 2 (32 bytes) the 8 threads of a phase cover 256 bytes: 2 per phase, 8 in all
for stride, wavefronts in ((1, 4), (2, 8), (8, 32)):
    out = counts("shared_v4", stride)
    expect(f"shared 16-byte loads, stride {stride} x 16 bytes: wavefronts",
           number(out, r"shared loads\s+\d+ requests, (\d+) wavefronts"), wavefronts)


def kernel_counts(kernel_id, layer=("--n", "1", "--c", "64", "--h", "14", "--w", "14", "--k", "64", "--r", "3",
                                    "--s", "3", "--pad", "1")):
    run = subprocess.run([conv, "run", kernel_id, *layer, "--emulate", "--counters", "--no-verify"],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        failures.append(f"{kernel_id}: conv failed: {run.stdout.strip()} {run.stderr.strip()}")
    return run.stdout


# Chapter 02: 02b's threads write consecutive outputs (q innermost): 4 sectors per 32 fp32 stores, the
# ideal; 02a's write K-strided ones, a sector each.
expect("02b global stores: sectors per request (coalesced)",
       number(kernel_counts("02b"), r"global stores\s+\d+ requests, \d+ sectors: ([\d.]+)"), 4.0)
expect("02a global stores: sectors per request (one per thread)",
       number(kernel_counts("02a"), r"global stores\s+\d+ requests, \d+ sectors: ([\d.]+)"), 32.0)
# Chapter 05: ldmatrix reads and the tile stores have no bank conflicts, with padded rows (05b), swizzled
# rows and 2-byte stores (05c), swizzled rows and 16-byte stores (05d), and in the steps whose cp.async
# copies and staged output tile use shared memory too: plain (05h) and with the fused epilogue (05i)
for kernel_id in ("05b", "05c", "05d", "05h", "05i"):
    out = kernel_counts(kernel_id)
    expect(f"{kernel_id} shared-load bank conflicts (ldmatrix from swizzled tiles)",
           number(out, r"shared loads .* (\d+) bank conflicts"), 0)
    expect(f"{kernel_id} shared-store bank conflicts (swizzled stores)",
           number(out, r"shared stores .* (\d+) bank conflicts"), 0)

for failure in failures:
    print("FAIL", failure)
print(f"test_emu_counters: {len(failures)} failures")
sys.exit(1 if failures else 0)
