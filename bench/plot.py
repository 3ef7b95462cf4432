"""Plot the benchmark results CSVs (one per GPU) as PNGs.

    python3 bench/plot.py [--results DIR] [--out DIR]     (defaults: bench/results, docs)

For every DIR/<gpu>.csv written by the benchmark runner this writes, into --out:
  <gpu>_ladder.png     TFLOP/s of every kernel in chapter order, one panel per pass:
                       a bar at the geometric mean over layers, a dot per layer, with
                       cuDNN (geometric mean) and the measured hardware peak as lines, per
                       dtype and suite;
  <gpu>_roofline.png   arithmetic intensity vs TFLOP/s of every (kernel, layer), coloured by chapter, under
                       the measured copy-bandwidth slope and compute roofs;
  <gpu>_pct_cudnn.png  % of cuDNN for every kernel x layer, one heat-map panel per pass.
From DIR/emulator.csv (`conv bench --emulate`: counts, no times) it writes
  emulator_bound_ladder.png   every kernel's bound from counts at an H100's published peaks
                       (bench/emulator_csv.py), on each chapter's reference layers, coloured by
                       the resource that sets it: a bound from counts, never a measurement.
From DIR/modeled/<gpu>.csv (`conv bench --emulate --model GPU`: the timing model's, no measurement) it writes
  modeled_<gpu>_ladder.png    every kernel's modeled time on its chapter's reference layers, the bound from
                       counts marked on each bar, and the time measured on that GPU, where a run
                       exists, drawn apart (a diamond, never a bar);
  modeled_<gpu>_states.png    why: the modeled warp-cycles per issued instruction, stacked by warp state
                       (Nsight Compute's names);
  modeled_h100_vs_a100.png    the kernels both GPUs run, modeled on each, side by side.
Only rows with status `pass` and a time are plotted (and not chapter 10's whole blocks); the heat map greys out `fail`
and unsupported (n/s) cells. Reads only the CSVs, never the runner's stdout.
A malformed CSV prints one line `plot: FILE: what is wrong` to stderr and exits 1.
"""

import argparse
import glob
import math
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import emulator_csv  # noqa: E402
import modeled_csv  # noqa: E402
from results_csv import (DTYPE_LABEL, PASSES, CsvError, kernel_key, layer_key,  # noqa: E402
                         layer_name_labels, load)

plt = LogNorm = Line2D = Patch = None  # set by import_matplotlib()

FIGSIZE = (10, 5.5)  # inches; at DPI this is 1000 x 550 pixels
DPI = 100
PASS_MARKER = {"fprop": "o", "dgrad": "s", "wgrad": "^"}
CUDNN_COLOR = "#c0392b"
PEAK_COLOR = "#222222"
BAR_COLOR = "#cfdbe8"


def import_matplotlib():
    """Import matplotlib (Agg) only once the CSVs are known good, so that the error and
    'no results' paths print exactly their one line (matplotlib may warn on stderr,
    e.g. while building its font cache)."""
    global plt, LogNorm, Line2D, Patch
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    plt.rcParams.update({"font.size": 8.5, "axes.titlesize": 9.5, "legend.fontsize": 7.5,
                         "xtick.labelsize": 7.5, "ytick.labelsize": 7.5})


# ---------------------------------------------------------------- data helpers

def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def cudnn_tflops(row):
    """cuDNN's rate on the same problem: same FLOPs, its own time."""
    if row["cudnn_ms"] is None or row["cudnn_ms"] <= 0:
        return None
    return row["tflops"] * row["time_ms"] / row["cudnn_ms"]


def pct_cudnn(row):
    if row["pct_cudnn"] is not None:
        return row["pct_cudnn"]
    return 100 * row["cudnn_ms"] / row["time_ms"] if row["cudnn_ms"] else None


def kernels_of(rows):
    """One representative row per kernel id, in chapter/id order."""
    first = {}
    for r in rows:
        first.setdefault(r["kernel"], r)
    return sorted(first.values(), key=kernel_key)


def latest(rows):
    """(kernel, layer_key) -> row; a later row for the same problem wins (a rerun)."""
    return {(r["kernel"], layer_key(r)): r for r in rows}


