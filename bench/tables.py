"""Print a results CSV as GitHub-markdown tables, or write them into the READMEs.

    python3 bench/tables.py CSV [CSV ...] [--chapter 02] [--pass fprop]
    python3 bench/tables.py CSV [CSV ...] [--chapter 02] [--pass fprop] --readme FILE --marker NAME
    python3 bench/tables.py CSV [CSV ...] --readmes ROOT --marker results [--check]
    python3 bench/tables.py --counters bench/results/emulator.csv --chapter 05
    python3 bench/tables.py --counters bench/results/emulator.csv --readmes ROOT [--check]
    python3 bench/tables.py --modeled bench/results/modeled/h100.csv [--chapter 05 | --readmes ROOT [--check]]

The first form prints, for each CSV (one per GPU) with matching rows, a line naming the GPU, CUDA and
cuDNN versions and date, then a table per pass, data type and epilogue: a row per kernel, a column per
layer, each cell the median time in ms (the fastest of ours in bold; FAIL, or a dash where unsupported),
and cuDNN's row under it; TFLOP/s, GB/s and the rest stay in the CSV. The second form replaces whatever
lies between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in FILE with that text; the third does it in
every chapter README that has the pair (a chapter no CSV has times for says it is not yet measured), and
with --check writes nothing and exits 1, naming each README whose section differs: chapter READMEs are
generated from the measurements, never typed.
With --counters the CSV is the emulator's (`conv bench --emulate`): the table shows what each kernel
executed on its chapter's reference layers, counted, and the bound from counts at an H100's published
peaks (bench/emulator_csv.py). --readmes writes that table between `<!-- counters:begin -->` and
`<!-- counters:end -->` in every chapter README that has the pair, and rewrites every number the text
of README.md, docs/*.md and the chapter READMEs quotes from the counts (the markers of
bench/prose_numbers.py: `<!--= {05b/res4_3x3/warp_inst} -->1.08e8<!--/-->`); with --check it writes
nothing and exits 1, naming the README (and README:line for each stale number), when one differs from
what the CSV gives.
With --modeled the CSV is the timing model's (`conv bench --emulate --model GPU`): each kernel's modeled
time on its chapter's reference layers and its largest warp stalls, labelled as modeled; --readmes writes it
between `<!-- modeled:begin -->` and `<!-- modeled:end -->` in every chapter README that has the pair.
A malformed CSV, or missing markers, prints one line to stderr and exits 1.
"""

import argparse
import glob
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import emulator_csv  # noqa: E402
from markers import replace_between_markers  # noqa: E402
import modeled_csv  # noqa: E402
import prose_numbers  # noqa: E402
from results_csv import DTYPE_LABEL, CsvError, kernel_key, layer_key, layer_name_labels, load  # noqa: E402

DASH = "–"


def fmt(value):
    """A number to about 3 significant figures: 352, 11.8, 0.0210; exponent if tiny or huge."""
    if value is None:
        return DASH
    if value == 0:
        return "0"
    if 1e-3 <= abs(value) < 1e6:
        return f"{value:.{max(0, 2 - math.floor(math.log10(abs(value))))}f}"
    return f"{value:.2e}"


def select(results, chapter=None, pass_=None):
    """Rows for one chapter and/or pass, sorted by kernel, then by layer as listed."""
    rows = results.rows
    if chapter:
        rows = [r for r in rows if r["chapter"] == chapter]
    if pass_:
        rows = [r for r in rows if r["pass"] == pass_]
    order = {key: i for i, key in enumerate(dict.fromkeys(layer_key(r) for r in results.rows))}
    return sorted(rows, key=lambda r: (kernel_key(r), r["pass"], order[layer_key(r)]))


def epilogue_of(row):
    """'bias+relu' for a fused-epilogue row such as 05i+bias+relu; '' for a plain kernel."""
    return row["kernel"].partition("+")[2]


