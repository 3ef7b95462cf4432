"""Load the timing model's results (bench/results/modeled/<gpu>.csv) for the plots and tables.

Shared by bench/plot.py and bench/tables.py; not run on its own. `conv bench --emulate --model GPU` writes
the CSV: per (kernel, layer), the time the emulator's timing model gives the launch on that GPU
(emu/README.md, "The timing model") and the warp-cycles its modeled SM's warps spent in each state,
with Nsight Compute's names. Every number in it is modeled: a model, not a measurement, and every
figure or table drawn from it says so.
"""

import csv
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FOLDER = "modeled"  # bench/results/modeled/<gpu>.csv
# The warp states, in the order the model counts them (emu/counters.h, emu_stall_names).
STATES = ("selected", "not_selected", "wait", "short_scoreboard", "long_scoreboard", "math_pipe_throttle",
          "mio_throttle", "lg_throttle", "barrier", "membar")
NUMBERS = ("flops", "modeled_us", "modeled_tflops", "modeled_cycles", "sm_blocks", "resident_blocks", "issued",
           "issued_ptx") + \
    tuple("warp_cycles_" + s for s in STATES)
TEXT = ("chapter", "kernel", "kernel_name", "pass", "layer", "n", "gpu", "dtype", "machine_code", "status",
        "source_sha256", "emulator_sha256")


class CsvError(Exception):
    """The CSV cannot be used; str(error) is one line saying why."""


def gpu_label(gpu):
    """The GPU file's name of the GPU: 'NVIDIA H100 SXM5 80GB'."""
    with open(os.path.join(HERE, gpu + ".json"), encoding="utf-8") as f:
        return json.load(f)["gpu"]


def caption(gpu):
    """What every modeled number is labelled with where it is printed or drawn."""
    return f"modeled on {gpu_label(gpu)} (a model, not a measurement)"


def load(path):
    """Rows as dicts, the numbers as floats; CsvError on any problem."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in NUMBERS + TEXT if c not in (reader.fieldnames or ())]
            if missing:
                raise CsvError(f"missing column(s): {', '.join(missing)}")
            rows = []
            for raw in reader:
                if None in raw or None in raw.values():
                    raise CsvError(f"line {reader.line_num}: wrong number of fields")
                row = dict(raw)
                try:
                    for column in NUMBERS:
                        row[column] = float(raw[column])
                except ValueError:
                    raise CsvError(f"line {reader.line_num}: {column} is '{raw[column]}', not a number") from None
                rows.append(row)
    except OSError as e:
        raise CsvError(str(e)) from None
    return rows


def per_issued(row):
    """state -> warp-cycles per issued instruction (Nsight Compute's 'warp cycles per issued instruction')."""
    issued = row["issued"] or 1.0
    return {s: row["warp_cycles_" + s] / issued for s in STATES}


def gpus(results):
    """The GPUs modeled in results/modeled/: their file names without .csv."""
    folder = os.path.join(results, FOLDER)
    if not os.path.isdir(folder):
        return []
    return sorted(name[:-4] for name in os.listdir(folder) if name.endswith(".csv"))