def cudnn_by_layer(rows):
    """layer_key -> median cuDNN TFLOP/s over the rows that timed it."""
    found = {}
    for r in rows:
        t = cudnn_tflops(r)
        if t:
            found.setdefault(layer_key(r), []).append(t)
    return {k: statistics.median(v) for k, v in found.items()}


def suite_of(row):
    return row["layer"].split("/")[0]


def kernel_groups(kernels):
    """Consecutive runs of kernels with the same dtype, measured on the same suite:
    [((dtype, suite), [kernel rows])]. Each group gets its own peak and cuDNN lines: chapter 09's
    depthwise layers (memory-bound, a few TFLOP/s) would drag a cuDNN mean over resnet50's down."""
    groups = []
    for k in kernels:
        key = (k["dtype"], suite_of(k))
        if groups and groups[-1][0] == key:
            groups[-1][1].append(k)
        else:
            groups.append((key, [k]))
    return groups


def title(fig, what, results):
    fig.suptitle(f"{what} — {results.gpu()}, {results.date()}  ({results.versions()})",
                 fontsize=10.5)


def short(label, width=30):
    return label if len(label) <= width else label[:width - 1] + "…"


# ---------------------------------------------------------------- 1. the ladder

GROUP_GAP = 0.6  # extra x space between two groups of kernels (dtype, suite) in a pass


def ladder_width(prow):
    kernels = kernels_of(prow)
    return len(kernels) + GROUP_GAP * len(kernel_groups(kernels))


def draw_ladder_panel(ax, results, prow, layer_color):
    """Bars and dots of one pass; returns every y value drawn and the bars' (x, mean)."""
    layers = list(layer_color)
    measured = latest(prow)
    x, ticks, ticklabels, values, bars = 0.0, [], [], [], []
    for (dtype, suite), kernels in kernel_groups(kernels_of(prow)):
        if x > 0:
            ax.axvline(x - (1 + GROUP_GAP) / 2, color="#999999", lw=0.6, ls=":")
        x_first = x
        for k in kernels:
            vals = [(r["layer"], r["tflops"]) for (kid, _), r in measured.items() if kid == k["kernel"]]
            mean = geomean(v for _, v in vals)
            ax.bar(x, mean, width=0.8, color=BAR_COLOR, edgecolor="#5a7894", zorder=2)
            for lk, v in vals:  # one dot per layer, spread across the bar in layer order
                offset = (layers.index(lk) - (len(layers) - 1) / 2) * 0.6 / len(layers)
                ax.plot(x + offset, v, "o", ms=4, color=layer_color[lk],
                        markeredgecolor="white", markeredgewidth=0.4, zorder=3)
            values += [v for _, v in vals]
            bars.append((x, mean))
            ticks.append(x)
            ticklabels.append(k["kernel"])
            x += 1
        span = (x_first - 0.45, x - 1 + 0.45)
        peak = results.peak_tflops(dtype)
        cudnn = geomean(cudnn_by_layer([r for r in prow
                                        if r["dtype"] == dtype and suite_of(r) == suite]).values())
        for value, color, style, name in (
                (peak, PEAK_COLOR, "-", f"{DTYPE_LABEL.get(dtype, dtype)} peak"),
                (cudnn, CUDNN_COLOR, "--", "cuDNN")):
            if value:
                ax.hlines(value, *span, colors=color, linestyles=style, lw=1.4, zorder=4)
                ax.annotate(f"{name} {value:.3g}", (span[0], value), xytext=(2, 2),
                            textcoords="offset points", fontsize=7, color=color, zorder=5,
                            bbox=dict(fc="white", ec="none", alpha=0.7, pad=0.5))
                values.append(value)
        x += GROUP_GAP
    ax.set_xticks(ticks, ticklabels, rotation=90)
    ax.set_xlim(-0.7, x - GROUP_GAP - 0.3)
    ax.grid(axis="y", which="major", color="#e4e4e4", zorder=0)
    return values, bars


