"""Load and validate a benchmark results CSV (bench/results/<gpu>.csv).

Shared by bench/plot.py and bench/tables.py; not run on its own.
The CSV is written by the C benchmark runner, one row per (kernel, pass, layer)
measurement. `load(path)` returns a Results object whose rows are dicts with the
number columns already converted (float, or None where the field is empty), or
raises CsvError with a one-line description of what is wrong with the file.
"""

import csv
import math
import re
import statistics

COLUMNS = (
    "chapter,kernel,kernel_name,pass,layer,n,c,h,w,k,r,s,stride,pad,dilation,groups,"
    "dtype,layout,time_ms,tflops,gbps,cudnn_ms,cudnn_algo,pct_cudnn,peak_tflops,peak_gbps,"
    "pct_roofline,rel_err,status,reps,gpu,cuda,cudnn,source_sha256,date"
).split(",")

INT_COLUMNS = ("n", "c", "h", "w", "k", "r", "s", "groups")
PAIR_COLUMNS = ("stride", "pad", "dilation")  # "2" or "2x1" (h x w)
FLOAT_COLUMNS = ("time_ms", "tflops", "gbps", "cudnn_ms", "pct_cudnn",
                 "peak_tflops", "peak_gbps", "pct_roofline", "rel_err")
# Number fields a `pass` row must carry; the cuDNN ones may be empty (no cuDNN).
PASS_REQUIRED = ("time_ms", "tflops", "gbps", "peak_tflops", "peak_gbps", "rel_err")
STATUSES = ("pass", "fail", "unsupported")
PASSES = ("fprop", "dgrad", "wgrad")
DTYPE_LABEL = {"f32": "fp32", "f16": "fp16"}


class CsvError(Exception):
    """The CSV cannot be used; str(error) is one line saying why."""


class Results:
    """Rows of one results CSV plus the facts the titles need."""

    def __init__(self, path, rows):
        self.path = path
        self.rows = rows

    def passed(self):
        """Rows that verified and were timed: the only ones worth plotting."""
        return [r for r in self.rows if r["status"] == "pass" and r["time_ms"] is not None]

    def values(self, column):
        """Distinct non-empty values of a text column, in first-seen order."""
        return list(dict.fromkeys(r[column] for r in self.rows if r[column]))

    def gpu(self):
        return " / ".join(self.values("gpu")) or "unknown GPU"

    def date(self, rows=None):
        """The day of the rows (all of them unless named), or the first to the last."""
        dates = sorted({r["date"] for r in (self.rows if rows is None else rows) if r["date"]})
        if not dates:
            return "undated"
        return dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"

    def versions(self):
        cuda = ", ".join(self.values("cuda")) or "?"
        cudnn = ", ".join(self.values("cudnn")) or "n/a"
        return f"CUDA {cuda}, cuDNN {cudnn}"

    def peak_tflops(self, dtype):
        vals = [r["peak_tflops"] for r in self.passed() if r["dtype"] == dtype]
        return statistics.median(vals) if vals else None

    def peak_gbps(self):
        vals = [r["peak_gbps"] for r in self.passed()]
        return statistics.median(vals) if vals else None


def _parse_row(raw, line):
    row = dict(raw)
    if row["status"] not in STATUSES:
        raise CsvError(f"line {line}: status '{row['status']}' is not one of {'|'.join(STATUSES)}")
    if row["pass"] not in PASSES:
        raise CsvError(f"line {line}: pass '{row['pass']}' is not one of {'|'.join(PASSES)}")
    strict = row["status"] == "pass"
    for col in FLOAT_COLUMNS:
        text = row[col].strip()
        if not text:
            row[col] = None
            if strict and col in PASS_REQUIRED:
                raise CsvError(f"line {line}: {col} is empty in a pass row")
            continue
        try:
            row[col] = float(text)
        except ValueError:
            if strict:
                raise CsvError(f"line {line}: {col} '{text}' is not a number") from None
            row[col] = None  # fail/unsupported rows are not plotted
    for col in INT_COLUMNS:
        try:
            row[col] = int(row[col])
        except ValueError:
            raise CsvError(f"line {line}: {col} '{row[col]}' is not an integer") from None
    for col in PAIR_COLUMNS:
        if not re.fullmatch(r"\d+(x\d+)?", row[col]):
            raise CsvError(f"line {line}: {col} '{row[col]}' is not N or HxW (e.g. 2 or 2x1)")
    if strict:
        for col in ("time_ms", "tflops", "gbps", "peak_tflops", "peak_gbps"):
            if not row[col] > 0 or math.isinf(row[col]):
                raise CsvError(f"line {line}: {col} must be a positive number in a pass row")
    return row


def load(path):
    """Read and validate one results CSV; raise CsvError on any problem."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames
            if not header:
                raise CsvError("empty file (no header line)")
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise CsvError(f"missing column(s): {', '.join(missing)}")
            rows = []
            for raw in reader:
                line = reader.line_num
                if None in raw:  # more fields than the header
                    got = len(header) + len(raw[None])
                    raise CsvError(f"line {line}: expected {len(header)} fields, got {got}")
                if None in raw.values():  # fewer fields than the header
                    got = sum(v is not None for v in raw.values())
                    raise CsvError(f"line {line}: expected {len(header)} fields, got {got}")
                rows.append(_parse_row(raw, line))
    except OSError as e:
        raise CsvError(f"cannot read: {e.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise CsvError(f"not a readable CSV: {e}") from None
    if not rows:
        raise CsvError("no data rows (header only)")
    return Results(path, rows)


def kernel_key(row):
    """Sort key: chapter, then kernel id (01 < 02a < 02b < 05c ...)."""
    return (row["chapter"], row["kernel"])


def layer_key(row):
    """Identity of a problem: the layer name is not enough for 'custom' rows."""
    return (row["layer"],) + tuple(row[c] for c in INT_COLUMNS + PAIR_COLUMNS)


def layer_name_labels(layers):
    """layer name -> label: the suite prefix ('resnet50/') dropped when every layer shares one suite. For
    figures and tables that give a layer one column or colour whatever its N (the CPU loop runs at N=1)."""
    suites = {layer.partition("/")[0] for layer in layers}
    return {layer: layer.partition("/")[2] if len(suites) == 1 else layer for layer in layers}
