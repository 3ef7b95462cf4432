#!/usr/bin/env python3
"""The timing model against measurements: every (kernel, layer, batch) that the model has modeled on a GPU
(bench/results/modeled/<gpu>.csv) and that was measured on that GPU (bench/results/<gpu>.csv), side by side,
in emu/README.md between the markers <!-- model-validation:begin --> and <!-- model-validation:end -->.

    python3 bench/model_validation.py --write     rewrite the table from the CSVs
    python3 bench/model_validation.py --check     exit 1 when the table is not what the CSVs give
    python3 bench/model_validation.py --stale-ptx-alone GPU
                                                  the kernels whose rows from the PTX alone are missing or
                                                  older than the model's (for bench/run.sh to model again)

The modeled and the measured numbers stand in columns of their own, each labelled; their ratio is the
model's error on that row. The summary says how many rows are within 25% and the median error. Nothing is
fitted: the model's figures come from the GPU files, never from these measurements. Beside each, the same
kernel modeled from its PTX alone (bench/results/modeled/ptx_alone/<gpu>.csv: conv bench --emulate --model
GPU --ptx-alone), as the model was before it read ptxas's machine code, so that what the machine code
changes is in the table, not only in the history.
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


def modeled_rows(gpu, ptx_alone=False):
    path = os.path.join(ROOT, "bench", "results", modeled_csv.FOLDER, PTX_ALONE if ptx_alone else "", gpu + ".csv")
    return modeled_csv.load(path) if os.path.exists(path) or not ptx_alone else []


PTX_ALONE = "ptx_alone"  # bench/results/modeled/ptx_alone/<gpu>.csv


def validation_pairs(gpu):
    """(modeled row, measured µs) for every counted row the GPU's CSV also measured."""
    measured = measured_rows(gpu)
    return [(r, 1000 * float(measured[(r["kernel"], r["layer"], r["n"])]["time_ms"])) for r in modeled_rows(gpu)
            if r["status"] == "counted" and (r["kernel"], r["layer"], r["n"]) in measured]


def summary(ratios, modeled, measured):
    """How near: within 25%, the median error, the range, the rank correlation."""
    within = sum(1 for x in ratios if 0.8 <= x <= 1.25)
    error = statistics.median(abs(x - 1) for x in ratios)
    return (f"{within} of them within 25% (modeled / measured from 0.8 to 1.25); the median error "
            f"{100 * error:.0f}%; from {min(ratios):.2f} to {max(ratios):.2f} times the measured time; a rank "
            f"correlation (Spearman) with the measurements of {spearman(modeled, measured):.2f}")


def table():
    lines = []
    for gpu in modeled_csv.gpus(os.path.join(ROOT, "bench", "results")):
        pairs = validation_pairs(gpu)
        if not pairs:
            continue
        label = modeled_csv.gpu_label(gpu)
        alone = {(r["kernel"], r["layer"], r["n"]): r for r in modeled_rows(gpu, ptx_alone=True)
                 if r["status"] == "counted"}
        ratios = [r["modeled_us"] / us for r, us in pairs]
        lines += [f"On the {label}: {len(pairs)} (kernel, layer) pairs, modeled and measured at the same batch; "
                  f"{summary(ratios, [r['modeled_us'] for r, _ in pairs], [us for _, us in pairs])}."]
        both = [(alone[(r["kernel"], r["layer"], r["n"])]["modeled_us"], us) for r, us in pairs
                if (r["kernel"], r["layer"], r["n"]) in alone]
        if both:
            lines += [f"Modeled from the PTX alone (each PTX instruction one machine instruction), {len(both)} of "
                      f"the pairs: {summary([a / us for a, us in both], [a for a, _ in both], [us for _, us in both])}."]
        lines += ["",
                  f"| kernel | layer | N | modeled on {label}, µs (a model, not a measurement) | measured on {label}, "
                  "µs (median) | modeled / measured | modeled from the PTX alone, µs (a model) | machine "
                  "instructions per PTX instruction issued | the modeled warps' top states (cycles per issued "
                  "machine instruction) |",
                  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for (r, us), ratio in zip(pairs, ratios):
            states = sorted(((v, s) for s, v in modeled_csv.per_issued(r).items() if s != "selected"), reverse=True)
            top = ", ".join(f"{s} {v:.2f}" for v, s in states[:2] if v > 0)
            a = alone.get((r["kernel"], r["layer"], r["n"]))
            from_ptx = f"{a['modeled_us']:,.1f}" if a else "not modeled"
            per_ptx = f"{r['issued'] / r['issued_ptx']:.2f}" if r["machine_code"] == "sass" else "not read"
            lines.append(f"| {r['kernel']} | {r['layer'].split('/')[-1]} | {r['n']} | {r['modeled_us']:,.1f} | "
                         f"{us:,.1f} | {ratio:.2f} | {from_ptx} | {per_ptx} | {top} |")
        lines.append("")
    if not lines:
        lines = ["No layer has been both modeled and measured on one GPU yet.", ""]
    return "\n".join(lines)


def ncu_rows(gpu):
    """(kernel, layer, n) -> Nsight Compute's row (bench/results/ncu/<gpu>.csv, bench/ncu_profile.py)."""
    path = os.path.join(ROOT, "bench", "results", "ncu", gpu + ".csv")
    if not os.path.exists(path):
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["kernel"], r["layer"], r["n"]): r for r in csv.DictReader(f)}


def top_states(per_issue, count=3):
    """'wait 2.22, short_scoreboard 0.70, ...': the states besides selected with the most cycles per issue."""
    states = sorted(((v, s) for s, v in per_issue.items() if s != "selected" and v >= 0.005), reverse=True)
    return ", ".join(f"{s} {v:.2f}" for v, s in states[:count])