def plot_ladder(results, path):
    rows = results.passed()
    passes = [p for p in PASSES if any(r["pass"] == p for r in rows)]
    # one colour per layer name: the CPU loop's rows (the same layers at N=1) share their layer's
    layers = list(dict.fromkeys(r["layer"] for r in rows))
    labels = layer_name_labels(layers)
    cmap = plt.get_cmap("tab10" if len(layers) <= 10 else "tab20")
    layer_color = {k: cmap(i % cmap.N) for i, k in enumerate(layers)}

    by_pass = {p: [r for r in rows if r["pass"] == p] for p in passes}
    fig, axes = plt.subplots(1, len(passes), figsize=FIGSIZE, dpi=DPI, sharey=True, squeeze=False,
                             layout="constrained",
                             gridspec_kw={"width_ratios": [ladder_width(by_pass[p]) for p in passes]})
    values, panels = [], []
    for ax, p in zip(axes[0], passes):
        panel_values, bars = draw_ladder_panel(ax, results, by_pass[p], layer_color)
        values += panel_values
        panels.append((ax, bars))
        ax.set_title(p)
    bottom = min(values) / 2.5
    axes[0][0].set(yscale="log", ylim=(bottom, max(values) * 2.5), ylabel="TFLOP/s (log scale)")
    for ax, bars in panels:  # the geometric mean, written up the foot of its bar
        for x, mean in bars:
            ax.annotate(f"{mean:.3g}", (x, bottom), xytext=(0, 3), textcoords="offset points",
                        rotation=90, ha="center", va="bottom", fontsize=7, zorder=4)

    handles = [Patch(facecolor=BAR_COLOR, edgecolor="#5a7894", label="geometric mean\nover layers")]
    handles += [Line2D([], [], ls="", marker="o", color=layer_color[k], label=short(labels[k], 24))
                for k in layers]
    if any(cudnn_tflops(r) for r in rows):
        handles.append(Line2D([], [], color=CUDNN_COLOR, ls="--", label="cuDNN (geo. mean)"))
    handles.append(Line2D([], [], color=PEAK_COLOR, label="measured peak\n(GEMM, per dtype)"))
    fig.legend(handles=handles, loc="outside right center", frameon=False)
    title(fig, "Kernel ladder, TFLOP/s", results)
    return save(fig, path)


# ---------------------------------------------------------------- 2. the roofline

