"""The chapters' measured and modeled results: their tables are the CSVs', and what their text says of them
holds.

    python3 tests/test_measured_claims.py SOURCE_ROOT [--print]

1. Every chapter README's Results table is what `bench/tables.py` generates from the GPU results CSVs
   (bench/results/<gpu>.csv, every one but the emulator's counts): a number typed over, or a CSV
   re-measured without regenerating the tables, fails.
2. Each sentence below that the chapters write about their measurements (which step is faster than
   which, on how many layers, by how much) is rendered from the CSV and must appear, word for word, in
   its README: a sentence edited by hand, or a new measurement that changes the verdict, fails, and the
   sentence has to be rewritten from what the CSV now says. `--print` prints each rendered sentence.
3. What the chapters say of Nsight Compute's counts on a GPU (bench/results/ncu/<gpu>.csv: which warp state
   came first, how many machine instructions one step executed against another) is rendered the same way.
4. Chapter 11's GPU record (docs/gpu_ch11_train_cnn_compare.csv): its README's sentence on how close the
   two backends' losses came is rendered from the record, the same way.

Times are the CSV's medians; "faster" compares medians. A claim names its GPU's CSV, or the timing model's
("modeled/h100": bench/results/modeled/h100.csv, each kernel on its chapter's reference layers; its times
are a model's, not measurements, and the sentence must say so).
"""

import csv
import glob
import os
import subprocess
import sys


