"""The H100 figures the text quotes are the ones in bench/h100.json (docs/h100.md), and the tables built on them
are what bench/h100.py makes of the file today.

1. bench/h100.json: every required figure, each with a value, a unit and a source (an address, or the file of
   bench/results/ where this project measured it); the two peaks recompute
   from the SM count, the lanes or tensor rate and the clocks they are published at.
2. `bench/h100.py --check` on every page that holds h100 markers (docs/h100.md and chapter 09 at least).
3. The layer costs h100.py computes from `conv layers` agree with the GFLOP the runner prints.
4. In README.md, docs/ and every chapter README, outside the generated tables: every clock (GHz, MHz) and
   every bandwidth in TB/s is one of the file's figures, and every TFLOP/s figure shortly after the word
   "peak" or "H100" is one of the two peaks or the fp16 peak per SM. Derived numbers go in other units (GB/s, µs).
5. Planted: a wrong clock, bandwidth and peak in a made-up text are caught, and a changed table cell
   makes --check fail.

Run as: test_h100_figures.py REPOSITORY_ROOT CONV"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

root, conv = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "bench"))
import gpus  # noqa: E402
import h100  # noqa: E402

failures = []


def fail(message):
    failures.append(message)
    print("FAIL", message)


# 1. the file: its figures and their sources as bench/gpus.py's loader checks every GPU file, then the peaks
try:
    gpus.load(os.path.join(root, "bench", "h100.json"))
except gpus.GpuFileError as error:
    fail(str(error))
figures = h100.load_figures(os.path.join(root, "bench", "h100.json"))
v = {k: e["value"] for k, e in figures.items() if k not in ("gpu", "note")}
fp32 = v["sms"] * v["fp32_lanes_per_sm"] * 2 * v["boost_clock_ghz"] / 1000
if abs(fp32 - v["fp32_tflops"]) > 0.05:
    fail(f"bench/h100.json: {v['sms']} SMs x {v['fp32_lanes_per_sm']} lanes x 2 x {v['boost_clock_ghz']} GHz = "
         f"{fp32:.2f} TFLOP/s, not the published {v['fp32_tflops']}")
if "tensor_boost_clock_ghz" in v:
    fp16 = v["sms"] * 4096 * v["tensor_boost_clock_ghz"] / 1000
    if abs(fp16 - v["fp16_tensor_dense_tflops"]) > 0.5:
        fail(f"bench/h100.json: {v['sms']} SMs x 4096 flop x {v['tensor_boost_clock_ghz']} GHz = {fp16:.1f} TFLOP/s, "
             f"not the published {v['fp16_tensor_dense_tflops']}")
if v["smem_bytes_per_clock_per_sm"] != 32 * 4 or v["warp_schedulers_per_sm"] * 32 != v["fp32_lanes_per_sm"]:
    fail("bench/h100.json: 32 banks x 4 bytes, and 4 schedulers x 32 lanes = the FP32 lanes, no longer hold")

# 2. the generated tables
pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))) + \
        sorted(glob.glob(os.path.join(root, "chapters", "*", "README.md")))
marked = [p for p in pages if any(f"<!-- {m}:begin -->" in open(p, encoding="utf-8").read() for m in h100.MARKERS)]
for needed in ("docs/h100.md", "chapters/09_depthwise/README.md"):
    if os.path.join(root, needed) not in marked:
        fail(f"{needed}: no h100 markers")
script = os.path.join(root, "bench", "h100.py")
run = subprocess.run([sys.executable, script, "--check", "--conv", conv, *marked], capture_output=True, text=True)
if run.returncode != 0:
    fail(f"bench/h100.py --check: {run.stderr.strip()}")

# 3. the shapes behind chapter 09's tables
out = subprocess.run([conv, "layers"], capture_output=True, text=True, check=True).stdout
printed = {line.split()[0]: float(line.split()[-2]) for line in out.splitlines() if line.endswith("GFLOP")}
layers = h100.conv_layers(conv)
for name, _ in h100.NETWORK_DEPTHWISE:
    full = f"mobilenet/{name}"
    if full not in layers:
        fail(f"conv layers: no {full}")
        continue
    _, flops = h100.layer_cost(layers[full])
    if abs(flops / 1e9 - printed[full]) > 0.006:
        fail(f"{full}: h100.py counts {flops / 1e9:.3f} GFLOP, conv layers prints {printed[full]}")

# 4. the figures in the text
clocks = [v["boost_clock_ghz"]] + ([v["tensor_boost_clock_ghz"]] if "tensor_boost_clock_ghz" in v else [])
allowed = {
    "GHz": clocks,
    "MHz": [c * 1000 for c in clocks],
    "TB/s": [v["hbm_bandwidth_gbps"] / 1000],
    "TFLOP/s": [v["fp16_tensor_dense_tflops"], v["fp32_tflops"], v["fp16_tensor_dense_tflops"] / v["sms"]],
}
FIGURE = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*(GHz|MHz|TB/s|TFLOP/s)")
GENERATED = re.compile(r"<!-- (h100[\w-]*):begin -->.*?<!-- \1:end -->", re.S)


def agrees(text_value, unit):
    """The written figure is a file figure, written to at least three significant digits (or exactly)."""
    digits = text_value.replace(",", "")
    written = float(digits)
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    significant = len(digits.replace(".", "").lstrip("0"))
    for x in allowed[unit]:
        if written == x or (significant >= 3 and abs(round(x, decimals) - written) < 1e-9):
            return True
    return False


def scan(text, where):
    """'where:line: figure' for each figure in `text` that disagrees with the file."""
    bad = []
    text = GENERATED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for m in FIGURE.finditer(text):
        unit = m.group(3)
        figure = m.group(1) + (m.group(2) or "")
        if unit == "TFLOP/s":
            before = re.sub(r"\s+", " ", text[max(0, m.start() - 120):m.start()])
            if "peak" not in before.lower() and "h100" not in before.lower():
                continue  # a derived or measured rate, not a quoted H100 peak
        if not agrees(figure, unit):
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{where}:{line}: {figure} {unit} is not a figure of bench/h100.json (docs/h100.md)")
    return bad


for page in pages:
    with open(page, encoding="utf-8") as f:
        for message in scan(f.read(), os.path.relpath(page, root)):
            fail(message)

# 5. planted: the scan and --check can fail
planted = scan("About 3.0 TB/s of bandwidth at 1.75 GHz.\nThe peak is about 990 TFLOP/s of fp16.\n"
               "At 1.98 GHz and 3.35 TB/s, the peak of 989.4 TFLOP/s.\n"
               "An H100 SXM does about 7.5 TFLOP/s per SM.\n", "planted")
if len(planted) != 4:
    fail(f"planted: the scan found {len(planted)} of the 4 wrong figures: {planted}")
with tempfile.TemporaryDirectory() as tmp:
    copy = os.path.join(tmp, "README.md")
    shutil.copy(os.path.join(root, "chapters", "09_depthwise", "README.md"), copy)
    with open(copy, encoding="utf-8") as f:
        text = f.read()
    begin = text.index("<!-- h100-times:begin -->")
    cell = text.index(" µs |", begin)
    with open(copy, "w", encoding="utf-8") as f:
        f.write(text[:cell] + "0" + text[cell:])
    run = subprocess.run([sys.executable, script, "--check", "--conv", conv, copy], capture_output=True, text=True)
    if run.returncode != 1 or len(run.stderr.strip().splitlines()) != 1:
        fail(f"planted: --check on a changed table gave exit {run.returncode}: {run.stderr.strip()}")

print(f"test_h100_figures: {len(pages)} pages, {len(marked)} with tables, {len(failures)} failures")
sys.exit(1 if failures else 0)