def plot_roofline(results, path):
    rows = results.passed()
    kernels = kernels_of(rows)
    # a colour per chapter: dozens of kernels, one colour each, would be a legend no one can match
    chapters = list(dict.fromkeys(k["chapter"] for k in kernels))
    cmap = plt.get_cmap("tab10" if len(chapters) <= 10 else "tab20")
    chapter_color = {c: cmap(i % cmap.N) for i, c in enumerate(chapters)}
    color = {k["kernel"]: chapter_color[k["chapter"]] for k in kernels}

    fig, ax = plt.subplots(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    ai = lambda r: 1000 * r["tflops"] / r["gbps"]  # noqa: E731  FLOP per byte of minimum traffic
    for r in latest(rows).values():
        ax.plot(ai(r), r["tflops"], PASS_MARKER[r["pass"]], ms=6, color=color[r["kernel"]],
                markeredgecolor="black", markeredgewidth=0.4, zorder=3)
    cudnn_points = []  # one per (pass, dtype, layer): medians over the rows that timed it
    groups = {}
    for r in rows:
        if cudnn_tflops(r):
            groups.setdefault((r["pass"], r["dtype"], layer_key(r)), []).append(r)
    for (p, _, _), group in groups.items():
        x = statistics.median(map(ai, group))
        y = statistics.median(map(cudnn_tflops, group))
        cudnn_points.append((x, y, p))
        ax.plot(x, y, PASS_MARKER[p], ms=7, mfc="none", color=CUDNN_COLOR, mew=0.9, alpha=0.8,
                zorder=2)

    peak_gbps = results.peak_gbps()
    roofs = {d: results.peak_tflops(d) for d in dict.fromkeys(r["dtype"] for r in rows)}
    xs = [ai(r) for r in rows]
    ridges = [1000 * t / peak_gbps for t in roofs.values()]
    xmin, xmax = min(xs + ridges) / 4, max(xs + ridges) * 4
    ys = [r["tflops"] for r in rows] + [y for _, y, _ in cudnn_points]
    ax.set(xscale="log", yscale="log", xlim=(xmin, xmax),
           ylim=(min(ys + [xmin * peak_gbps / 1000]) / 2, max(ys + list(roofs.values())) * 3))
    ax.plot([xmin, max(ridges)], [xmin * peak_gbps / 1000, max(ridges) * peak_gbps / 1000],
            color=PEAK_COLOR, lw=1.4, zorder=1)
    for (dtype, peak), ridge in zip(roofs.items(), ridges):
        ax.plot([ridge, xmax], [peak, peak], color=PEAK_COLOR, lw=1.4, zorder=1)
        ax.annotate(f"{DTYPE_LABEL.get(dtype, dtype)} peak {peak:.3g} TFLOP/s", (xmax, peak),
                    xytext=(-4, 3), textcoords="offset points", ha="right", fontsize=7.5)
    slope_text = ax.annotate(f"copy bandwidth {peak_gbps / 1000:.3g} TB/s", (xmin * 1.6,
                             xmin * 1.6 * peak_gbps / 1000), xytext=(4, 4),
                             textcoords="offset points", fontsize=7.5, rotation_mode="anchor")
    ax.set_xlabel("arithmetic intensity (FLOP per byte of minimum traffic, log)")
    ax.set_ylabel("TFLOP/s (log)")
    ax.grid(which="major", color="#e4e4e4", zorder=0)

    def chapter_label(chapter):
        ids = list(dict.fromkeys(k["kernel"].partition("+")[0] for k in kernels if k["chapter"] == chapter))
        return f"chapter {chapter}: {ids[0]}" + (f" to {ids[-1]}" if len(ids) > 1 else "")
    handles = [Line2D([], [], ls="", marker="o", color=chapter_color[c], markeredgecolor="black",
                      markeredgewidth=0.4, label=chapter_label(c)) for c in chapters]
    handles += [Line2D([], [], ls="", marker="", label="")]
    handles += [Line2D([], [], ls="", marker=PASS_MARKER[p], color="grey", label=p)
                for p in PASSES if any(r["pass"] == p for r in rows)]
    if cudnn_points:
        handles.append(Line2D([], [], ls="", marker="o", mfc="none", color=CUDNN_COLOR,
                              label="cuDNN, same layer"))
    fig.legend(handles=handles, loc="outside right center", frameon=False,
               ncol=2 if len(handles) > 24 else 1)
    title(fig, "Roofline", results)
    fig.canvas.draw()  # fix the layout, then turn the slope label to the slope's screen angle
    (x0, y0), (x1, y1) = ax.transData.transform([(xmin, xmin * peak_gbps / 1000),
                                                 (xmax, xmax * peak_gbps / 1000)])
    slope_text.set_rotation(math.degrees(math.atan2(y1 - y0, x1 - x0)))
    return save(fig, path)


# ---------------------------------------------------------------- 3. % of cuDNN

CELL_STYLE = {  # status -> (face colour, text, text colour, legend entry)
    "fail": ("#8c8c8c", "fail", "white", "fail: wrong result"),
    "unsupported": ("#d9d9d9", "n/s", "black", "n/s: unsupported"),
    "no cudnn": ("#efefef", "n/a", "black", "n/a: no cuDNN time"),
}


def heat_cell(row, norm, cmap):
    """(face colour, text, text colour) of one kernel x layer cell; row may be None."""
    if row is None:
        return "white", "", "black"
    value = pct_cudnn(row) if row["status"] == "pass" else None
    if row["status"] != "pass" or value is None:
        return CELL_STYLE[row["status"] if row["status"] != "pass" else "no cudnn"][:3]
    face = cmap(norm(value))
    luminance = 0.299 * face[0] + 0.587 * face[1] + 0.114 * face[2]
    return face, f"{value:.2g}" if value < 10 else f"{value:.0f}", \
        "white" if luminance < 0.45 else "black"


def plot_pct_cudnn(results, path):
    rows = results.rows  # fail / unsupported cells are shown too, greyed
    passes = [p for p in PASSES if any(r["pass"] == p and r["status"] == "pass" for r in rows)]
    # a row per layer name: the CPU loop's cells (the same layers at N=1) sit in their layer's row
    layer_order = list(dict.fromkeys(r["layer"] for r in rows if r["pass"] in passes))
    labels = layer_name_labels(layer_order)
    # 1% (red) .. 10% (yellow) .. 100% (green); beyond either end the end colour
    norm = LogNorm(vmin=1, vmax=100)
    cmap = plt.get_cmap("RdYlGn")

    widths = [len(kernels_of([r for r in rows if r["pass"] == p])) for p in passes]
    fig, axes = plt.subplots(1, len(passes), figsize=FIGSIZE, dpi=DPI, sharey=True, squeeze=False,
                             layout="constrained", gridspec_kw={"width_ratios": widths})
    for ax, p in zip(axes[0], passes):
        prow = [r for r in rows if r["pass"] == p]
        kernels = kernels_of(prow)
        cells = {(r["kernel"], r["layer"]): r for r in prow}
        for i, k in enumerate(kernels):
            for j, lk in enumerate(layer_order):
                face, text, ink = heat_cell(cells.get((k["kernel"], lk)), norm, cmap)
                ax.add_patch(plt.Rectangle((i - 0.5, j - 0.5), 1, 1, facecolor=face,
                                           edgecolor="white", lw=1.5))
                ax.text(i, j, text, ha="center", va="center", fontsize=7.5, color=ink)
        ax.set_xlim(-0.5, len(kernels) - 0.5)
        ax.set_ylim(len(layer_order) - 0.5, -0.5)
        ax.set_xticks(range(len(kernels)), [k["kernel"] for k in kernels], rotation=90)
        ax.set_yticks(range(len(layer_order)), [short(labels[k], 30) for k in layer_order])
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
        ax.set_title(p)
    axes[0][0].set_ylabel("layer")
    bar = fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=axes[0].tolist(),
                       shrink=0.8, pad=0.02, extend="both")
    bar.set_label("% of cuDNN (log colour scale)")
    fig.legend(handles=[Patch(fc=face, ec="#bbbbbb", label=name)
                        for face, _, _, name in CELL_STYLE.values()],
               loc="outside lower right", ncol=3, frameon=False)
    no_cudnn = "" if any(pct_cudnn(r) for r in results.passed()) else " (no cuDNN times in this CSV)"
    title(fig, "% of cuDNN" + no_cudnn, results)
    return save(fig, path)