# (README, CSV, kernel a, kernel b or "cuDNN" (the cuDNN time in a's rows) or "copy" (the copy bandwidth the
# same run measured), the layers (None: every layer both ran), the sentence). In the sentence: {faster} and
# {slower} are how many layers a is faster / slower on ("all 10", "none of the 10", "7 of the 10"); {up} is b's
# time over a's as a range ("1.05 to 2.03"), {down} a's over b's; {faster_on} and {slower_on} name the layers;
# {copy} is a's GB/s as a percentage of the copy bandwidth, as a range ("42% to 62%"); {times} is {up} and
# {times_down} is {down}, written as one number when they are one ("1.29"); {verdict} is "faster than" or
# "slower than" when a is so on every layer, else "faster on some layers than".
CLAIMS = [
    ("chapters/02_naive_cuda/README.md", "h200", "02c", "02b", None,
     "02c was faster than 02b on {faster_on} and slower on {slower_on}"),
    ("chapters/03_smem_tiling/README.md", "h200", "03a", "02b", None,
     "03a was slower than chapter 02's 02b on {slower} layers"),
    ("chapters/03_smem_tiling/README.md", "h200", "03b", "03a", None,
     "03b was faster than 03a on {faster} layers, {up} times"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05a", "04d", None,
     "05a was slower than chapter 04's fp32 04d on {slower} layers, taking {down} times as long"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05b", "05a", None,
     "05b was slower than 05a on {slower} layers"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05c", "05b", None,
     "05c was faster than 05b on {faster} layers, by {up} times"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05d", "05c", None,
     "05d was faster than 05c on {faster} layers, {up} times"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05e", "05d", None,
     "05e was faster than 05d only on {faster_on}"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05f", "05e", None,
     "05f was faster than 05e on {faster} layers, {up} times"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05g", "05f", None,
     "05g was faster than 05f on {faster} layers"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05h", "05g", None,
     "05h was faster than 05g on {faster} layers, {up} times"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05h", "cuDNN", ("res3_proj", "res4_1x1_expand", "big_3x3"),
     "05h was faster than cuDNN on {faster_on} and slower on {slower_on}"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05i+bias+relu", "05l+bias+relu", None,
     "the fused 05i was slower than the unfused 05l on {slower} layers with bias and ReLU"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05i+bn+residual+relu", "05l+bn+residual+relu", None,
     "on {slower} layers with BN, the residual and ReLU, taking {down} times as long"),
    ("chapters/05_implicit_gemm_tc/README.md", "h100", "05a", "04d", None,
     "on the H100, 05a was slower than chapter 04's fp32 04d on {slower} layers"),
    ("chapters/05_implicit_gemm_tc/README.md", "h100", "05c", "05b", None,
     "05c was faster than 05b on {faster} layers; 05f"),
    ("chapters/05_implicit_gemm_tc/README.md", "h100", "05f", "05e", None,
     "05f was faster than 05e on {faster} layers; and 05h"),
    ("chapters/05_implicit_gemm_tc/README.md", "h100", "05h", "05g", None,
     "05h was faster than 05g on {faster} layers. The fused"),
    ("chapters/05_implicit_gemm_tc/README.md", "h100", "05i+bn+residual+relu", "05l+bn+residual+relu", None,
     "05i took {down} times as long as 05l"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05j", "05i", None,
     "05j was faster than 05i on {faster_on}"),
    ("chapters/05_implicit_gemm_tc/README.md", "h200", "05k", "05i", None,
     "05k was faster than 05i on {faster_on}"),
    ("chapters/09_depthwise/README.md", "h100", "09b", "cuDNN", None,
     "09b was faster than cuDNN on {faster} layers, {up} times"),
    ("chapters/09_depthwise/README.md", "h100", "09a", "cuDNN", None,
     "09a was faster than cuDNN on {faster_on}"),
    ("chapters/09_depthwise/README.md", "h100", "09a", "copy", None,
     "09a reached {copy} of the copy bandwidth"),
    ("chapters/09_depthwise/README.md", "h100", "09b", "copy", ("dw32_112", "dw96_112_s2", "dw144_56", "dw144_56_s2"),
     "09b reached {copy} of the copy bandwidth on the four large layers"),
    ("chapters/09_depthwise/README.md", "h100", "09b", "09a", None,
     "09b was faster than 09a on {faster} layers, {up} times"),
    ("chapters/09_depthwise/README.md", "h100", "09b", "copy", ("dw384_14", "dw576_14", "dw192_28_s2"),
     "reached {copy} of the copy bandwidth on `dw384_14`, `dw576_14` and `dw192_28_s2`"),
    ("chapters/07_wgrad/README.md", "h200", "07b", "07a", None,
     "07b was faster than 07a on {faster} layers, {up} times"),
    ("chapters/08_hopper/README.md", "h200", "08a", "05h", None,
     "08a was faster than chapter 05's 05h on {faster_on}"),
    ("chapters/08_hopper/README.md", "h200", "08a", "cuDNN", None,
     "08a was faster than cuDNN on {faster_on}, and slower on {slower_on}"),
    ("chapters/08_hopper/README.md", "h100", "08a", "05h", None,
     "08a was faster than chapter 05's 05h on {faster_on}"),
    ("chapters/08_hopper/README.md", "h100", "08b", "08a", None,
     "08b was slower than 08a on {slower} layers, {down} times as long"),
    ("chapters/08_hopper/README.md", "h100", "08a", "cuDNN", None,
     "on the H100, 08a was faster than cuDNN on {faster_on}, and slower on {slower_on}"),
    ("chapters/07_wgrad/README.md", "h100", "07b", "07a", ("res5_3x3",),
     "measured on the H100, 07b was {verdict} 07a on `res5_3x3`"),
    ("chapters/08_hopper/README.md", "h200", "08b", "08a", None,
     "08b was slower than 08a on {slower} layers, taking {down} times as long"),
    ("chapters/10_resnet_block/README.md", "h100", "10a", "10b", None,
     "the fused 10a was slower than the unfused 10b on {slower} blocks, taking {down} times as long"),
    ("chapters/10_resnet_block/README.md", "h100", "10b", "cuDNN", None,
     "10b was faster than cuDNN's calls on {faster_on} and slower on {slower_on}"),
    # the timing model's verdicts, step by step, on each chapter's reference layer
    ("chapters/02_naive_cuda/README.md", "modeled/h100", "02b", "02a", ("res4_3x3",),
     "modeled on the H100 (a model, not a measurement), 02b was {verdict} 02a on `res4_3x3`, taking "
     "{times_down} times as long"),
    ("chapters/04_im2col_gemm/README.md", "modeled/h100", "04b", "04a", ("res4_3x3",),
     "Modeled on the H100 (a model, not a measurement), 04b was {verdict} 04a on `res4_3x3`, {times} times"),
    ("chapters/04_im2col_gemm/README.md", "h100", "04b", "04a", ("res4_3x3",),
     "measured on the H100, 04b was {verdict} 04a on `res4_3x3`, {times} times"),
    ("chapters/05_implicit_gemm_tc/README.md", "modeled/h100", "05b", "05a", ("res4_3x3",),
     "Modeled on the H100 (a model, not a measurement), 05b was {verdict} 05a on `res4_3x3`, taking "
     "{times_down} times as long,"),
    ("chapters/05_implicit_gemm_tc/README.md", "modeled/h100", "05c", "05b", ("res4_3x3",),
     "and, modeled (a model, not a measurement), 05c was {verdict} 05b, taking {times_down} times as long"),
    ("chapters/05_implicit_gemm_tc/README.md", "modeled/h100", "05d", "05c", ("res4_3x3",),
     "Modeled (a model, not a measurement), 05d was {verdict} 05c, {times} times"),
    ("chapters/05_implicit_gemm_tc/README.md", "modeled/h100", "05e", "05d", ("res4_3x3",),
     "Modeled (a model, not a measurement), 05e was {verdict} 05d, taking {times_down} times as long"),
    ("chapters/05_implicit_gemm_tc/README.md", "modeled/h100", "05f", "05e", ("res4_3x3",),
     "Modeled (a model, not a measurement), 05f was {verdict} 05e, {times} times"),
    ("chapters/05_implicit_gemm_tc/README.md", "modeled/h100", "05g", "05f", ("res4_3x3",),
     "Modeled (a model, not a measurement), 05g was {verdict} 05f, {times} times,"),
    ("chapters/05_implicit_gemm_tc/README.md", "modeled/h100", "05h", "05g", ("res4_3x3",),
     "and, modeled (a model, not a measurement), 05h was {verdict} 05g, taking {times_down} times as long"),
    ("chapters/08_hopper/README.md", "modeled/h100", "08b", "08a", ("res4_3x3",),
     "Modeled on the H100 (a model, not a measurement), 08b was {verdict} 08a on `res4_3x3`, {times} times"),
    ("chapters/09_depthwise/README.md", "modeled/h100", "09b", "09a", ("dw144_56",),
     "Modeled on the H100 (a model, not a measurement), 09b was {verdict} 09a on `dw144_56`, {times} times"),
]