def ncu_table():
    """The model against what Nsight Compute counted on the same GPU: machine instructions and warp states."""
    lines = []
    for gpu in modeled_csv.gpus(os.path.join(ROOT, "bench", "results")):
        counted = ncu_rows(gpu)
        both = [(r, counted[(r["kernel"], r["layer"], r["n"])]) for r in modeled_rows(gpu)
                if r["status"] == "counted" and (r["kernel"], r["layer"], r["n"]) in counted]
        pairs = [(r, m) for r, m in both if r["source_sha256"] == m["source_sha256"]]  # the same code
        if not pairs:
            continue
        label = modeled_csv.gpu_label(gpu)
        tool = f"Nsight Compute {pairs[0][1]['ncu']} on an {pairs[0][1]['gpu']}"
        rows, ratios, same_top, unmodeled, waits = [], [], 0, [], []
        for r, m in pairs:
            measured = {c[len("stall_"):]: float(v) for c, v in m.items() if c.startswith("stall_")}
            modeled = modeled_csv.per_issued(r)
            top_m, top_r = top_states(measured, 1).split(" ")[0], top_states(modeled, 1).split(" ")[0]
            same_top += top_m == top_r
            if measured.get("wait", 0.0) >= 0.1:
                waits.append(modeled.get("wait", 0.0) / measured["wait"])
            unmodeled.append(sum(v for s, v in measured.items() if s not in modeled_csv.STATES) /
                             (sum(measured.values()) or 1.0))
            one_kernel = m["kernels"] == "1" and r["sm_blocks"] and r["machine_code"] == "sass"
            if one_kernel:
                per_block = int(m["inst_executed"]) / int(m["blocks"])
                ratio = r["issued"] / r["sm_blocks"] / per_block
                ratios.append(ratio)
                inst = f"{per_block:,.0f} | {r['issued'] / r['sm_blocks']:,.0f} | {ratio:.2f}"
            else:
                inst = f"{m['kernels']} kernels | not compared | "
            rows.append(f"| {r['kernel']} | {r['layer'].split('/')[-1]} | {r['n']} | {inst} | "
                        f"{sum(measured.values()):.2f}: {top_states(measured)} | "
                        f"{sum(modeled.values()):.2f}: {top_states(modeled)} |")
        within = sum(1 for x in ratios if 0.9 <= x <= 1.1)
        lines += [f"On the {label}, against {tool}: {len(pairs)} (kernel, layer) pairs at the same batch. Machine "
                  f"instructions per block, on the {len(ratios)} pairs that launch one kernel: modeled / measured "
                  f"from {min(ratios):.2f} to {max(ratios):.2f}, median {statistics.median(ratios):.2f}, "
                  f"{within} within 10%. The state that held the warps most (besides `selected`) is the same in "
                  f"{same_top} of the {len(pairs)}. `wait` cycles per issued instruction (a fixed-latency "
                  f"dependency, held by the stall counts), modeled / measured on the {len(waits)} pairs where the "
                  f"hardware's is 0.1 or more: from {min(waits):.2f} to {max(waits):.2f}, median "
                  f"{statistics.median(waits):.2f}, {sum(1 for x in waits if 0.8 <= x <= 1.25)} within a quarter. "
                  f"States the model does not have (`dispatch_stall`, "
                  f"`branch_resolving`, `no_instruction`, `drain`, ...) hold a median "
                  f"{100 * statistics.median(unmodeled):.0f}% of the measured warp-cycles "
                  f"(at most {100 * max(unmodeled):.0f}%)." +
                  (f" Left out: {len(both) - len(pairs)} pairs profiled on older code than the model ran."
                   if len(both) > len(pairs) else ""), "",
                  f"| kernel | layer | N | warp instructions per block, measured (Nsight Compute) | modeled on "
                  f"{label} (a model, not a measurement) | modeled / measured | warp-cycles per issued "
                  "instruction, measured: in all, the top states | modeled (a model): in all, the top states |",
                  "| --- | --- | --- | ---: | ---: | ---: | --- | --- |"] + rows + [""]
    if not lines:
        lines = ["No kernel has been both modeled and profiled with Nsight Compute on one GPU yet.", ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--stale-ptx-alone", metavar="GPU")
    args = ap.parse_args(argv)
    try:
        return run(args)
    except modeled_csv.CsvError as e:
        print(f"model_validation: {e}", file=sys.stderr)
        return 1


def run(args):
    if args.stale_ptx_alone:
        # a kernel whose validated rows have no row from the PTX alone, or one modeled by other code
        alone = {(r["kernel"], r["layer"], r["n"]): r for r in modeled_rows(args.stale_ptx_alone, ptx_alone=True)}
        stale = {r["kernel"] for r, _ in validation_pairs(args.stale_ptx_alone)
                 if (r["kernel"], r["layer"], r["n"]) not in alone or
                 any(alone[(r["kernel"], r["layer"], r["n"])][d] != r[d] for d in ("source_sha256", "emulator_sha256"))}
        # (a fused row, 05i+bn+relu, is modeled with its kernel)
        print(",".join(sorted({k.split("+")[0] for k in stale})))
        return 0
    regenerate = "python3 bench/model_validation.py --write"
    return max(markers.refresh(README, "model-validation", table(), args.check, "model_validation", regenerate),
               markers.refresh(README, "model-vs-ncu", ncu_table(), args.check, "model_validation", regenerate))


if __name__ == "__main__":
    sys.exit(main())
