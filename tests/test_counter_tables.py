"""The emulator's counts in the chapters are current and say what the chapters say.

1. Every chapter README's counter table, and every number the text of the READMEs quotes from the
   counts (the markers of bench/prose_numbers.py), is what bench/results/emulator.csv gives
   (bench/tables.py --counters --check): tables and quoted counts are generated, never typed.
2. The CSV describes the code in the tree: each row's source_sha256 is its chapter's digest (its folder
   and every project header it includes) and its emulator_sha256 is emu/'s (the digests the build
   records, common/harness/hash_sources.py). After a kernel
   or the emulator changes, `bash bench/run.sh` on a machine without a GPU writes them again.
3. The claims the chapters make about the machine, checked against the counts of the reference layers:
   02b's stores coalesce (4 sectors per request, the ideal for fp32) where 02a's do not (32); 02c's
   filter in constant memory halves 02b's global load requests (on conv1, whose filter fits); 03b reuses
   what it loads (a tenth of 02b's global traffic or less); every mma.sync step of chapter 05 reads and
   writes shared memory without a bank conflict; 06b does no work on the zeros a stride-2 dgrad would
   multiply (tensor-core FLOPs within 5% of the useful ones); 08a and 08b are bound by the tensor cores;
   09b moves at most 1.3x the minimum bytes and is bound by DRAM.

Run as: test_counter_tables.py SOURCE_ROOT
"""
import os
import subprocess
import sys

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "bench"))
sys.path.insert(0, os.path.join(root, "common", "harness"))
sys.dont_write_bytecode = True
import emulator_csv  # noqa: E402
from hash_sources import code_digest  # noqa: E402

csv_path = os.path.join(root, "bench", "results", "emulator.csv")
failures = []

check = subprocess.run([sys.executable, os.path.join(root, "bench", "tables.py"), "--counters", csv_path,
                        "--readmes", root, "--check"], capture_output=True, text=True)
if check.returncode != 0:
    failures.append(f"counter tables: {check.stderr.strip() or check.stdout.strip()}")

rows = emulator_csv.load(csv_path)
chapters = {name[:2]: os.path.join(root, "chapters", name) for name in os.listdir(os.path.join(root, "chapters"))}
emulator_digest = code_digest(os.path.join(root, "emu"), root)
for r in rows:
    if r["source_sha256"] != code_digest(chapters[r["chapter"]], root):
        failures.append(f"{r['kernel']} {r['layer']}: counted from other sources than chapter {r['chapter']}'s "
                        f"(rerun bash bench/run.sh without a GPU)")
    if r["emulator_sha256"] != emulator_digest:
        failures.append(f"{r['kernel']} {r['layer']}: counted by another version of emu/ (rerun bash bench/run.sh "
                        f"without a GPU)")

counted = {(r["kernel"], r["layer"]): r for r in rows if r["status"] == "counted"}
h100 = emulator_csv.h100_figures()
REFERENCE = "resnet50/res4_3x3"


def row(kernel, layer=REFERENCE):
    found = counted.get((kernel, layer))
    if not found:
        failures.append(f"no counted row for {kernel} on {layer}")
    return found


def claim(text, holds):
    print(f"{'PASS' if holds else 'FAIL'} {text}")
    if not holds:
        failures.append(text)


a, b = row("02a"), row("02b")
if a and b:
    per_store = {k: r["global_store_sectors"] / r["global_store_requests"] for k, r in (("02a", a), ("02b", b))}
    claim(f"02b stores 4 sectors per request, 02a 32 ({per_store})", per_store == {"02a": 32.0, "02b": 4.0})
# 02c reads the filter from constant memory: its global loads are x's alone, half of 02b's (one per tap
# instead of two; the same sampled blocks of the same grid)
b_conv1, c_conv1 = row("02b", "resnet50/conv1"), row("02c", "resnet50/conv1")
if b_conv1 and c_conv1:
    ratio = c_conv1["global_load_requests"] / b_conv1["global_load_requests"]
    claim(f"02c issues half of 02b's global load requests on conv1 ({ratio:.4f})", abs(ratio - 0.5) <= 0.01)
tiled = row("03b")
if b and tiled:
    traffic = {k: 32 * (r["global_load_sectors"] + r["global_store_sectors"]) / r["min_bytes"]
               for k, r in (("02b", b), ("03b", tiled))}
    claim(f"03b's global traffic is at most a tenth of 02b's ({traffic})", traffic["03b"] <= traffic["02b"] / 10)
for kernel in ("05b", "05c", "05d", "05e", "05f", "05g", "05h", "05i", "05j", "05k"):
    r = row(kernel)
    if r:
        conflicts = (r["shared_load_wavefronts"] - r["shared_load_ideal"] +
                     r["shared_store_wavefronts"] - r["shared_store_ideal"])
        claim(f"{kernel} has no shared-memory bank conflicts ({conflicts})", conflicts == 0)
strided = row("06b", "resnet50/res3_3x3_s2")
if strided:
    ratio = strided["tensor_flops"] / strided["flops"]
    claim(f"06b multiplies no stride zeros: tensor FLOPs {ratio:.3f}x the useful ones", ratio <= 1.05)
for kernel in ("08a", "08b"):
    r = row(kernel)
    if r:
        _, limiter = emulator_csv.floor(r, h100)
        claim(f"{kernel} is bound by the tensor cores (by counts: {limiter})", limiter == "tensor cores")
depthwise = row("09b", "mobilenet/dw144_56")
if depthwise:
    traffic = 32 * (depthwise["global_load_sectors"] + depthwise["global_store_sectors"]) / depthwise["min_bytes"]
    _, limiter = emulator_csv.floor(depthwise, h100)
    claim(f"09b moves {traffic:.2f}x the minimum bytes and is bound by {limiter}", traffic <= 1.3 and limiter == "DRAM")

for failure in failures:
    print("FAIL", failure)
print(f"test_counter_tables: {len(failures)} failures")
sys.exit(1 if failures else 0)