# ---------------------------------------------------------------- driver

def save(fig, path):
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


# Chapter 10's rows time a whole ResNet block (several convolutions and their epilogues), not one
# convolution on one layer: they would be misplaced among the kernels and shift cuDNN's per-layer
# medians. They have their own table in chapter 10's README (bench/tables.py).
NOT_ONE_CONVOLUTION = {"10"}


def load_plottable(csv_path):
    """load() plus the one extra demand of plotting: something that passed. Raises CsvError."""
    results = load(csv_path)
    results.rows = [r for r in results.rows if r["chapter"] not in NOT_ONE_CONVOLUTION]
    if not results.passed():
        raise CsvError("no row with status pass and a time: nothing to plot")
    return results


def plot_csv(results, out_dir):
    """Write the three PNGs for one loaded CSV; return their paths."""
    stem = os.path.join(out_dir, os.path.splitext(os.path.basename(results.path))[0])
    return [plot_ladder(results, f"{stem}_ladder.png"),
            plot_roofline(results, f"{stem}_roofline.png"),
            plot_pct_cudnn(results, f"{stem}_pct_cudnn.png")]


RESOURCE_COLOR = {"tensor cores": "#2e86c1", "fp32 pipes": "#28b463", "issue slots": "#af7ac5",
                  "shared memory": "#f39c12", "DRAM": "#c0392b"}


