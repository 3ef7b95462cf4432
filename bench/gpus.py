"""The GPU files the SM timing model reads (bench/h100.json, bench/a100.json, bench/a6000.json): loads and checks
them, and writes their tables into docs/gpus.md.

A file holds "gpu" and "note" (text), figures and "published_measurements":

    "sms": {"value": 132, "unit": "SMs", "source": "document, table, row ...; https://..."}
    "lat_l2_hit_cycles": {..., "assumption": true, "why": "..."}   a reasoned value where none is published
                                                                   (or one measured on another GPU)
    "smem_carveout_kb": {"value": 228, "values": [0, 8, ..., 228], ...}   a figure that is a set of options:
                                                                   "values" lists them, "value" is the largest
    "...": {..., "read_in": "..."}                                 how the figure was read, one of three kinds:
        "read: ..."                                the passage was read in the source (or a verbatim copy of it)
        "read in a third-party transcription ..."  read in someone else's copy of its figures, not in the source (T)
        "not re-read: recalled from ..."           written from memory of the source, not re-read (R)
    Every figure that is not an assumption says how it was read.
    A source names its address (http...), or, for a figure this project measured on the GPU itself, the file of
    bench/results/ that holds the measurement and its row ("row 'quantity'").
    "published_measurements": {"value": N, "unit": ..., "source": ..., "list": [
        {"what", "value", "unit", "paper", "where", "address", "measured_on", "also_model_input": key or null}]}

The measurements are what the model is checked against, never its inputs: one that is also an input names the
input in "also_model_input", and the model may not be checked against it. (The list sits in an entry of the figure
form, value = its length, so that bench/h100.py, which reads every top-level entry of bench/h100.json as a figure,
reads the H100 file unchanged.)

    python3 bench/gpus.py --write [PAGE]    (PAGE: docs/gpus.md)
    python3 bench/gpus.py --check [PAGE]    (exit 1, one line, when a file is wrong or the page is stale)
"""
import argparse
import csv
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = [os.path.join(ROOT, "bench", name) for name in ("h100.json", "a100.json", "a6000.json")]
PAGE = os.path.join(ROOT, "docs", "gpus.md")
BEGIN, END = "<!-- gpus:begin -->", "<!-- gpus:end -->"
TEXT_KEYS = ("gpu", "note")
MEASUREMENTS = "published_measurements"
# What every file gives the model (the DRAM bandwidth under one of two names: HBM or GDDR).
REQUIRED = [
    "sms", "boost_clock_ghz", "fp32_tflops", "fp16_tensor_dense_tflops", "fp32_lanes_per_sm", "warp_schedulers_per_sm",
    "l2_bytes", "smem_per_sm_bytes", "smem_per_block_bytes", "l1_smem_bytes_per_sm", "registers_per_sm",
    "smem_bytes_per_clock_per_sm", "compute_capability", "warp_size", "max_threads_per_block", "max_warps_per_sm",
    "max_blocks_per_sm", "max_registers_per_thread", "register_alloc_unit_registers", "smem_alloc_unit_bytes",
    "smem_reserved_per_block_bytes", "smem_banks", "l1_line_bytes", "l1_sector_bytes", "l2_line_bytes",
    "l2_sector_bytes", "thr_fp32_fma", "thr_fp16x2_fma", "thr_fp64_fma", "thr_int32_add", "thr_int32_mad",
    "thr_int32_logic", "thr_compare_minmax", "thr_mufu", "thr_shfl", "thr_cvt_64bit", "thr_cvt_other",
    "branch_per_clock_per_scheduler", "tensor_fp16_flop_per_clock_per_sm", "mma_m16n8k16_issue_cycles",
    "mma_m16n8k8_issue_cycles", "lat_fp32_cycles", "lat_int_cycles", "lat_mufu_cycles", "lat_smem_load_cycles",
    "lat_l1_hit_cycles", "lat_l2_hit_cycles", "lat_dram_cycles", "lsu_address_issue_cycles", "cp_async", "tma",
]
DRAM_KEYS = ("hbm_bandwidth_gbps", "dram_bandwidth_gbps")
ENTRY_KEYS = {"value", "values", "unit", "source", "assumption", "why", "read_in"}
READ, TRANSCRIBED, RECALLED = "read:", "read in a third-party transcription", "not re-read"


def read_kind(read_in):
    """'read', 'T' or 'R' for a read_in text; None for anything else."""
    if not isinstance(read_in, str):
        return None
    for prefix, kind in ((READ, "read"), (TRANSCRIBED, "T"), (RECALLED, "R")):
        if read_in.startswith(prefix):
            return kind
    return None
MEASUREMENT_KEYS = {"what", "value", "unit", "paper", "where", "address", "measured_on", "also_model_input", "read_in"}