def markdown(results, rows):
    """The GPU line, a blank line and one table per epilogue: a row per kernel, a column per layer,
    each cell the median time in ms (the fastest of ours in bold), and a last row for cuDNN's fastest
    algorithm on the same problem (its fused call for the epilogue rows)."""
    # a column per layer that some kernel here supports (the CPU loop's N=1 rows: marked)
    every_layer = list(dict.fromkeys(r["layer"] for r in rows))
    supported = {r["layer"] for r in rows if r["status"] != "unsupported"}
    rows = [r for r in rows if r["layer"] in supported]
    labels = layer_name_labels([layer for layer in every_layer if layer in supported])
    batch = {layer: max(r["n"] for r in rows if r["layer"] == layer) for layer in labels}
    reps = sorted({int(r["reps"]) for r in rows if r["status"] == "pass" and r["reps"].isdigit()})
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    shown = [k for k in kernels if any(r["kernel"] == k and r["status"] != "unsupported" for r in rows)]
    hidden = [k for k in kernels if k not in shown]
    runs = " or ".join(str(n) for n in reps) if reps else "no"
    lines = [f"Measured on **{results.gpu()}** ({results.versions()}), {results.date(rows)}: the median of "
             f"{runs} timed runs, in ms (source `{results.path}`, which also gives TFLOP/s, GB/s, % of "
             "cuDNN and the verification error of every row). Every row passed verification unless marked."]
    if hidden:
        lines += ["", f"Not shown: {', '.join(hidden)} (unsupported on every layer measured)."]
    if len(labels) < len(every_layer):
        lines += ["", f"Not shown: the run's {len(every_layer) - len(labels)} other layers, which no kernel here supports."]
    if any(r["n"] != batch[r["layer"]] for r in rows):
        lines += ["", "\\* at N=1: the CPU loop runs one image of the layer."]
    # a table per pass, data type and epilogue: cuDNN's row is only comparable within one
    groups = list(dict.fromkeys((r["pass"], r["dtype"], epilogue_of(r)) for r in rows if r["kernel"] in shown))
    for pass_, dtype, epilogue in groups:
        group = [r for r in rows if (r["pass"], r["dtype"], epilogue_of(r)) == (pass_, dtype, epilogue)
                 and r["kernel"] in shown]
        if len({(p, d) for p, d, _ in groups}) > 1:
            lines += ["", f"{pass_}, {DTYPE_LABEL.get(dtype, dtype)}" + (f", with {epilogue}" if epilogue else "") + ":"]
        cell = {(r["kernel"], r["layer"]): r for r in group}
        fastest = {layer: min((r["time_ms"] for r in group if r["layer"] == layer and r["status"] == "pass"
                               and r["n"] == batch[layer]), default=None) for layer in labels}
        lines += ["", "| kernel | " + " | ".join(labels.values()) + " |",
                  "| --- |" + " ---: |" * len(labels)]
        for kernel in dict.fromkeys(r["kernel"] for r in group):
            cells = []
            for layer in labels:
                r = cell.get((kernel, layer))
                if r is None or r["status"] == "unsupported":
                    cells.append(DASH)
                elif r["status"] == "fail":
                    cells.append("FAIL")
                else:
                    text = fmt(r["time_ms"]) + ("\\*" if r["n"] != batch[layer] else "")
                    cells.append(f"**{text}**" if r["time_ms"] == fastest[layer] else text)
            lines.append(f"| {kernel} | " + " | ".join(cells) + " |")
        cudnn = [next((r["cudnn_ms"] for r in group if r["layer"] == layer and r["cudnn_ms"]), None)
                 for layer in labels]
        if any(cudnn):
            name = f"cuDNN, fused {epilogue}" if epilogue else "cuDNN"
            lines.append(f"| {name} | " + " | ".join(fmt(v) for v in cudnn) + " |")
    return "\n".join(lines)


def not_measured(unsupported=()):
    """What a chapter's results section says while no GPU has timed its kernels."""
    why = (f" The GPU runs so far had no layer that {', '.join(unsupported)} support." if unsupported else "")
    return (f"Not yet measured on a GPU.{why} On a machine with one, `bash bench/gpu_session.sh` runs the\n"
            "benchmark and generates this table from its CSV (`python3 bench/tables.py bench/results/<gpu>.csv\n"
            "--readmes . --marker results`).")