def load(root, gpu):
    """(kernel, short layer name) -> row, for the rows that passed (measured) or were modeled."""
    with open(os.path.join(root, "bench", "results", f"{gpu}.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    if gpu.startswith("modeled/"):
        rows = [dict(r, time_ms=str(float(r["modeled_us"]) / 1000)) for r in rows if r["status"] == "counted"]
    else:
        rows = [r for r in rows if r["status"] == "pass"]
    return {(r["kernel"], r["layer"].split("/")[-1]): r for r in rows}


def span(values):
    low, high = f"{min(values):.2f}", f"{max(values):.2f}"
    return low if low == high else f"{low} to {high}"


def how_many(count, total):
    return f"all {total}" if count == total else f"none of the {total}" if count == 0 else f"{count} of the {total}"


def names(layers):
    quoted = [f"`{layer}`" for layer in layers]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1] if quoted else "no layer"


def render(rows, a, b, layers, sentence):
    """The sentence with the CSV's values, or a one-line error."""
    layers_run = layers or list(dict.fromkeys(layer for _, layer in rows))  # in the CSV's (the suite's) order
    if b == "copy":
        shares = [100 * float(rows[(a, layer)]["gbps"]) / float(rows[(a, layer)]["peak_gbps"])
                  for layer in layers_run if (a, layer) in rows]
        if not shares:
            raise ValueError(f"{a} has no time on {', '.join(layers_run)}")
        return sentence.format(copy=f"{min(shares):.0f}% to {max(shares):.0f}%")
    times = []
    for layer in layers_run:
        ra = rows.get((a, layer))
        tb = (float(ra["cudnn_ms"]) if ra and ra["cudnn_ms"] else None) if b == "cuDNN" else (
            float(rows[(b, layer)]["time_ms"]) if (b, layer) in rows else None)
        if ra and tb:
            times.append((layer, float(ra["time_ms"]), tb))
        elif layers:
            raise ValueError(f"{a} or {b} has no time on {layer}")
    if not times:
        raise ValueError(f"{a} and {b} share no layer")
    faster = [layer for layer, ta, tb in times if ta < tb]
    slower = [layer for layer, ta, tb in times if ta > tb]
    up = [tb / ta for _, ta, tb in times]
    return sentence.format(faster=how_many(len(faster), len(times)), slower=how_many(len(slower), len(times)),
                           faster_on=names(faster), slower_on=names(slower),
                           up=f"{min(up):.2f} to {max(up):.2f}", down=f"{1 / max(up):.2f} to {1 / min(up):.2f}",
                           times=span(up), times_down=span([1 / x for x in up]),
                           verdict="faster than" if len(faster) == len(times) else "slower than"
                           if len(slower) == len(times) else "faster on some layers than")


# What Nsight Compute counted on a GPU (bench/results/ncu/<gpu>.csv, bench/ncu_profile.py), as the chapters
# say it: (README, GPU, kernel a, kernel b or None, layer, sentence). {top} and {second} are the warp states
# (Nsight Compute's names) in which a's warps spent the most cycles per issued instruction, besides
# `selected`; {inst_change} is how many machine instructions a executed against b ("13% fewer", "4% more"),
# {vs_ptx} against the PTX warp instructions the emulator counted for a on the same layer and batch.
NCU_CLAIMS = [
    ("chapters/03_smem_tiling/README.md", "h100", "03a", None, "resnet50/res4_3x3",
     "Nsight Compute on the H100 found 03a's warps waiting most in `{top}`, then `{second}`"),
    ("chapters/03_smem_tiling/README.md", "h100", "03a", None, "resnet50/res4_3x3",
     "in machine code, Nsight Compute counted on the H100 that 03a executed {vs_ptx} warp instructions than its PTX"),
    ("chapters/05_implicit_gemm_tc/README.md", "h100", "05a", None, "resnet50/res4_3x3",
     "Measured by Nsight Compute on the H100, 05a's warps waited most in `{top}`, then `{second}`"),
    ("chapters/05_implicit_gemm_tc/README.md", "h100", "05g", "05f", "resnet50/res4_3x3",
     "Nsight Compute settled it on the H100: in machine code 05g executed {inst_change} warp instructions "
     "than 05f"),
    ("chapters/08_hopper/README.md", "h100", "08a", None, "resnet50/res4_3x3",
     "Nsight Compute on the H100 found 08a's warps waiting most in `{top}`"),
    ("chapters/08_hopper/README.md", "h100", "08a", "05h", "resnet50/res4_3x3",
     "08a executed {inst_change} machine instructions than 05h"),
    ("chapters/08_hopper/README.md", "h100", "08b", None, "resnet50/res4_3x3",
     "Nsight Compute found 08b's warps waiting most in `{top}`"),
    ("chapters/09_depthwise/README.md", "h100", "09b", None, "mobilenet/dw144_56",
     "Nsight Compute on the H100 puts `{top}` first for 09b, then `{second}`"),
    ("chapters/09_depthwise/README.md", "h100", "09b", None, "mobilenet/dw144_56",
     "in machine code, Nsight Compute counted on the H100 that 09b executed {vs_ptx} warp instructions than its PTX"),
]


def render_ncu(root, gpu, a, b, layer, sentence):
    """An NCU_CLAIMS sentence with the values of bench/results/ncu/<gpu>.csv."""
    with open(os.path.join(root, "bench", "results", "ncu", f"{gpu}.csv"), newline="") as f:
        rows = {(r["kernel"], r["layer"]): r for r in csv.DictReader(f)}
    if (a, layer) not in rows or (b and (b, layer) not in rows):
        raise ValueError(f"Nsight Compute has no row for {a}{' or ' + b if b else ''} on {layer}")
    states = sorted(((float(v), c[len("stall_"):]) for c, v in rows[(a, layer)].items()
                     if c.startswith("stall_") and c != "stall_selected"), reverse=True)
    def more_or_fewer(ratio):
        return f"{abs(1 - ratio) * 100:.0f}% {'fewer' if ratio < 1 else 'more'}"
    change = vs_ptx = ""
    if b:
        change = more_or_fewer(int(rows[(a, layer)]["inst_executed"]) / int(rows[(b, layer)]["inst_executed"]))
    if "{vs_ptx}" in sentence:
        with open(os.path.join(root, "bench", "results", "emulator.csv"), newline="") as f:
            counted = {(r["kernel"], r["layer"], r["n"]): r for r in csv.DictReader(f)}
        ptx = counted.get((a, layer, rows[(a, layer)]["n"]))
        if not ptx or not ptx["warp_inst"]:
            raise ValueError(f"the emulator counted no {a} on {layer}")
        vs_ptx = more_or_fewer(int(rows[(a, layer)]["inst_executed"]) / float(ptx["warp_inst"]))
    return sentence.format(top=states[0][1], second=states[1][1], inst_change=change, vs_ptx=vs_ptx)


# Chapter 11's GPU record (bench/gpu_session.sh): what its README says of the losses the record holds.
TRAIN_RECORD = ("chapters/11_train_cnn/README.md", os.path.join("docs", "gpu_ch11_train_cnn_compare.csv"),
                "at the {steps} logged steps their losses differ by at most {gap:.1e}")


def render_train_record(root):
    """The sentence from the record: how many steps both backends logged, their largest loss difference."""
    losses = {}
    with open(os.path.join(root, TRAIN_RECORD[1]), newline="") as f:
        for row in csv.DictReader(f):
            losses.setdefault(int(row["step"]), {})[row["backend"]] = float(row["loss"])
    both = [step for step in losses.values() if {"ours", "cudnn"} <= step.keys()]
    if not both:
        raise ValueError(f"{TRAIN_RECORD[1]} has no step logged by both backends")
    return TRAIN_RECORD[2].format(steps=len(both), gap=max(abs(s["ours"] - s["cudnn"]) for s in both))


def main():
    root, show = sys.argv[1], "--print" in sys.argv
    failures = []
    gpu_csvs = sorted(p for p in glob.glob(os.path.join(root, "bench", "results", "*.csv"))
                      if os.path.basename(p) != "emulator.csv")
    if gpu_csvs:
        check = subprocess.run([sys.executable, os.path.join(root, "bench", "tables.py"), *gpu_csvs,
                                "--readmes", root, "--marker", "results", "--check"],
                               capture_output=True, text=True)
        if check.returncode != 0:
            failures.append(f"results tables: {check.stderr.strip()}")
    rendered = []  # (README, what the sentence compares, the sentence the results say)
    measured = {}  # gpu -> its CSV's rows, read once
    for readme, gpu, a, b, layers, sentence in CLAIMS:
        if gpu.startswith("modeled/") and "(a model, not a measurement)" not in sentence:
            failures.append(f"{readme}: {a} against {b}: a modeled claim that does not say it is a model")
        try:
            if gpu not in measured:
                measured[gpu] = load(root, gpu)
            rendered.append((readme, f"{a} against {b}", render(measured[gpu], a, b, layers, sentence)))
        except (OSError, ValueError) as e:
            failures.append(f"{readme}: {a} against {b}: {e}")
    for readme, gpu, a, b, layer, sentence in NCU_CLAIMS:
        try:
            rendered.append((readme, f"Nsight Compute: {a}", render_ncu(root, gpu, a, b, layer, sentence)))
        except (OSError, ValueError, KeyError) as e:
            failures.append(f"{readme}: Nsight Compute: {a}: {e}")
    try:
        rendered.append((TRAIN_RECORD[0], TRAIN_RECORD[1], render_train_record(root)))
    except (OSError, ValueError, KeyError) as e:
        failures.append(f"{TRAIN_RECORD[0]}: {TRAIN_RECORD[1]}: {e}")
    for readme, _what, text in rendered:
        if show:
            print(text)
        with open(os.path.join(root, readme), encoding="utf-8") as f:
            if " ".join(text.split()) not in " ".join(f.read().split()):
                failures.append(f"{readme}: the results now say \"{text}\", which the text does not")
    for line in failures:
        print(f"FAIL {line}")
    print(f"measured_claims: {len(CLAIMS) + len(NCU_CLAIMS) + 1} claims, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