def plot_bound_ladder(rows, path):
    """The counted (kernel, layer) rows as bars of their bound from counts in µs (log), coloured by the
    resource that sets it: one panel per pass and layer, so that only kernels solving the same problem
    stand side by side, in chapter order top to bottom."""
    h100 = emulator_csv.h100_figures()
    counted = [r for r in rows if r["status"] == "counted"]
    panels = {}
    for r in counted:
        panels.setdefault((r["pass"], r["layer"], r["n"]), []).append(r)
    heights = [len(group) for group in panels.values()]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 0.3 * sum(heights) + 0.9 * len(panels) + 1.2),
                             gridspec_kw={"height_ratios": heights}, squeeze=False, sharex=True)
    everything = [emulator_csv.floor(r, h100)[0] for r in counted]
    low, high = 10 ** math.floor(math.log10(min(everything))), 10 ** math.ceil(math.log10(max(everything)) + 0.3)
    used = set()
    for ax, ((pass_, layer, n), group) in zip(axes[:, 0], panels.items()):
        floors = [emulator_csv.floor(r, h100) for r in group]
        used |= {resource for _, resource in floors}
        y = list(range(len(group)))[::-1]
        ax.barh(y, [us for us, _ in floors], color=[RESOURCE_COLOR[resource] for _, resource in floors])
        ax.set_yticks(y, [f"{r['kernel']} ({r['dtype']})" for r in group], fontsize=8)
        for yy, (us, _) in zip(y, floors):
            ax.text(us, yy, f" {us:,.0f} µs" if us >= 100 else f" {us:.3g} µs", va="center", fontsize=7)
        ax.set_xscale("log")
        ax.set_xlim(low, high)  # one scale for every panel: bars compare across them too
        ax.set_title(f"{pass_}, {layer} (N={n})", fontsize=9, loc="left")
    axes[-1, 0].set_xlabel("bound from counts, µs (log scale): the least time the busiest resource needs at an "
                           "H100 SXM5's published peaks")
    axes[0, 0].legend(handles=[Patch(color=RESOURCE_COLOR[name], label=f"limited by {name}") for name in RESOURCE_COLOR
                               if name in used], fontsize=8, loc="lower right")
    fig.suptitle("Bound from the emulator's counts: not a measurement, not a ranking by speed", fontsize=11, x=0.02,
                 ha="left")
    fig.text(0.02, 0.965, "Counted by the PTX emulator (bench/results/emulator.csv). A kernel far above its bar is "
             "held back by what the counts leave out: latency, occupancy, caches.", fontsize=8, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return save(fig, path)


MODELED_COLOR = "#5d8aa8"
STATE_COLOR = {"selected": "#2e86c1", "not_selected": "#aed6f1", "wait": "#f7dc6f", "short_scoreboard": "#f39c12",
               "long_scoreboard": "#c0392b", "math_pipe_throttle": "#28b463", "mio_throttle": "#d7bde2",
               "lg_throttle": "#6c3483", "barrier": "#7f8c8d", "membar": "#34495e"}


def modeled_panels(rows):
    """(pass, layer, n) -> its rows in chapter order: only kernels solving one problem share a panel."""
    panels = {}
    for r in rows:
        if r["status"] == "counted":
            panels.setdefault((r["pass"], r["layer"], r["n"]), []).append(r)
    return panels


def measured_times(results, gpu):
    """(kernel, layer, n) -> µs measured on the GPU the model models, where bench/results/<gpu>.csv has it."""
    path = os.path.join(results, gpu + ".csv")
    if not os.path.exists(path):
        return {}
    import csv
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["kernel"], r["layer"], r["n"]): 1000 * float(r["time_ms"]) for r in csv.DictReader(f)
                if r["status"] == "pass" and r["time_ms"]}


