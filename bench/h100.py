"""The H100 figures the chapters use, from one sourced file (bench/h100.json), and the tables built on them.

Every page that quotes them holds its table between markers and the table is generated, never typed:

    <!-- h100:begin -->                  docs/h100.md: each published figure, its unit and source, and
    <!-- h100:end -->                    the numbers the chapters derive from them (peaks, ridge points)
    <!-- h100-times:begin -->            chapter 09: bytes and time at the published peak HBM bandwidth
    <!-- h100-times:end -->              for three depthwise layers, with their flops
    <!-- h100-network-times:begin -->    chapter 09: the same for every depthwise layer of MobileNetV2
    <!-- h100-network-times:end -->

The layer shapes come from the runner (`conv layers`), so a table cannot drift from the suites.

    python3 bench/h100.py --write docs/h100.md chapters/09_depthwise/README.md [--conv build/conv]
    python3 bench/h100.py --check PAGE...   (exit 1, one line, when a page's table differs)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURES = os.path.join(ROOT, "bench", "h100.json")
REQUIRED = ["sms", "boost_clock_ghz", "fp16_tensor_dense_tflops", "fp32_tflops", "hbm_bandwidth_gbps", "l2_bytes",
            "smem_per_sm_bytes", "registers_per_sm", "warp_schedulers_per_sm", "smem_bytes_per_clock_per_sm",
            "fp32_lanes_per_sm"]

# MobileNetV2's depthwise layers at N = 32 and how often each runs in one forward pass (the chapter 09
# README's table of the network: 17 depthwise convolutions in all).
NETWORK_DEPTHWISE = [("dw32_112", 1), ("dw96_112_s2", 1), ("dw144_56", 1), ("dw144_56_s2", 1), ("dw192_28", 2),
                     ("dw192_28_s2", 1), ("dw384_14", 4), ("dw576_14", 2), ("dw576_14_s2", 1), ("dw960_7", 3)]
TIMES_LAYERS = ["dw144_56", "dw144_56_s2", "dw32_112"]


def load_figures(path=FIGURES):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ValueError(f"{path}: missing {', '.join(missing)}")
    for key, entry in data.items():
        if key in ("gpu", "note"):
            continue
        if not (isinstance(entry, dict) and isinstance(entry.get("value"), (int, float))
                and entry.get("unit") and entry.get("source")):
            raise ValueError(f"{path}: {key} needs a numeric value, a unit and a source")
    return data


def value(figures, key):
    return figures[key]["value"]


def derived(figures):
    """(name, number, unit, how) for the numbers the chapters compute from the published figures."""
    sms, clock = value(figures, "sms"), value(figures, "boost_clock_ghz")
    lanes, hbm = value(figures, "fp32_lanes_per_sm"), value(figures, "hbm_bandwidth_gbps")
    f16, f32 = value(figures, "fp16_tensor_dense_tflops"), value(figures, "fp32_tflops")
    rows = [
        ("fp32 peak, recomputed", sms * lanes * 2 * clock / 1000, "TFLOP/s",
         f"{sms} SMs x {lanes} lanes x 2 flop (an FMA) x {clock} GHz; the published figure is {f32}"),
        ("fp16 tensor peak per SM", f16 / sms, "TFLOP/s", f"{f16} / {sms} SMs"),
    ]
    if "tensor_boost_clock_ghz" in figures:
        tclock = value(figures, "tensor_boost_clock_ghz")
        rows.append(("fp16 tensor flop per clock per SM", f16 * 1000 / (sms * tclock), "flop",
                     f"{f16} TFLOP/s / ({sms} SMs x {tclock} GHz): 2,048 multiply-adds"))
    rows += [
        ("ridge point, fp16 tensor cores", f16 * 1000 / hbm, "flop/byte", f"{f16} TFLOP/s / {hbm} GB/s"),
        ("ridge point, fp32 FMA", f32 * 1000 / hbm, "flop/byte", f"{f32} TFLOP/s / {hbm} GB/s"),
        ("HBM bytes per clock per SM", hbm / (sms * clock), "bytes", f"{hbm} GB/s / ({sms} SMs x {clock} GHz)"),
        ("lane-instructions dispatched per clock per SM", value(figures, "warp_schedulers_per_sm") * 32, "",
         f"{value(figures, 'warp_schedulers_per_sm')} schedulers x 32 lanes"),
        ("shared memory bandwidth per SM", value(figures, "smem_bytes_per_clock_per_sm") * clock, "GB/s",
         f"{value(figures, 'smem_bytes_per_clock_per_sm')} bytes x {clock} GHz"),
        ("shared memory bandwidth, all SMs", value(figures, "smem_bytes_per_clock_per_sm") * clock * sms, "GB/s",
         f"x {sms} SMs: {value(figures, 'smem_bytes_per_clock_per_sm') * clock * sms / hbm:.0f} times the HBM bandwidth"),
    ]
    return rows


def number(x):
    """1,234 / 295.3 / 66.9 / 7.50 / 1.98: at least three significant digits, thousands separated."""
    if abs(x) >= 1000 or float(x).is_integer():
        return f"{round(x):,}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:#.3g}"


def figures_table(figures):
    lines = [textwrap.fill(f"{figures['gpu']}. {figures['note']}", 100), "",
             "| key | value | unit | source |", "| --- | --- | --- | --- |"]
    for key, entry in figures.items():
        if key in ("gpu", "note"):
            continue
        lines.append(f"| `{key}` | {number(entry['value'])} | {entry['unit']} | {entry['source']} |")
    lines += ["", "Derived from them (recomputed by `bench/h100.py`, so they follow the file):", "",
              "| number | value | unit | how |", "| --- | --- | --- | --- |"]
    for name, x, unit, how in derived(figures):
        lines.append(f"| {name} | {number(x)} | {unit} | {how} |")
    return "\n".join(lines)


def conv_layers(conv):
    """{suite/layer: dict of the problem} from `conv layers`."""
    try:
        out = subprocess.run([conv, "layers"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise ValueError(f"cannot run '{conv} layers' ({e}); build first (ninja -C build) or pass --conv")
    pattern = re.compile(r"^(\S+)\s+n(\d+) c(\d+) (\d+)x(\d+) k(\d+) (\d+)x(\d+) s(\d+)(?:x(\d+))? p(\d+)(?:x(\d+))?"
                         r" d(\d+)(?:x(\d+))? g(\d+)\s")
    layers = {}
    for line in out.splitlines():
        m = pattern.match(line)
        if not m:
            continue
        g = m.groups()
        n, c, h, w, k, r, s = (int(x) for x in g[1:8])
        sh, sw = int(g[8]), int(g[9] or g[8])
        ph, pwid = int(g[10]), int(g[11] or g[10])
        dh = int(g[12])
        dw = int(g[13] or g[12])
        groups = int(g[14])
        p = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1
        q = (w + 2 * pwid - dw * (s - 1) - 1) // sw + 1
        layers[g[0]] = dict(n=n, c=c, h=h, w=w, k=k, r=r, s=s, p=p, q=q, groups=groups,
                          stride=f"{sh}" if sh == sw else f"{sh}x{sw}")
    return layers


def layer_cost(layer):
    """(bytes of x + y in fp16, flops) of one layer."""
    moved = 2 * (layer["n"] * layer["c"] * layer["h"] * layer["w"] + layer["n"] * layer["k"] * layer["p"] * layer["q"])
    flops = 2 * layer["n"] * layer["p"] * layer["q"] * layer["k"] * (layer["c"] // layer["groups"]) * layer["r"] * layer["s"]
    return moved, flops


def find_layer(layers, name):
    full = f"mobilenet/{name}"
    if full not in layers:
        raise ValueError(f"'conv layers' lists no {full}")
    return layers[full]


def times_table(figures, layers):
    hbm = value(figures, "hbm_bandwidth_gbps") * 1e9
    tb = number(value(figures, "hbm_bandwidth_gbps") / 1000)
    lines = [f"| layer (N = 32) | bytes moved (x + y) | time at {tb} TB/s | flops | TFLOP/s at that time |",
             "| --- | --- | --- | --- | --- |"]
    for name in TIMES_LAYERS:
        layer = find_layer(layers, name)
        moved, flops = layer_cost(layer)
        t = moved / hbm
        kind = f"{layer['r']}×{layer['s']} s{layer['stride']}"
        lines.append(f"| `mobilenet/{name}` ({kind}) | {moved / 1e6:.1f} MB | {t * 1e6:.1f} µs | "
                     f"{flops / 1e9:.2g} G | {flops / t / 1e12:.1f} |")
    return "\n".join(lines)


def network_times_table(figures, layers):
    hbm = value(figures, "hbm_bandwidth_gbps") * 1e9
    tb = number(value(figures, "hbm_bandwidth_gbps") / 1000)
    lines = [f"| layer | x + y | time at {tb} TB/s | times in the network |", "| --- | --- | --- | --- |"]
    total_time, total_count = 0.0, 0
    for name, count in NETWORK_DEPTHWISE:
        moved, _ = layer_cost(find_layer(layers, name))
        t = moved / hbm
        total_time += t * count
        total_count += count
        lines.append(f"| `{name}` | {moved / 1e6:.1f} MB | {t * 1e6:.1f} µs | {count} |")
    lines += ["", textwrap.fill(f"All {total_count} depthwise layers of one forward pass together take at least "
                                f"~{total_time * 1e6:.0f} µs at N = 32, at the published peak bandwidth.", 100)]
    return "\n".join(lines)


MARKERS = {
    "h100": lambda figures, conv: figures_table(figures),
    "h100-times": lambda figures, conv: times_table(figures, conv()),
    "h100-network-times": lambda figures, conv: network_times_table(figures, conv()),
}


def render(text, figures, conv_path):
    """The page with every h100 table it holds regenerated; ValueError when it holds none or a marker is broken."""
    cache = {}

    def conv():
        if "layers" not in cache:
            cache["layers"] = conv_layers(conv_path)
        return cache["layers"]

    found = 0
    for marker, make in MARKERS.items():
        begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
        counts = (text.count(begin), text.count(end))
        if counts == (0, 0):
            continue
        if counts != (1, 1) or text.index(begin) > text.index(end):
            raise ValueError(f"marker pair '{marker}' must appear once, begin before end")
        found += 1
        i, j = text.index(begin) + len(begin), text.index(end)
        text = text[:i] + "\n" + make(figures, conv) + "\n" + text[j:]
    if not found:
        raise ValueError("no h100 markers (" + ", ".join(f"<!-- {m}:begin -->" for m in MARKERS) + ")")
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the tables in the pages")
    mode.add_argument("--check", action="store_true", help="exit 1 when a page's table differs")
    ap.add_argument("--conv", default=os.path.join(ROOT, "build", "conv"), help="the runner, for `conv layers`")
    ap.add_argument("--figures", default=FIGURES)
    ap.add_argument("pages", nargs="+")
    args = ap.parse_args()
    try:
        figures = load_figures(args.figures)
    except (OSError, ValueError) as e:
        print(f"h100: {e}", file=sys.stderr)
        return 1
    status = 0
    for page in args.pages:
        try:
            with open(page, encoding="utf-8") as f:
                text = f.read()
            new = render(text, figures, args.conv)
        except (OSError, ValueError) as e:
            print(f"h100: {page}: {e}", file=sys.stderr)
            status = 1
            continue
        if args.check:
            if new != text:
                print(f"h100: {page}: a table differs from bench/h100.json and the layers; "
                      f"run python3 bench/h100.py --write {page}", file=sys.stderr)
                status = 1
        elif new != text:
            with open(page, "w", encoding="utf-8") as f:
                f.write(new)
            print(f"h100: {page}: updated")
        else:
            print(f"h100: {page}: unchanged")
    return status


if __name__ == "__main__":
    sys.exit(main())
