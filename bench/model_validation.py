#!/usr/bin/env python3
"""The timing model against measurements: every (kernel, layer, batch) that the model has modeled on a GPU
(bench/results/modeled/<gpu>.csv) and that was measured on that GPU (bench/results/<gpu>.csv), side by side,
in emu/README.md between the markers <!-- model-validation:begin --> and <!-- model-validation:end -->.

    python3 bench/model_validation.py --write     rewrite the table from the CSVs
    python3 bench/model_validation.py --check     exit 1 when the table is not what the CSVs give

The modeled and the measured numbers stand in columns of their own, each labelled; their ratio is the
model's error on that row. The summary says how many rows are within 25% and the median error. Nothing is
fitted: the model's figures come from the GPU files, never from these measurements.
"""
import argparse
import csv
import os
import statistics
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import markers  # noqa: E402
import modeled_csv  # noqa: E402

README = os.path.join(ROOT, "emu", "README.md")


def measured_rows(gpu):
    path = os.path.join(ROOT, "bench", "results", gpu + ".csv")
    if not os.path.exists(path):
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["kernel"], r["layer"], r["n"]): r for r in csv.DictReader(f)
                if r["status"] == "pass" and r["time_ms"]}


def spearman(xs, ys):
    """Spearman's rank correlation: Pearson's of the ranks (ties share their mean rank)."""
    def ranks(values):
        order = sorted(range(len(values)), key=lambda i: values[i])
        r = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    return cov / (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5


def table():
    lines = []
    for gpu in modeled_csv.gpus(os.path.join(ROOT, "bench", "results")):
        modeled = modeled_csv.load(os.path.join(ROOT, "bench", "results", modeled_csv.FOLDER, gpu + ".csv"))
        measured = measured_rows(gpu)
        pairs = []
        for r in modeled:
            m = measured.get((r["kernel"], r["layer"], r["n"]))
            if r["status"] == "counted" and m:
                pairs.append((r, 1000 * float(m["time_ms"])))
        if not pairs:
            continue
        label = modeled_csv.gpu_label(gpu)
        ratios = [r["modeled_us"] / us for r, us in pairs]
        within = sum(1 for x in ratios if 0.8 <= x <= 1.25)
        error = statistics.median(abs(x - 1) for x in ratios)
        rho = spearman([r["modeled_us"] for r, _ in pairs], [us for _, us in pairs])
        lines += [f"On the {label}: {len(pairs)} (kernel, layer) pairs, modeled and measured at the same batch; "
                  f"{within} of them within 25% (modeled / measured from 0.8 to 1.25); the median error "
                  f"{100 * error:.0f}%; from {min(ratios):.2f} to {max(ratios):.2f} times the measured time. "
                  f"The model orders them as the measurements do with a rank correlation (Spearman) of {rho:.2f}.",
                  "",
                  f"| kernel | layer | N | modeled on {label}, µs (a model, not a measurement) | measured on {label}, "
                  "µs (median) | modeled / measured | the modeled warps' top states (cycles per issued "
                  "instruction) |",
                  "| --- | --- | --- | ---: | ---: | ---: | --- |"]
        for (r, us), ratio in zip(pairs, ratios):
            states = sorted(((v, s) for s, v in modeled_csv.per_issued(r).items() if s != "selected"), reverse=True)
            top = ", ".join(f"{s} {v:.2f}" for v, s in states[:2] if v > 0)
            lines.append(f"| {r['kernel']} | {r['layer'].split('/')[-1]} | {r['n']} | {r['modeled_us']:,.1f} | "
                         f"{us:,.1f} | {ratio:.2f} | {top} |")
        lines.append("")
    if not lines:
        lines = ["No layer has been both modeled and measured on one GPU yet.", ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    return markers.refresh(README, "model-validation", table(), args.check, "model_validation",
                           "python3 bench/model_validation.py --write")


if __name__ == "__main__":
    sys.exit(main())