def counters_markdown(rows, h100):
    """The emulator's counts of one chapter's kernels as a table, with its bound from counts."""
    def ratio(a, b):
        return a / b if b else None

    head = ["kernel", "layer", "blocks emulated", "warp instructions", "per m16n8k16 of work",
            "lanes active", "sectors per load", "sectors per store", "global traffic / minimum",
            "shared bank conflicts", "tensor FLOP / useful", "bound from counts", "limited by"]
    align = ["---", "---"] + ["---:"] * 10 + ["---"]
    lines = ["Counted by the PTX emulator (`conv bench --emulate`, `bench/results/emulator.csv`), not measured. "
             "A sample of each grid's blocks is emulated and the counts scaled to the grid (`emu/counters.h`). "
             "Warp instructions per m16n8k16 of work: for each 4,096 tensor-core FLOP (one `mma.sync` m16n8k16; "
             "a WMMA 16x16x16 is two, a wgmma m64n128k16 per warp sixteen), how many instructions the warp "
             "executes. The bound from counts is the time the busiest resource would need at an H100 SXM5's "
             "published peaks ([docs/h100.md](../../docs/h100.md)), not a prediction of the time: its tensor-core "
             "and DRAM terms are floors, its instruction terms count PTX, which ptxas shortens.", "",
             "| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    for r in rows:
        layer = f"{r['layer'].split('/', 1)[-1]} (N={r['n']})"
        if r["status"] != "counted":
            cells = [r["kernel"], layer] + [DASH] * 10 + [r["status"]]
        else:
            traffic = emulator_csv.global_traffic(r)
            conflicts = emulator_csv.bank_conflicts(r)
            bound, limiter = emulator_csv.floor(r, h100)
            tensor = ratio(r["tensor_flops"], r["flops"])
            cells = [r["kernel"], layer, f"{r['emulated_blocks']:,} of {r['grid_blocks']:,}",
                     f"{r['warp_inst']:.3g}", fmt(ratio(4096 * r["warp_inst"], r["tensor_flops"])),
                     f"{100 * ratio(r['thread_inst'], 32 * r['warp_inst']):.0f}%",
                     fmt(ratio(r["global_load_sectors"], r["global_load_requests"])),
                     fmt(ratio(r["global_store_sectors"], r["global_store_requests"])),
                     f"{fmt(ratio(traffic, r['min_bytes']))}×", f"{conflicts:,}",
                     f"{fmt(tensor)}×" if tensor else DASH, f"{fmt(bound)} µs", limiter]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def counters_main(args):
    """--counters: the emulator's counts, printed for a chapter or written into the chapter READMEs."""
    try:
        rows = emulator_csv.load(args.counters)
    except emulator_csv.CsvError as e:
        print(f"tables: {args.counters}: {e}", file=sys.stderr)
        return 1
    h100 = emulator_csv.h100_figures()
    order = {key: i for i, key in enumerate(dict.fromkeys(r["layer"] for r in rows))}
    rows.sort(key=lambda r: (r["chapter"], r["kernel"], order[r["layer"]]))
    if not args.readmes:
        chosen = [r for r in rows if not args.chapter or r["chapter"] == args.chapter.zfill(2)]
        if not chosen:
            print(f"tables: {args.counters}: no rows for chapter {args.chapter}", file=sys.stderr)
            return 1
        print(counters_markdown(chosen, h100))
        return 0
    values = prose_numbers.Values(rows, h100)
    stale = failed = 0
    for readme in markdown_files(args.readmes):
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        new, what = text, []
        if "<!-- counters:begin -->" in text:
            chapter = os.path.basename(os.path.dirname(readme))[:2]
            chosen = [r for r in rows if r["chapter"] == chapter]
            if not chosen:
                print(f"tables: {readme}: {args.counters} has no rows for chapter {chapter}", file=sys.stderr)
                return 1
            try:
                new = replace_between_markers(text, "counters", counters_markdown(chosen, h100))
            except ValueError as e:
                print(f"tables: {readme}: {e}", file=sys.stderr)
                return 1
            if new != text:
                what.append(f"counters table ({len(chosen)} rows)")
                if args.check:
                    print(f"tables: {readme}: the counters table differs from {args.counters}", file=sys.stderr)
        # the numbers the prose quotes from the counts (bench/prose_numbers.py)
        # (a marker that cannot be evaluated is an error: its line is left as it is, the rest written)
        newer, numbers, errors = prose_numbers.process(new, values, readme)
        for line in errors:
            print(f"tables: {line}", file=sys.stderr)
        failed += len(errors)
        if numbers:
            what.append(f"{len(numbers)} number(s) in the text")
            if args.check:
                for line in numbers:
                    print(f"tables: {line}", file=sys.stderr)
        if newer == text:
            continue
        if args.check:
            stale += 1
        else:
            with open(readme, "w", encoding="utf-8") as f:
                f.write(newer)
            print(f"tables: {readme}: updated {' and '.join(what)}")
            for line in numbers:
                print(f"tables:   {line}")
    if stale:
        print(f"tables: {stale} file(s) differ from {args.counters}; run "
              f"python3 bench/tables.py --counters {args.counters} --readmes .", file=sys.stderr)
    return 1 if stale or failed else 0


def modeled_markdown(rows, gpu):
    """The timing model's rows of one chapter as a table: modeled time and why (warp states)."""
    head = ["kernel", "layer", f"modeled on {modeled_csv.gpu_label(gpu)}, µs", "modeled TFLOP/s", "blocks at once per SM",
            "warp-cycles per issued instruction", "the largest stalls (cycles per issued instruction)"]
    lines = [f"Modeled by the emulator's timing model, {modeled_csv.caption(gpu)}: `conv bench --emulate --model "
             f"{gpu}` (`bench/results/modeled/{gpu}.csv`; [emu/README.md](../../emu/README.md#the-timing-model) says "
             "what it models, what it assumes and how far it is from measurements). Stalls are warp states with "
             "Nsight Compute's names. Regenerated by `bash bench/run.sh` on a machine without a GPU, or `python3 "
             f"bench/tables.py --modeled bench/results/modeled/{gpu}.csv --readmes .`", "",
             "| " + " | ".join(head) + " |", "| " + " | ".join(["---", "---"] + ["---:"] * 4 + ["---"]) + " |"]
    for r in rows:
        layer = f"{r['layer'].split('/', 1)[-1]} (N={r['n']})"
        if r["status"] != "counted":
            cells = [r["kernel"], layer] + [DASH] * 4 + [r["status"]]
        else:
            states = modeled_csv.per_issued(r)
            stalls = sorted(((v, k) for k, v in states.items() if k != "selected" and v > 0), reverse=True)
            cells = [r["kernel"], layer, fmt(r["modeled_us"]), fmt(r["modeled_tflops"]), fmt(r["resident_blocks"]),
                     fmt(sum(states.values())), ", ".join(f"{k} {v:.2f}" for v, k in stalls[:3]) or DASH]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def modeled_main(args):
    """--modeled: the timing model's table of each chapter, printed or written into the chapter READMEs."""
    try:
        rows = modeled_csv.load(args.modeled)
    except modeled_csv.CsvError as e:
        print(f"tables: {args.modeled}: {e}", file=sys.stderr)
        return 1
    gpu = os.path.splitext(os.path.basename(args.modeled))[0]
    order = {key: i for i, key in enumerate(dict.fromkeys(r["layer"] for r in rows))}
    rows.sort(key=lambda r: (r["chapter"], r["kernel"], order[r["layer"]]))
    if not args.readmes:
        print(modeled_markdown([r for r in rows if not args.chapter or r["chapter"] == args.chapter.zfill(2)], gpu))
        return 0

    def content_of(readme, text):
        chapter = os.path.basename(os.path.dirname(readme))[:2]
        chosen = [r for r in rows if r["chapter"] == chapter]
        if not chosen:
            raise ValueError(f"{args.modeled} has no rows for chapter {chapter}")
        return modeled_markdown(chosen, gpu)
    try:
        stale = refresh_chapter_readmes(args.readmes, "modeled", content_of, args.check, "tables")
    except ValueError as e:
        print(f"tables: {e}", file=sys.stderr)
        return 1
    for readme in stale:
        print(f"tables: {readme}: the modeled table differs from {args.modeled}; run python3 bench/tables.py "
              f"--modeled {args.modeled} --readmes .", file=sys.stderr)
    return 1 if stale else 0


def markdown_files(root):
    """README.md, docs/*.md and every chapter README under ROOT, in that order."""
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        files += [os.path.join(docs, name) for name in sorted(os.listdir(docs)) if name.endswith(".md")]
    chapters = os.path.join(root, "chapters")
    files += [os.path.join(chapters, name, "README.md") for name in sorted(os.listdir(chapters))]
    return [f for f in files if os.path.isfile(f)]


def refresh_chapter_readmes(root, marker, content_of, check, tool):
    """Rewrite the MARKER section of every chapter README that has one with content_of(path, text).

    With check, write nothing; return the READMEs (relative to ROOT) whose section would change."""
    stale = []
    for readme in sorted(glob.glob(os.path.join(root, "chapters", "*", "README.md"))):
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        if f"<!-- {marker}:begin -->" not in text:
            continue
        new = replace_between_markers(text, marker, content_of(readme, text))
        if new == text:
            continue
        if check:
            stale.append(os.path.relpath(readme, root))
        else:
            with open(readme, "w", encoding="utf-8") as f:
                f.write(new)
            print(f"{tool}: wrote {os.path.relpath(readme, root)}")
    return stale


def results_readmes(args):
    """CSV ... --readmes ROOT --marker NAME: every chapter README's NAME section, from the GPU CSVs
    (one table per GPU), or the not-yet-measured text for a chapter they have no rows for."""
    if not args.marker:
        print("tables: --readmes with results CSVs needs --marker (e.g. results)", file=sys.stderr)
        return 1
    loaded = []
    for path in args.csv:
        try:
            loaded.append(load(path))
        except CsvError as e:
            print(f"tables: {path}: {e}", file=sys.stderr)
            return 1
        loaded[-1].path = os.path.relpath(os.path.abspath(path), os.path.abspath(args.readmes))

    def content_of(readme, text):
        chapter = os.path.basename(os.path.dirname(readme))[:2]
        tables, unsupported = [], []
        for results in loaded:
            rows = select(results, chapter)
            if any(r["status"] != "unsupported" for r in rows):
                tables.append(markdown(results, rows))
            unsupported += [r["kernel"] for r in rows]
        return "\n\n".join(tables) if tables else not_measured(list(dict.fromkeys(unsupported)))

    try:
        stale = refresh_chapter_readmes(args.readmes, args.marker, content_of, args.check, "tables")
    except ValueError as e:
        print(f"tables: {e}", file=sys.stderr)
        return 1
    for readme in stale:
        print(f"tables: {readme}: the {args.marker} table differs from {', '.join(args.csv)}; run "
              f"python3 bench/tables.py {' '.join(args.csv)} --readmes . --marker {args.marker}", file=sys.stderr)
    return 1 if stale else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="*", help="results CSVs, e.g. bench/results/h100.csv")
    ap.add_argument("--counters", metavar="CSV", help="the emulator's counts, bench/results/emulator.csv")
    ap.add_argument("--modeled", metavar="CSV", help="the timing model's, bench/results/modeled/<gpu>.csv")
    ap.add_argument("--readmes", metavar="ROOT", help="every chapter README under ROOT (with --counters, or "
                    "with results CSVs and --marker)")
    ap.add_argument("--check", action="store_true", help="with --readmes: compare, write nothing")
    ap.add_argument("--chapter", help="only this chapter, e.g. 02")
    ap.add_argument("--pass", dest="pass_", choices=("fprop", "dgrad", "wgrad"),
                    help="only this pass")
    ap.add_argument("--readme", help="write the table into this file instead of printing it")
    ap.add_argument("--marker", help="NAME of the <!-- NAME:begin/end --> pair in --readme")
    args = ap.parse_args(argv)
    if args.modeled:
        return modeled_main(args)
    if args.counters:
        return counters_main(args)
    if not args.csv:
        ap.error("a results CSV, or --counters CSV")
    if args.readmes:
        return results_readmes(args)
    if args.check:
        ap.error("--check goes with --readmes")
    if bool(args.readme) != bool(args.marker):
        ap.error("--readme and --marker go together")
    chapter = args.chapter.zfill(2) if args.chapter and args.chapter.isdigit() else args.chapter

    tables = []
    for path in args.csv:
        try:
            results = load(path)
        except CsvError as e:
            print(f"tables: {path}: {e}", file=sys.stderr)
            return 1
        rows = select(results, chapter, args.pass_)
        if rows:
            tables.append(markdown(results, rows))
    if not tables:
        what = " and ".join(x for x in (chapter and f"chapter {chapter}",
                                         args.pass_ and f"pass {args.pass_}") if x)
        print(f"tables: {', '.join(args.csv)}: no rows for {what}", file=sys.stderr)
        return 1
    table = "\n\n".join(tables)
    if not args.readme:
        print(table)
        return 0

    try:
        with open(args.readme, encoding="utf-8") as f:
            text = f.read()
        new = replace_between_markers(text, args.marker, table)
    except OSError as e:
        print(f"tables: {args.readme}: cannot read: {e.strerror}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"tables: {args.readme}: {e}", file=sys.stderr)
        return 1
    if new != text:
        with open(args.readme, "w", encoding="utf-8") as f:
            f.write(new)
    print(f"tables: {args.readme}: table '{args.marker}' {'updated' if new != text else 'unchanged'}"
          f" ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