def plot_modeled_ladder(rows, counts, measured, gpu, path):
    """Modeled µs per kernel (bars, log), the bound from counts at the same GPU's peaks as a tick on each bar,
    the measured time as a hollow diamond: three kinds of number, three kinds of mark, never one bar."""
    figures = emulator_csv.gpu_figures(gpu)
    bound = {(r["kernel"], r["layer"], str(r["n"])): emulator_csv.floor(r, figures)[0] for r in counts or []
             if r["status"] == "counted"}
    panels = modeled_panels(rows)
    heights = [len(group) for group in panels.values()]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 0.3 * sum(heights) + 0.9 * len(panels) + 1.4),
                             gridspec_kw={"height_ratios": heights}, squeeze=False, sharex=True)
    values = [r["modeled_us"] for g in panels.values() for r in g] + list(bound.values()) + list(measured.values())
    values = [v for v in values if v > 0]
    low, high = 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values)) + 0.3)
    drew_bound = drew_measured = False
    for ax, ((pass_, layer, n), group) in zip(axes[:, 0], panels.items()):
        y = list(range(len(group)))[::-1]
        ax.barh(y, [r["modeled_us"] for r in group], color=MODELED_COLOR)
        ax.set_yticks(y, [r["kernel"] for r in group], fontsize=8)
        for yy, r in zip(y, group):
            us = r["modeled_us"]
            ax.text(us, yy, f" {us:,.0f} µs" if us >= 100 else f" {us:.3g} µs", va="center", fontsize=7)
            key = (r["kernel"], r["layer"], r["n"])
            if key in bound:
                ax.plot([bound[key]] * 2, [yy - 0.4, yy + 0.4], color="black", lw=2)
                drew_bound = True
            if key in measured:
                ax.plot(measured[key], yy, marker="D", ms=6, mfc="none", mec=CUDNN_COLOR, ls="")
                drew_measured = True
        ax.set_xscale("log")
        ax.set_xlim(low, high)
        ax.set_title(f"{pass_}, {layer} (N={n})", fontsize=9, loc="left")
    axes[-1, 0].set_xlabel(f"µs (log scale), {modeled_csv.caption(gpu)}")
    handles = [Patch(color=MODELED_COLOR, label="modeled time (the emulator's timing model)")]
    if drew_bound:
        handles.append(Line2D([], [], color="black", lw=2, label=f"bound from counts (at the {modeled_csv.gpu_label(gpu)}'s published peaks)"))
    if drew_measured:
        handles.append(Line2D([], [], marker="D", mfc="none", mec=CUDNN_COLOR, ls="",
                              label=f"measured on {modeled_csv.gpu_label(gpu)}"))
    axes[0, 0].legend(handles=handles, fontsize=8, loc="lower right")
    fig.suptitle(f"Each step's time, {modeled_csv.caption(gpu)}", fontsize=11, x=0.02, ha="left")
    fig.text(0.02, 0.965, "Bars: the timing model (bench/results/modeled/). Ticks: the bound from the emulator's "
             "counts. Diamonds: measured, where a GPU run of the same layer and batch exists.", fontsize=8,
             ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return save(fig, path)


def plot_modeled_states(rows, gpu, path):
    """Why each step takes its time: modeled warp-cycles per issued instruction, stacked by warp state."""
    panels = modeled_panels(rows)
    heights = [len(group) for group in panels.values()]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 0.3 * sum(heights) + 0.9 * len(panels) + 1.4),
                             gridspec_kw={"height_ratios": heights}, squeeze=False, sharex=True)
    used = set()
    for ax, ((pass_, layer, n), group) in zip(axes[:, 0], panels.items()):
        y = list(range(len(group)))[::-1]
        left = [0.0] * len(group)
        for state in modeled_csv.STATES:
            widths = [modeled_csv.per_issued(r)[state] for r in group]
            if any(w > 0 for w in widths):
                used.add(state)
                ax.barh(y, widths, left=left, color=STATE_COLOR[state])
                left = [a + b for a, b in zip(left, widths)]
        ax.set_yticks(y, [r["kernel"] for r in group], fontsize=8)
        ax.set_title(f"{pass_}, {layer} (N={n})", fontsize=9, loc="left")
    widest = max(sum(modeled_csv.per_issued(r).values()) for group in panels.values() for r in group)
    axes[-1, 0].set_xlim(0, widest * 1.05)
    axes[-1, 0].set_xlabel("warp-cycles per issued instruction, by warp state (Nsight Compute's names)\n"
                           + modeled_csv.caption(gpu))
    axes[0, 0].legend(handles=[Patch(color=STATE_COLOR[s], label=s) for s in modeled_csv.STATES if s in used],
                      fontsize=7, loc="lower right", ncol=2)
    fig.suptitle(f"Where each step's warps wait, {modeled_csv.caption(gpu)}", fontsize=11, x=0.02, ha="left")
    fig.text(0.02, 0.965, "A warp issues in 'selected' cycles; every other state is a cycle it could not "
             "(or another warp was picked: not_selected).", fontsize=8, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return save(fig, path)


def plot_modeled_pair(first, second, gpus, path):
    """The same kernels modeled on two GPUs, side by side: which steps gain from the newer one, and how much."""
    other = {(r["kernel"], r["layer"], r["n"]): r for r in second if r["status"] == "counted"}
    panels = {key: [r for r in group if (r["kernel"], r["layer"], r["n"]) in other]
              for key, group in modeled_panels(first).items()}
    panels = {key: group for key, group in panels.items() if group}
    heights = [len(group) for group in panels.values()]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 0.42 * sum(heights) + 0.9 * len(panels) + 1.4),
                             gridspec_kw={"height_ratios": heights}, squeeze=False, sharex=True)
    colors = (MODELED_COLOR, "#e59866")
    values = [r["modeled_us"] for g in panels.values() for r in g] + [r["modeled_us"] for r in other.values()]
    low, high = 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values)) + 0.3)
    for ax, ((pass_, layer, n), group) in zip(axes[:, 0], panels.items()):
        y = list(range(len(group)))[::-1]
        for shift, color, rows in ((0.2, colors[0], group),
                                   (-0.2, colors[1], [other[(r["kernel"], r["layer"], r["n"])] for r in group])):
            ax.barh([v + shift for v in y], [r["modeled_us"] for r in rows], height=0.4, color=color)
        for yy, r in zip(y, group):
            ratio = other[(r["kernel"], r["layer"], r["n"])]["modeled_us"] / r["modeled_us"]
            ax.text(high, yy, f"{ratio:.2f}× ", va="center", ha="right", fontsize=7)
        ax.set_yticks(y, [r["kernel"] for r in group], fontsize=8)
        ax.set_xscale("log")
        ax.set_xlim(low, high)
        ax.set_title(f"{pass_}, {layer} (N={n})", fontsize=9, loc="left")
    labels = [modeled_csv.gpu_label(g) for g in gpus]
    axes[-1, 0].set_xlabel(f"modeled µs (log scale); at the right, the {labels[1]}'s time over the {labels[0]}'s "
                           "(a model, not a measurement)")
    axes[0, 0].legend(handles=[Patch(color=c, label=f"modeled on {label}") for c, label in zip(colors, labels)],
                      fontsize=8, loc="lower left")
    fig.suptitle(f"One step, two GPUs: modeled on {labels[0]} and on {labels[1]} (a model, not a measurement)",
                 fontsize=11, x=0.02, ha="left")
    fig.text(0.02, 0.965, "The same PTX, the same model, each GPU's own figures (bench/<gpu>.json); kernels only one "
             "of them runs (chapter 08's sm_90a code) are left out.", fontsize=8, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return save(fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default="bench/results", help="folder of <gpu>.csv files")
    ap.add_argument("--out", default="docs", help="folder for the PNGs")
    args = ap.parse_args(argv)

    counts_path = os.path.join(args.results, emulator_csv.CSV_NAME)
    counts = None
    if os.path.exists(counts_path):
        try:
            counts = emulator_csv.load(counts_path)
        except emulator_csv.CsvError as e:
            print(f"plot: {counts_path}: {e}", file=sys.stderr)
            return 1
    csvs = sorted(p for p in glob.glob(os.path.join(args.results, "*.csv")) if os.path.basename(p) != emulator_csv.CSV_NAME)
    if not csvs:
        print(f"plot: no GPU results in {args.results}: the measured plots wait for a run on a GPU")
    loaded = []
    for csv_path in csvs:  # check every CSV before drawing any
        try:
            loaded.append(load_plottable(csv_path))
        except CsvError as e:
            print(f"plot: {csv_path}: {e}", file=sys.stderr)
            return 1
    modeled = {}
    for gpu in modeled_csv.gpus(args.results):
        path = os.path.join(args.results, modeled_csv.FOLDER, gpu + ".csv")
        try:
            modeled[gpu] = modeled_csv.load(path)
        except modeled_csv.CsvError as e:
            print(f"plot: {path}: {e}", file=sys.stderr)
            return 1
    if not loaded and not counts and not modeled:
        return 0
    import_matplotlib()
    os.makedirs(args.out, exist_ok=True)
    for results in loaded:
        for png in plot_csv(results, args.out):
            print(png)
    if counts:
        print(plot_bound_ladder(counts, os.path.join(args.out, "emulator_bound_ladder.png")))
    for gpu, rows in modeled.items():
        print(plot_modeled_ladder(rows, counts, measured_times(args.results, gpu), gpu,
                                  os.path.join(args.out, f"modeled_{gpu}_ladder.png")))
        print(plot_modeled_states(rows, gpu, os.path.join(args.out, f"modeled_{gpu}_states.png")))
    if "h100" in modeled and "a100" in modeled:
        print(plot_modeled_pair(modeled["h100"], modeled["a100"], ("h100", "a100"),
                                os.path.join(args.out, "modeled_h100_vs_a100.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