class GpuFileError(Exception):
    """A GPU file is wrong; str(error) is one line saying where and why."""


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def repository_file(source):
    """The first word of a source that is a file of this repository under bench/results/ (a measurement this
    project made, e.g. bench/results/validation/latency_h100.csv), or None."""
    for word in source.replace(";", " ").replace(",", " ").split():
        if word.startswith("bench/results/") and os.path.isfile(os.path.join(ROOT, word)):
            return word
    return None


def measurement_of(source):
    """(file, quantity) for a source naming a measurement of this project: the file of bench/results/ and the
    row it names ("row 'quantity'", None when it names none); None for any other source."""
    measured_here = repository_file(source)
    if not measured_here:
        return None
    row = re.search(r"row '([^']+)'", source)
    return measured_here, row.group(1) if row else None


def quantities(measured_here):
    """The quantities a CSV of this project's measurements holds (its "quantity" column)."""
    with open(os.path.join(ROOT, measured_here), encoding="utf-8", newline="") as f:
        return {r.get("quantity") for r in csv.DictReader(f)}


def check_entry(path, key, entry):
    if not isinstance(entry, dict):
        raise GpuFileError(f"{path}: {key}: not an entry of value, unit and source")
    extra = set(entry) - ENTRY_KEYS - ({"list"} if key == MEASUREMENTS else set())
    if extra:
        raise GpuFileError(f"{path}: {key}: unknown field {', '.join(sorted(extra))}")
    if not is_number(entry.get("value")):
        raise GpuFileError(f"{path}: {key}: no numeric value")
    if "values" in entry:
        values = entry["values"]
        if not (isinstance(values, list) and values and all(is_number(x) for x in values)):
            raise GpuFileError(f"{path}: {key}: 'values' is not a list of numbers")
        if values != sorted(set(values)) or entry["value"] != values[-1]:
            raise GpuFileError(f"{path}: {key}: 'values' is not increasing with 'value' its largest")
    for field in ("unit", "source"):
        if not isinstance(entry.get(field), str) or not entry[field].strip():
            raise GpuFileError(f"{path}: {key}: no {field}")
    measured = measurement_of(entry["source"])
    if "http" not in entry["source"] and not measured:
        raise GpuFileError(f"{path}: {key}: the source names no address (http...) and no file of this repository")
    if measured and measured[1] not in quantities(measured[0]):
        raise GpuFileError(f"{path}: {key}: the source names {measured[0]} but no row of it (row '...')")
    if "assumption" in entry and entry["assumption"] is not True:
        raise GpuFileError(f"{path}: {key}: 'assumption' is true or absent")
    if entry.get("assumption") and not (isinstance(entry.get("why"), str) and entry["why"].strip()):
        raise GpuFileError(f"{path}: {key}: an assumption without a why")
    if "why" in entry and not entry.get("assumption"):
        raise GpuFileError(f"{path}: {key}: a why without 'assumption': true")
    if "read_in" not in entry and not entry.get("assumption") and key != MEASUREMENTS:
        raise GpuFileError(f"{path}: {key}: no read_in (how the figure was read)")
    if "read_in" in entry and read_kind(entry["read_in"]) is None:
        raise GpuFileError(f"{path}: {key}: read_in starts with none of {READ!r}, {TRANSCRIBED!r}, {RECALLED!r}")


def check_measurement(path, i, m, figures):
    where = f"{path}: {MEASUREMENTS}[{i}]"
    if not isinstance(m, dict):
        raise GpuFileError(f"{where}: not an object")
    extra = set(m) - MEASUREMENT_KEYS
    missing = (MEASUREMENT_KEYS - {"read_in"}) - set(m)
    if extra or missing:
        raise GpuFileError(f"{where}: unknown {sorted(extra)} / missing {sorted(missing)}")
    if not is_number(m["value"]):
        raise GpuFileError(f"{where}: no numeric value")
    for field in ("what", "unit", "paper", "where", "measured_on"):
        if not isinstance(m[field], str) or not m[field].strip():
            raise GpuFileError(f"{where}: no {field}")
    if not str(m["address"]).startswith("http"):
        raise GpuFileError(f"{where}: the address is not http...")
    if "read_in" in m and read_kind(m["read_in"]) is None:
        raise GpuFileError(f"{where}: read_in starts with none of {READ!r}, {TRANSCRIBED!r}, {RECALLED!r}")
    also = m["also_model_input"]
    if also is not None and also not in figures:
        raise GpuFileError(f"{where}: also_model_input names {also!r}, not a figure of the file")


