"""Draw train_cnn's loss curve(s) from its --log CSV(s) into one PNG.

    python3 chapters/11_train_cnn/plot_loss.py ours.csv [more.csv ...] --out docs/train_cnn_loss.png

Each CSV has the columns backend,step,loss (a --compare log holds both GPU backends). Every
(file, backend) pair becomes one line. It plots only what the CSVs hold: commit a PNG under docs/
only together with the run that wrote its CSV, with the device named. Bad input (a missing file, a
missing column, a value that is not a number) is one line on stderr and exit 1.
"""
import argparse
import csv
import math
import os
import sys


def read_log(path):
    """{backend: [(step, loss), ...]} from one CSV, or raises ValueError with a one-line reason."""
    curves = {}
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror}")
    if not rows:
        raise ValueError(f"{path}: no rows")
    missing = {"backend", "step", "loss"} - set(rows[0].keys())
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    for line, row in enumerate(rows, start=2):
        try:
            step, loss = int(row["step"]), float(row["loss"])
        except (TypeError, ValueError):
            raise ValueError(f"{path}:{line}: step and loss must be numbers, got {row['step']!r}, {row['loss']!r}")
        if not math.isfinite(loss):
            raise ValueError(f"{path}:{line}: loss is {loss}")
        curves.setdefault(row["backend"], []).append((step, loss))
    return curves


def main():
    parser = argparse.ArgumentParser(description="Plot train_cnn loss curves from --log CSVs.")
    parser.add_argument("logs", nargs="+", help="CSV files written by train_cnn --log")
    parser.add_argument("--out", required=True, help="PNG to write")
    parser.add_argument("--title", default="train_cnn: training loss", help="plot title")
    args = parser.parse_args()
    try:
        logs = [(path, read_log(path)) for path in args.logs]
    except ValueError as e:
        print(f"plot_loss.py: {e}", file=sys.stderr)
        return 1

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    for path, curves in logs:
        for backend, points in curves.items():
            points.sort()
            label = backend if len(logs) == 1 else f"{backend} ({os.path.basename(path)})"
            ax.plot([s for s, _ in points], [l for _, l in points], marker=".", label=label)
    ax.axhline(math.log(4), color="grey", linestyle=":", linewidth=1, label="chance (ln 4)")
    ax.set_xlabel("step")
    ax.set_ylabel("mean cross-entropy of the batch")
    ax.set_ylim(bottom=0)
    ax.set_title(args.title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(args.out)
    except OSError as e:
        print(f"plot_loss.py: cannot write {args.out}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
