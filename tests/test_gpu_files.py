"""The GPU files the timing model reads (bench/h100.json, bench/a100.json, bench/a6000.json; docs/gpus.md).

1. Each file loads and passes bench/gpus.py's checks: every figure has a value, a unit and a source naming an
   address (or the file of bench/results/ where this project measured it); every figure that is not an assumption has a read_in saying how it was read (read, transcription T,
   recalled R); every assumption has a why; every published measurement names its paper, where and an address.
2. `bench/gpus.py --check`: docs/gpus.md holds the tables the files make today.
3. The arithmetic the sources allow: SMs x FP32 lanes x 2 x boost clock is the published FP32 peak, SMs x
   tensor flop per clock x clock the fp16 tensor peak, SMs x FP64 results x 2 x clock the FP64 peak (each
   within 1%); the mma intervals follow from the tensor rate (one this project measured is no shorter); the throughput table agrees with the lanes, shared equally by the schedulers; the
   shared memory per block is the SM's less the reserved 1 KB. The H100 figures bench/h100.py reads are unchanged.
   The shared-memory carve-outs end at the shared memory per SM and stay within the combined L1 and shared memory.
4. Planted: a copy of a file with a source removed, a measurement of this project's named without its row or
   with a row its file lacks, an assumption without its why, a figure without its read_in,
   a read_in of no known kind, a measurement naming no figure, or a set of options whose value is not its largest
   fails to load, and a changed table cell makes --check fail.

Run as: test_gpu_files.py REPOSITORY_ROOT"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "bench"))
import gpus  # noqa: E402

failures = []


def fail(message):
    failures.append(message)
    print("FAIL", message)


def close(x, y, tolerance=0.01):
    return abs(x - y) <= tolerance * abs(y)


# 1. the files
files = {}
for path in gpus.FILES:
    try:
        files[os.path.basename(path)] = gpus.load(path)
    except gpus.GpuFileError as error:
        fail(str(error))

# 2. the page
script = os.path.join(root, "bench", "gpus.py")
page = os.path.join(root, "docs", "gpus.md")
run = subprocess.run([sys.executable, script, "--check", page], capture_output=True, text=True)
if run.returncode != 0:
    fail(f"bench/gpus.py --check: {run.stderr.strip()}")

# 3. the arithmetic
for name, data in files.items():
    v = {k: e["value"] for k, e in data.items() if isinstance(e, dict)}
    clock = v["boost_clock_ghz"]
    tensor_clock = v.get("tensor_boost_clock_ghz", clock)
    fp32 = v["sms"] * v["fp32_lanes_per_sm"] * 2 * clock / 1000
    if not close(fp32, v["fp32_tflops"]):
        fail(f"{name}: {v['sms']} SMs x {v['fp32_lanes_per_sm']} lanes x 2 x {clock} GHz = {fp32:.2f} TFLOP/s, "
             f"not the published {v['fp32_tflops']}")
    fp16 = v["sms"] * v["tensor_fp16_flop_per_clock_per_sm"] * tensor_clock / 1000
    if not close(fp16, v["fp16_tensor_dense_tflops"]):
        fail(f"{name}: {v['sms']} SMs x {v['tensor_fp16_flop_per_clock_per_sm']} flop x {tensor_clock} GHz = "
             f"{fp16:.1f} TFLOP/s, not the published {v['fp16_tensor_dense_tflops']}")
    if "fp64_tflops" in v:
        fp64 = v["sms"] * v["thr_fp64_fma"] * 2 * clock / 1000
        if not close(fp64, v["fp64_tflops"]):
            fail(f"{name}: {v['sms']} SMs x {v['thr_fp64_fma']} FP64 results x 2 x {clock} GHz = {fp64:.2f} TFLOP/s, "
                 f"not the published {v['fp64_tflops']}")
    per_tensor_core = v["tensor_fp16_flop_per_clock_per_sm"] / v["warp_schedulers_per_sm"]
    for key, flop in (("mma_m16n8k16_issue_cycles", 2 * 16 * 8 * 16), ("mma_m16n8k8_issue_cycles", 2 * 16 * 8 * 8)):
        peak_rate = flop / per_tensor_core
        if gpus.repository_file(data[key]["source"]):  # measured here: at the peak rate at most
            if v[key] < peak_rate:
                fail(f"{name}: {key} = {v[key]}, measured, faster than {flop} flop at {per_tensor_core:g} flop per "
                     f"clock per tensor core allows ({peak_rate:g})")
        elif not data[key].get("assumption") and v[key] != peak_rate:
            fail(f"{name}: {key} = {v[key]}, but {flop} flop at {per_tensor_core:g} flop per clock per tensor core "
                 f"takes {peak_rate:g}")
    if v["thr_fp32_fma"] != v["fp32_lanes_per_sm"] or v["fp32_lanes_per_sm"] % v["warp_schedulers_per_sm"]:
        fail(f"{name}: the FP32 results per clock ({v['thr_fp32_fma']}), the lanes ({v['fp32_lanes_per_sm']}) and "
             f"the schedulers ({v['warp_schedulers_per_sm']}, each with an equal share of the lanes) disagree")
    if v["smem_per_block_bytes"] + v["smem_reserved_per_block_bytes"] != v["smem_per_sm_bytes"]:
        fail(f"{name}: shared memory per block {v['smem_per_block_bytes']} + reserved "
             f"{v['smem_reserved_per_block_bytes']} is not the SM's {v['smem_per_sm_bytes']}")
    if not v["smem_per_sm_bytes"] < v["l1_smem_bytes_per_sm"]:
        fail(f"{name}: the shared memory per SM is not less than the combined L1 and shared memory")
    if v["smem_bytes_per_clock_per_sm"] != v["smem_banks"] * 4 or v["l1_line_bytes"] != 4 * v["l1_sector_bytes"]:
        fail(f"{name}: 32 banks x 4 bytes per clock, or 4 sectors to a line, no longer hold")
    carveouts = data.get("smem_carveout_kb", {}).get("values")
    if carveouts and (carveouts[-1] * 1024 != v["smem_per_sm_bytes"] or carveouts[-1] * 1024 > v["l1_smem_bytes_per_sm"]):
        fail(f"{name}: the largest shared-memory carve-out ({carveouts[-1]} KB) is not the shared memory per SM "
             f"({v['smem_per_sm_bytes']} bytes) within the combined {v['l1_smem_bytes_per_sm']} bytes")
    if v["max_warps_per_sm"] * v["warp_size"] > v["registers_per_sm"] // 32:
        fail(f"{name}: {v['max_warps_per_sm']} warps cannot each hold 32 registers per thread")

# The figures bench/h100.py, bench/emulator_csv.py and tests/test_h100_figures.py read stay as they were.
ORIGINAL_H100 = {"sms": 132, "boost_clock_ghz": 1.98, "tensor_boost_clock_ghz": 1.83, "fp16_tensor_dense_tflops": 989.4,
                 "fp32_tflops": 66.9, "hbm_bandwidth_gbps": 3350, "l2_bytes": 52428800, "smem_per_sm_bytes": 233472,
                 "smem_per_block_bytes": 232448, "registers_per_sm": 65536, "warp_schedulers_per_sm": 4,
                 "smem_bytes_per_clock_per_sm": 128, "fp32_lanes_per_sm": 128}
h100 = files.get("h100.json", {})
for key, x in ORIGINAL_H100.items():
    if key not in h100 or h100[key]["value"] != x:
        fail(f"h100.json: {key} is no longer {x}")

# 4. planted: the checks can fail
with tempfile.TemporaryDirectory() as tmp:
    source = os.path.join(root, "bench", "a100.json")

    def planted(change, expect):
        with open(source, encoding="utf-8") as f:
            data = json.load(f)
        change(data)
        copy = os.path.join(tmp, "a100.json")
        with open(copy, "w", encoding="utf-8") as f:
            json.dump(data, f)
        try:
            gpus.load(copy)
        except gpus.GpuFileError as error:
            if expect not in str(error):
                fail(f"planted: expected '{expect}', the check said: {error}")
            return
        fail(f"planted: a file with {expect} loaded")

    planted(lambda d: d["sms"].pop("source"), "no source")
    planted(lambda d: d["l2_bytes"].update(source="the whitepaper, Table 3"), "names no address")
    planted(lambda d: d["lat_mufu_cycles"].pop("why"), "an assumption without a why")
    planted(lambda d: d["sms"].pop("read_in"), "no read_in")
    planted(lambda d: d["sms"].update(read_in="looked it up somewhere"), "read_in starts with none of")
    planted(lambda d: d["published_measurements"]["list"][0].update(also_model_input="l3_bytes"), "not a figure of the file")
    planted(lambda d: d.pop("max_warps_per_sm"), "missing max_warps_per_sm")
    planted(lambda d: d["smem_carveout_kb"].update(value=100), "'values' is not increasing")
    measured = ("this project's chase, bench/results/validation/latency_h100.csv, row 'L2 hit latency, pointer "
                "chase'")
    planted(lambda d: d["lat_l2_hit_cycles"].update(source=measured.replace("L2 hit", "L3 hit")), "but no row of it")
    planted(lambda d: d["lat_l2_hit_cycles"].update(source=measured.split(", row")[0]), "but no row of it")

    copy = os.path.join(tmp, "gpus.md")
    shutil.copy(page, copy)
    with open(copy, encoding="utf-8") as f:
        text = f.read()
    at = text.index("| `sms` | ")
    with open(copy, "w", encoding="utf-8") as f:
        f.write(text[:at] + text[at:].replace("| 132 |", "| 133 |", 1))
    run = subprocess.run([sys.executable, script, "--check", copy], capture_output=True, text=True)
    if run.returncode != 1 or len(run.stderr.strip().splitlines()) != 1:
        fail(f"planted: --check on a changed table gave exit {run.returncode}: {run.stderr.strip()}")

print(f"test_gpu_files: {len(files)} files, {len(failures)} failures")
sys.exit(1 if failures else 0)