def load(path):
    """The file's dict, checked; GpuFileError otherwise."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as error:
        raise GpuFileError(f"{path}: {error}")
    for key in TEXT_KEYS:
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise GpuFileError(f"{path}: no {key}")
    missing = [k for k in REQUIRED if k not in data]
    if not any(k in data for k in DRAM_KEYS):
        missing.append(" or ".join(DRAM_KEYS))
    if MEASUREMENTS not in data:
        missing.append(MEASUREMENTS)
    if missing:
        raise GpuFileError(f"{path}: missing {', '.join(missing)}")
    for key, entry in data.items():
        if key not in TEXT_KEYS:
            check_entry(path, key, entry)
    block = data[MEASUREMENTS]
    if not isinstance(block.get("list"), list) or block["value"] != len(block["list"]):
        raise GpuFileError(f"{path}: {MEASUREMENTS}: 'list' holds {len(block.get('list') or [])}, 'value' says {block['value']}")
    figures = figure_keys(data)
    for i, m in enumerate(block["list"]):
        check_measurement(path, i, m, figures)
    return data


def figure_keys(data):
    return [k for k in data if k not in TEXT_KEYS and k != MEASUREMENTS]


def value(data, key):
    return data[key]["value"]


def dram_bandwidth(data):
    return next(value(data, k) for k in DRAM_KEYS if k in data)


def number(x):
    if isinstance(x, float) and x.is_integer() and abs(x) >= 100:
        x = int(x)
    if isinstance(x, int):
        return f"{x:,}"
    if x.is_integer():
        return f"{x:.1f}"  # a compute capability: 9.0, not 9
    return f"{x:g}"


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def short_source(source):
    """The source's first clause up to its first colon (document, table, row) and the address."""
    address = next((w for w in source.replace(";", " ").split() if w.startswith("http")), "")
    text = source.split(";")[0].split(":")[0].strip()
    if len(text) > 150:
        text = text[:text.rindex(",", 0, 150)] + ", ..."
    if text.count("(") > text.count(")"):
        text = text[:text.rindex("(")].rstrip(" ,") + " ..."
    if address:
        return f"{text} ([address]({address}))"
    measured_here = repository_file(source)
    return f"{text} ([{measured_here}](../{measured_here}))" if measured_here else text


def gpu_section(path, data):
    name = os.path.relpath(path, ROOT)
    keys = figure_keys(data)
    assumed = [k for k in keys if data[k].get("assumption")]
    transcribed = [k for k in keys if read_kind(data[k].get("read_in")) == "T"]
    recalled = [k for k in keys if read_kind(data[k].get("read_in")) == "R"]
    lines = [f"### {data['gpu']} (`{name}`)", "", cell(data["note"]), "",
             f"{len(keys)} figures, {len(assumed)} of them assumptions (marked **A**), {len(transcribed)} read in a "
             f"transcription of their source (marked **T**), {len(recalled)} recalled from their source and not re-read "
             "(marked **R**).", "",
             "| figure | value | unit | source | |", "| --- | --- | --- | --- | --- |"]
    for key in keys:
        entry = data[key]
        kind = read_kind(entry.get("read_in"))
        marks = " ".join(m for m, on in (("**A**", entry.get("assumption")), ("**T**", kind == "T"), ("**R**", kind == "R")) if on)
        shown = ", ".join(number(x) for x in entry["values"]) if "values" in entry else number(entry["value"])
        lines.append(f"| `{key}` | {shown} | {cell(entry['unit'])} | {cell(short_source(entry['source']))} | {marks} |")
    lines += ["", f"Assumptions on the {data['gpu']}:", ""]
    lines += [f"- `{key}` = {number(value(data, key))}: {cell(data[key]['why'])}" for key in assumed] or ["- none"]
    measured = data[MEASUREMENTS]["list"]
    lines += ["", f"Published measurements on the {data['gpu']} (validation targets):", ""]
    if not measured:
        lines.append("None collected.")
    else:
        lines += ["| measured | value | unit | measured on | paper, where | also a model input |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for m in measured:
            also = f"yes: `{m['also_model_input']}` (not a validation target)" if m["also_model_input"] else "no"
            kind = read_kind(m.get("read_in"))
            paper = f"{m['paper']}, {m['where']} ([address]({m['address']}))" + {"T": " **T**", "R": " **R**"}.get(kind, "")
            lines.append(f"| {cell(m['what'])} | {number(m['value'])} | {cell(m['unit'])} | {cell(m['measured_on'])} | "
                         f"{cell(paper)} | {also} |")
    return "\n".join(lines)


def tables(paths=FILES):
    return "\n\n".join(gpu_section(p, load(p)) for p in paths)


def render(text, paths=FILES):
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise GpuFileError(f"the page needs one {BEGIN} ... {END}")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{tables(paths)}\n{END}{tail}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the tables in the page")
    mode.add_argument("--check", action="store_true", help="exit 1 if a file is wrong or the page is stale")
    parser.add_argument("page", nargs="?", default=PAGE)
    parser.add_argument("--files", nargs="+", default=FILES, help="the GPU files (default: the three)")
    args = parser.parse_args()
    try:
        with open(args.page, encoding="utf-8") as f:
            text = f.read()
        new = render(text, args.files)
    except (OSError, GpuFileError) as error:
        print(f"gpus.py: {error}", file=sys.stderr)
        return 1
    if args.check:
        if new != text:
            print(f"gpus.py: {args.page}: the tables differ from the GPU files (run bench/gpus.py --write)", file=sys.stderr)
            return 1
        return 0
    if new != text:
        with open(args.page, "w", encoding="utf-8") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
