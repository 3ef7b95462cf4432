"""Load the emulator's counts (bench/results/emulator.csv) and bound each row's time from them.

Shared by bench/tables.py and bench/plot.py; not run on its own. `conv bench --emulate` writes the CSV:
one row per (kernel, layer), with what the emulator counted the kernel doing (emu/README.md,
"Counters"), scaled to the whole grid when a sample of the blocks was emulated.

A bound from counts is the least time each of the machine's resources would need for those counts at
an H100's published peak rates (bench/h100.json, docs/h100.md), and the largest of them is the floor
the kernel cannot beat on that GPU. It is a bound, never a measurement: no latency, no occupancy, no
cache is in it, and the DRAM term counts each tensor once (the compulsory traffic).
"""

import csv
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
# Its name among the GPUs' results CSVs in bench/results/: counts, never measurements.
CSV_NAME = "emulator.csv"
COUNT_COLUMNS = (
    "flops", "min_bytes", "grid_blocks", "emulated_blocks", "launches", "warp_inst", "thread_inst",
    "inst_tensor", "inst_fp32", "inst_fp64", "inst_fp16", "inst_integer", "inst_conversion", "inst_control",
    "inst_global", "inst_shared", "inst_other_memory", "inst_sync", "global_load_requests",
    "global_load_sectors", "global_load_bytes", "global_store_requests", "global_store_sectors",
    "global_store_bytes", "shared_load_requests", "shared_load_wavefronts", "shared_load_ideal",
    "shared_store_requests", "shared_store_wavefronts", "shared_store_ideal", "barriers", "tensor_flops")
TEXT_COLUMNS = ("chapter", "kernel", "kernel_name", "pass", "layer", "status", "source_sha256",
                "emulator_sha256")
STATUSES = ("counted", "unsupported", "fail")

# The resources a bound from counts weighs, in the order the tables list them.
RESOURCES = ("tensor cores", "fp32 pipes", "issue slots", "shared memory", "DRAM")


class CsvError(Exception):
    """The CSV cannot be used; str(error) is one line saying why."""


def h100_figures(path=os.path.join(HERE, "h100.json")):
    """name -> value of the published H100 figures (or, given another GPU file, that GPU's)."""
    with open(path, encoding="utf-8") as f:
        return {k: v["value"] for k, v in json.load(f).items() if isinstance(v, dict) and "value" in v}


def gpu_figures(gpu):
    """name -> value of the published figures of bench/<gpu>.json."""
    return h100_figures(os.path.join(HERE, gpu + ".json"))


def load(path):
    """Rows as dicts, counts as ints (None in rows that were not counted); CsvError on any problem."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COUNT_COLUMNS + TEXT_COLUMNS if c not in (reader.fieldnames or ())]
            if missing:
                raise CsvError(f"missing column(s): {', '.join(missing)}")
            rows = []
            for raw in reader:
                if None in raw or None in raw.values():
                    raise CsvError(f"line {reader.line_num}: wrong number of fields")
                if raw["status"] not in STATUSES:
                    raise CsvError(f"line {reader.line_num}: status '{raw['status']}' is not one of "
                                   f"{'|'.join(STATUSES)}")
                row = dict(raw)
                for column in COUNT_COLUMNS:
                    text = raw[column].strip()
                    try:
                        row[column] = int(float(text)) if text else None
                    except ValueError:
                        raise CsvError(f"line {reader.line_num}: {column} '{text}' is not a number") from None
                    if row["status"] == "counted" and row[column] is None and column != "min_bytes":
                        raise CsvError(f"line {reader.line_num}: {column} is empty in a counted row")
                rows.append(row)
    except OSError as e:
        raise CsvError(f"cannot read: {e.strerror}") from None
    if not rows:
        raise CsvError("no data rows (header only)")
    return rows


def bank_conflicts(row):
    """Shared-memory wavefronts beyond the ideal (loads and stores): what bank conflicts cost."""
    return (row["shared_load_wavefronts"] - row["shared_load_ideal"] +
            row["shared_store_wavefronts"] - row["shared_store_ideal"])


def global_traffic(row):
    """Bytes the global loads and stores move, in whole 32-byte sectors."""
    return 32 * (row["global_load_sectors"] + row["global_store_sectors"])


def bound_us(row, h100):
    """resource -> microseconds the counts need at the H100's published peak (or another GPU's figures: its
    DRAM bandwidth is hbm_ or dram_bandwidth_gbps); counted rows only."""
    clock = h100["boost_clock_ghz"] * 1e9 * h100["sms"]  # SM-clocks per second, over the whole GPU
    wavefronts_per_clock = h100["smem_bytes_per_clock_per_sm"] / 128  # a wavefront moves 128 bytes
    return {
        "tensor cores": row["tensor_flops"] / (h100["fp16_tensor_dense_tflops"] * 1e12) * 1e6,
        # FFMA and friends: one warp instruction takes a quarter of an SM's 128 fp32 lanes for a clock
        "fp32 pipes": row["inst_fp32"] / (clock * h100["fp32_lanes_per_sm"] / 32) * 1e6,
        "issue slots": row["warp_inst"] / (clock * h100["warp_schedulers_per_sm"]) * 1e6,
        "shared memory": (row["shared_load_wavefronts"] + row["shared_store_wavefronts"]) /
                         (clock * wavefronts_per_clock) * 1e6,
        "DRAM": row["min_bytes"] / (h100.get("hbm_bandwidth_gbps", h100.get("dram_bandwidth_gbps")) * 1e9) * 1e6,
    }


def floor(row, h100):
    """(microseconds, resource) of the largest bound: what would limit the kernel first."""
    bounds = bound_us(row, h100)
    resource = max(RESOURCES, key=lambda name: bounds[name])
    return bounds[resource], resource
