#!/usr/bin/env python3
"""The chapters' figures, drawn from the same index math as the chapters' code.

    python3 docs/figures/draw.py            draw every figure into chapters/NN_name/figures/
    python3 docs/figures/draw.py --check    check the geometry, and that every figure is up to date

Each figure is computed in two steps: a data function reimplements the formulas of the chapter's
headers in Python (the fragment map of common/kernel/tensor_core.h, swizzle_chunk(), the stride phases of
chapters/06_dgrad/stride_phases.h, plan_split_k() of chapters/07_wgrad/split_k.h, ...), reading the
constants it needs (tile shapes, stages) from the headers themselves; a draw function turns that data
into a PNG with matplotlib.

Every PNG carries, in a text chunk named "figure-digest", the sha256 of this script's source, the
figure's name and its data. `--check` needs no matplotlib: it recomputes the data, runs the geometry
checks below (each compares the Python formulas with what the chapters' headers and READMEs document,
and some plant a mistake that must be caught), and compares each digest with the one the committed
PNG carries. PNG bytes differ between matplotlib versions, so the bytes are never compared.
"""
import argparse
import hashlib
import json
import math
import os
import re
import struct
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIGEST_KEY = "figure-digest"
DPI = 100
WIDTH = 9.6  # inches: 960 px at DPI, the width of a README column

# Okabe-Ito, a palette that stays distinct under the common colour-vision deficiencies.
ORANGE, SKY, GREEN, YELLOW = "#E69F00", "#56B4E9", "#009E73", "#F0E442"
BLUE, VERMILLION, PURPLE, BLACK = "#0072B2", "#D55E00", "#CC79A7", "#000000"
GREY, LIGHT, PALE_BLUE = "#BBBBBB", "#F2F2F2", "#D6EAF8"
PHASE_COLOURS = [ORANGE, SKY, GREEN, PURPLE]


def rel(*parts):
    return os.path.join(ROOT, *parts)


def read(*parts):
    with open(rel(*parts), encoding="utf-8") as f:
        return f.read()


def define(path, name):
    """The value of `#define NAME <int>` (or `NAME = <int>` in an enum) in a header of the project."""
    text = read(path)
    m = re.search(r"#define\s+%s\s+\(?(\d+)" % re.escape(name), text) or \
        re.search(r"\b%s\s*=\s*(\d+)" % re.escape(name), text)
    if not m:
        raise SystemExit(f"draw.py: {name} not found in {path}")
    return int(m.group(1))


def define_list(path, name):
    m = re.search(r"#define\s+%s\s+([\d, ]+)" % re.escape(name), read(path))
    if not m:
        raise SystemExit(f"draw.py: {name} not found in {path}")
    return [int(v) for v in m.group(1).split(",")]


def c_function(path, name):
    """The text of C function `name` in a file of the project: from the line where its name opens a
    definition (at column 0, with or without the return type before it) to the closing brace at column 0."""
    lines = read(path).split("\n")
    for i, line in enumerate(lines):
        if re.match(r"^(?:[A-Za-z_][\w ]*[\s*])?%s\(" % re.escape(name), line) and not line.rstrip().endswith(";"):
            for j in range(i, len(lines)):
                if lines[j] == "}":
                    return "\n".join(lines[i:j + 1])
    raise SystemExit(f"draw.py: no definition of {name}() in {path}")


# The C functions this script mirrors in Python, with the sha256 (first 16 digits) of their text when the
# mirror was last checked against them. --check fails when one changes: read the new code, update its
# Python mirror here (and the figure), then the digest.
MIRRORS = {
    ("common/kernel/tensor_core.h", "mma_a_row"): "d41616fdff9d7b2e",
    ("common/kernel/tensor_core.h", "mma_a_col"): "55e7dc72a72de738",
    ("common/kernel/tensor_core.h", "mma_b_k"): "7d970d7f4a9266d5",
    ("common/kernel/tensor_core.h", "mma_b_n"): "34537051c5d0177b",
    ("common/kernel/tensor_core.h", "mma_c_row"): "7d12543ff591812e",
    ("common/kernel/tensor_core.h", "mma_c_col"): "115296aaea67a69d",
    ("common/kernel/tensor_core.h", "swizzle_chunk"): "10b39d55d3491f7b",
    ("common/kernel/tiles.h", "halo_extent"): "f8f75fb205add03b",
    ("chapters/02_naive_cuda/02a_k_fastest.cu", "conv_naive_k_fastest"): "d3b5f7894666e8cc",
    ("chapters/02_naive_cuda/02b_q_fastest.cu", "conv_naive_q_fastest"): "4c254dcca41c2cdd",
    ("chapters/04_im2col_gemm/im2col.h", "im2col_input_coord"): "f5b7f6f2fea6fb44",
    ("chapters/06_dgrad/stride_phases.h", "phase_of"): "8f27a8612d8144c4",
    ("chapters/06_dgrad/stride_phases.h", "phase_tap_step"): "41e84ab138e858d9",
    ("chapters/06_dgrad/stride_phases.h", "phase_first_tap"): "71f074ef0d74fdfa",
    ("chapters/06_dgrad/stride_phases.h", "phase_tap_count"): "7b7db8815ec3aa1f",
    ("chapters/07_wgrad/split_k.h", "plan_split_k"): "93138d4b9119c7b7",
    ("chapters/08_hopper/hopper.h", "hopper_stage_of"): "74158e4785dc1111",
    ("chapters/08_hopper/hopper.h", "hopper_full_parity"): "863badaa0f335a4e",
    ("chapters/08_hopper/hopper.h", "hopper_empty_parity"): "ee3d032be89795cf",
    ("chapters/08_hopper/08b_warp_specialized.cu", "hopper_ws_kernel"): "d6b00685e5e80868",
    ("chapters/09_depthwise/depthwise.h", "dw_window_rows"): "ccb1a005b3d692fe",
    ("chapters/09_depthwise/depthwise.h", "dw_window_output"): "4f7cfb4cdda7f803",
    ("chapters/10_resnet_block/block.c", "block_traffic"): "f64d16440674bac2",
}


def mirror_digest(path, name):
    return hashlib.sha256(c_function(path, name).encode()).hexdigest()[:16]


# ---- the project's formulas, in Python ------------------------------------------------------------

def out_size(extent, pad, taps, stride, dil):
    """P (or Q) from H (or W): chapter 01's formula, problem_validate()'s."""
    return (extent + 2 * pad - dil * (taps - 1) - 1) // stride + 1


def halo_extent(tile, stride, taps, dil):
    """common/kernel/tiles.h halo_extent()."""
    return (tile - 1) * stride + (taps - 1) * dil + 1


# common/kernel/tensor_core.h: the m16n8k16 fragments and the swizzle
def mma_a_row(lane, reg):
    return (lane >> 2) + 8 * (reg & 1)


def mma_a_col(lane, reg):
    return 2 * (lane & 3) + 8 * (reg >> 1)


def mma_b_k(lane, reg):
    return 2 * (lane & 3) + 8 * reg


def mma_b_n(lane):
    return lane >> 2


def mma_c_row(lane, e):
    return (lane >> 2) + 8 * (e >> 1)


def mma_c_col(lane, e):
    return 2 * (lane & 3) + (e & 1)


def swizzle_chunk(row, chunk, chunks_per_row):
    f = row % 8 if chunks_per_row >= 8 else row // (8 // chunks_per_row) % chunks_per_row
    return row * chunks_per_row + (chunk ^ f)


# chapters/06_dgrad/stride_phases.h
def phase_of(h, pad, stride):
    return (h + pad) % stride


def phase_tap_step(dil, stride):
    return stride // math.gcd(dil, stride)


def phase_first_tap(phase, taps, dil, stride):
    step = phase_tap_step(dil, stride)
    for r in range(min(step, taps)):
        if r * dil % stride == phase:
            return r
    return -1


def phase_taps(phase, taps, dil, stride):
    first = phase_first_tap(phase, taps, dil, stride)
    return [] if first < 0 else list(range(first, taps, phase_tap_step(dil, stride)))


# chapters/07_wgrad/split_k.h
def plan_split_k(reduction, tiles, sm_count, waves, block_k, min_chunk):
    wanted = (sm_count * waves + tiles - 1) // tiles
    most = reduction // (min_chunk if min_chunk > 0 else 1)
    splits = max(1, min(wanted, most))
    chunk = reduction // splits // block_k * block_k
    chunk = chunk if chunk > block_k else block_k
    return (reduction + chunk - 1) // chunk, chunk


# chapters/09_depthwise/depthwise.h
def dw_window_output(i, r, stride, m):
    d = i - r
    if d < 0 or d % stride != 0 or d // stride >= m:
        return -1
    return d // stride


# chapters/08_hopper/hopper.h
def hopper_full_parity(t, stages):
    return (t // stages) & 1


def hopper_empty_parity(t, stages):
    return (t // stages - 1) & 1


# ---- the figures' data ----------------------------------------------------------------------------

def data_sliding_window():
    examples = []
    for ex in (dict(H=5, W=5, R=3, S=3, pad=1, stride=2, dil=1, p=1, q=2),
               dict(H=5, W=5, R=3, S=3, pad=2, stride=1, dil=2, p=0, q=3)):
        P = out_size(ex["H"], ex["pad"], ex["R"], ex["stride"], ex["dil"])
        Q = out_size(ex["W"], ex["pad"], ex["S"], ex["stride"], ex["dil"])
        taps = []
        for r in range(ex["R"]):
            for s in range(ex["S"]):
                h = ex["p"] * ex["stride"] - ex["pad"] + r * ex["dil"]
                w = ex["q"] * ex["stride"] - ex["pad"] + s * ex["dil"]
                taps.append([r, s, h, w, 0 <= h < ex["H"] and 0 <= w < ex["W"]])
        examples.append(dict(ex, P=P, Q=Q, taps=taps))
    return dict(examples=examples)


def naive_decompose(kernel, i, K, P, Q):
    if kernel == "02a":
        k = i % K
        q = i // K % Q
        p = i // (K * Q) % P
        n = i // (K * Q * P)
    else:
        q = i % Q
        p = i // Q % P
        k = i // (Q * P) % K
        n = i // (Q * P * K)
    return n, k, p, q


def data_warp_addresses():
    N, K, P, Q = 32, 64, 56, 56  # resnet50/res2_3x3
    kernels = {}
    for kernel in ("02a", "02b"):
        lanes = []
        for lane in range(32):  # warp 0 of block 0: i = lane
            n, k, p, q = naive_decompose(kernel, lane, K, P, Q)
            offset = ((n * K + k) * P + p) * Q + q
            lanes.append([n, k, p, q, 4 * offset])
        lines = sorted({a // 128 for *_, a in lanes})
        sectors = len({a // 32 for *_, a in lanes})
        kernels[kernel] = dict(lanes=lanes, lines=lines, sectors=sectors)
    return dict(N=N, K=K, P=P, Q=Q, kernels=kernels)


def data_halo_tile():
    tile = define("chapters/03_smem_tiling/tiled.cuh", "TILE_P")
    cases = []
    for name, stride, pad in (("res2_3x3", 1, 1), ("res3_3x3_s2", 2, 1)):
        R = S = 3
        dil = 1
        halo = halo_extent(tile, stride, R, dil)
        h_first = 0 * stride - pad  # the tile at (p_first, q_first) = (0, 0): it hangs over the top left
        p, q = 3, 5
        taps = [[(p * stride + r * dil), (q * stride + s * dil)] for r in range(R) for s in range(S)]
        origins = [[i * stride, j * stride] for i in range(tile) for j in range(tile)]
        cases.append(dict(name=name, stride=stride, pad=pad, R=R, dil=dil, tile=tile, halo=halo,
                          h_first=h_first, p=p, q=q, taps=taps, origins=origins))
    return dict(cases=cases)


def data_im2col():
    H = W = 4
    R = S = 3
    pad, stride, dil = 1, 1, 1
    letters = "abcdefghijklmnop"
    x = [[letters[h * W + w] for w in range(W)] for h in range(H)]
    P, Q = out_size(H, pad, R, stride, dil), out_size(W, pad, S, stride, dil)
    A = []
    for r in range(R):
        for s in range(S):
            row = []
            for p in range(P):
                for q in range(Q):
                    h, w = p * stride - pad + r * dil, q * stride - pad + s * dil
                    row.append(x[h][w] if 0 <= h < H and 0 <= w < W else ".")
            A.append(row)
    return dict(H=H, W=W, R=R, S=S, P=P, Q=Q, pad=pad, x=x, A=A, column=[1, 2])


def data_mma_fragments():
    A = [[None] * 16 for _ in range(16)]
    B = [[None] * 8 for _ in range(16)]
    C = [[None] * 8 for _ in range(16)]
    for lane in range(32):
        for reg in range(4):
            for half in range(2):
                A[mma_a_row(lane, reg)][mma_a_col(lane, reg) + half] = [lane, reg]
        for reg in range(2):
            for half in range(2):
                B[mma_b_k(lane, reg) + half][mma_b_n(lane)] = [lane, reg]
        for e in range(4):
            C[mma_c_row(lane, e)][mma_c_col(lane, e)] = [lane, e]
    return dict(A=A, B=B, C=C)


def data_swizzle():
    BK = define_list("chapters/05_implicit_gemm_tc/implicit_gemm.h", "IGEMM_SHAPE_05H")[2]
    chunks = BK // 8
    pitch_05b = BK + 8  # 05b: 8 halves of padding per row
    schemes = []
    for name, address, pad in (("unpadded", lambda r, c: 16 * (r * chunks + c), 0),
                               ("05b: padded", lambda r, c: r * pitch_05b * 2 + 16 * c, (pitch_05b - BK) // 8),
                               ("05c: swizzled", lambda r, c: 16 * swizzle_chunk(r, c, chunks), 0)):
        cells = [[r, c, address(r, c)] for r in range(8) for c in range(chunks)]
        cells += [[r, -1, address(r, chunks - 1) + 16 * (j + 1)] for r in range(8) for j in range(pad)]
        slots = [address(r, 0) // 16 % 8 for r in range(8)]
        ways = max(slots.count(s) for s in set(slots))
        schemes.append(dict(name=name, cells=cells, slots=slots, ways=ways))
    return dict(BK=BK, chunks=chunks, pitch_05b=pitch_05b, schemes=schemes)


def data_tiles():
    BM, BN, BK, WARPS_M, WARPS_N, STAGES = define_list("chapters/05_implicit_gemm_tc/implicit_gemm.h",
                                                       "IGEMM_SHAPE_05H")
    WM, WN = BM // WARPS_M, BN // WARPS_N
    warps = [[warp, warp % WARPS_M, warp // WARPS_M] for warp in range(WARPS_M * WARPS_N)]
    return dict(BM=BM, BN=BN, BK=BK, WARPS_M=WARPS_M, WARPS_N=WARPS_N, WM=WM, WN=WN,
                MMA_M=WM // 16, MMA_N=WN // 8, warps=warps)


def data_stride_phases():
    H = W = 7
    R = S = 3
    pad, stride, dil = 1, 2, 1
    P = out_size(H, pad, R, stride, dil)
    rows = []
    for h in range(H):
        ph = phase_of(h, pad, stride)
        links = []
        for r in phase_taps(ph, R, dil, stride):
            p = (h + pad - r * dil) // stride
            if 0 <= p < P:
                links.append([r, p])
        rows.append([h, ph, links])
    phases = []
    for ph in range(stride):
        for pw in range(stride):
            phases.append(dict(phase=[ph, pw], r=phase_taps(ph, R, dil, stride), s=phase_taps(pw, S, dil, stride),
                               h=[h for h in range(H) if phase_of(h, pad, stride) == ph],
                               w=[w for w in range(W) if phase_of(w, pad, stride) == pw]))
    return dict(H=H, W=W, R=R, S=S, pad=pad, stride=stride, dil=dil, P=P, rows=rows, phases=phases)


def data_split_k():
    wgrad_h = "chapters/07_wgrad/wgrad.h"
    bk, waves = define(wgrad_h, "WGRAD_BK"), define(wgrad_h, "WGRAD_WAVES")
    m = re.search(r"#define\s+WGRAD_MIN_CHUNK\s+\((\d+)\s*\*\s*WGRAD_BK\)", read(wgrad_h))
    min_chunk = int(m.group(1)) * bk
    reduction, tiles, sms = 32 * 112 * 112, 4, 132  # resnet50/conv1 at N = 32 on an H100's 132 SMs
    splits, chunk = plan_split_k(reduction, tiles, sms, waves, bk, min_chunk)
    return dict(layer="conv1", reduction=reduction, tiles=tiles, sms=sms, waves=waves, block_k=bk,
                min_chunk=min_chunk, splits=splits, chunk=chunk, last=reduction - (splits - 1) * chunk)


def simulate_pipeline(stages, lag, tiles, issue=1.0, latency=4.0, wgmma=2.0):
    """The protocol of hopper_ws_kernel() (08b) on abstract durations: returns the events, or None when
    the two sides wait on each other forever. Producer iteration t: wait empty[t % stages] (t >= stages),
    issue tile t (TMA of B + cp.async of A, `issue` long; they land `latency` later), then, t >= lag,
    wait for tile t - lag to land and arrive on its full barrier; after the loop the last `lag` tiles'
    arrivals. Consumer iteration kt: wait full[kt % stages], issue kt's wgmma group (`wgmma` long on the
    tensor cores, one group after another), wgmma_wait<1> (group kt - 1 done), arrive on empty for kt - 1."""
    full, empty, landed = {}, {}, {}
    prod = dict(t=0, clock=0.0, drained=False)
    cons = dict(kt=0, clock=0.0, tc_free=0.0, done={})
    events = dict(producer=[], consumer=[], full={}, empty={}, fill={})
    progressed = True
    while progressed and (not prod["drained"] or cons["kt"] < tiles):
        progressed = False
        t = prod["t"]
        if t < tiles:
            if t < stages or (t - stages) in empty:
                start = max(prod["clock"], empty.get(t - stages, 0.0))
                if t >= stages and empty[t - stages] > prod["clock"]:
                    events["producer"].append(["wait", prod["clock"], start, t])
                end = start + issue
                events["producer"].append(["issue", start, end, t])
                events["fill"][t] = start
                landed[t] = end + latency
                clock = end
                if t >= lag:
                    arrive = max(clock, landed[t - lag])
                    if arrive > clock:
                        events["producer"].append(["wait", clock, arrive, t - lag])
                    full[t - lag] = arrive
                    clock = arrive
                prod.update(t=t + 1, clock=clock)
                progressed = True
        elif not prod["drained"]:
            clock = max([prod["clock"]] + [landed[u] for u in range(max(0, tiles - lag), tiles)])
            if clock > prod["clock"]:
                events["producer"].append(["wait", prod["clock"], clock, -1])
            for u in range(max(0, tiles - lag), tiles):
                full[u] = clock
            prod.update(clock=clock, drained=True)
            progressed = True
        kt = cons["kt"]
        if kt < tiles and kt in full:
            start = max(cons["clock"], full[kt])
            if full[kt] > cons["clock"]:
                events["consumer"].append(["wait", cons["clock"], start, kt])
            group_start = max(start, cons["tc_free"])
            group_end = group_start + wgmma
            events["consumer"].append(["issue", start, start, kt])
            events["consumer"].append(["wgmma", group_start, group_end, kt])
            cons["tc_free"] = group_end
            cons["done"][kt] = group_end
            clock = start
            if kt >= 1:
                clock = max(clock, cons["done"][kt - 1])
                empty[kt - 1] = clock
            cons.update(kt=kt + 1, clock=clock)
            progressed = True
    if not prod["drained"] or cons["kt"] < tiles:
        return None
    events["full"] = {str(k): v for k, v in full.items()}
    events["empty"] = {str(k): v for k, v in empty.items()}
    events["fill"] = {str(k): v for k, v in events["fill"].items()}
    return events


def data_pipeline():
    hopper_h = "chapters/08_hopper/hopper.h"
    stages, lag = define(hopper_h, "H08B_STAGES"), define(hopper_h, "H08B_LAG")
    tiles = 14
    return dict(stages=stages, lag=lag, tiles=tiles, issue=1.0, latency=4.0, wgmma=2.0,
                events=simulate_pipeline(stages, lag, tiles))


def data_rolling_window():
    cases = []
    for R, stride, m in ((3, 1, 8), (3, 2, 4)):
        window = halo_extent(m, stride, R, 1)  # dw_window_rows()
        cells = [[i, r, dw_window_output(i, r, stride, m)] for i in range(window) for r in range(R)]
        cases.append(dict(R=R, stride=stride, m=m, window=window, cells=[c for c in cells if c[2] >= 0]))
    return dict(cases=cases)


def block_traffic(n, c, k, h, w, stride):
    """chapters/10_resnet_block/block.c block_traffic() for an identity block (2 convolutions), in bytes,
    with every stage's tensors and where they go."""
    half = 2.0
    p, q = out_size(h, 1, 3, stride, 1), out_size(w, 1, 3, stride, 1)
    convs = [(c, h, w, k, p, q), (k, p, q, k, p, q)]
    fused = unfused = 0.0
    stages = []
    for i, (ci, hi, wi, ko, po, qo) in enumerate(convs):
        x = half * n * ci * hi * wi
        wt = half * ko * ci * 9
        y = half * n * ko * po * qo
        vector = 2.0 * 4.0 * k  # fp32 scale and shift
        residual = y if i == 1 else 0.0
        fused += x + wt + y + vector + residual
        unfused += x + wt + y + vector + residual + 2.0 * y
        stages.append(dict(x=x, w=wt, y=y, vector=vector, residual=residual))
    return dict(fused=fused, unfused=unfused, stages=stages)


def data_resnet_block():
    shape = dict(n=32, c=64, k=64, h=56, w=56, stride=1)  # conv2_x
    return dict(shape=shape, traffic=block_traffic(**shape))


def data_network():
    net_h = read("chapters/11_train_cnn/net.h")
    layers = []
    for m in re.finditer(r"\*\s+conv(\d)\s+(\d)x(\d), (\d+) -> (\d+), stride (\d), pad (\d)", net_h):
        layers.append(dict(name="conv" + m.group(1), R=int(m.group(2)), C=int(m.group(4)), K=int(m.group(5)),
                           stride=int(m.group(6)), pad=int(m.group(7))))
    H = 32
    shapes = [[H, H, layers[0]["C"]]]
    for layer in layers:
        H = out_size(H, layer["pad"], layer["R"], layer["stride"], 1)
        shapes.append([H, H, layer["K"]])
    kernels = dict(fprop="05h", dgrad=[None, "06a", "06b"], wgrad="07b")
    return dict(layers=layers, shapes=shapes, classes=4, kernels=kernels)


# ---- drawing --------------------------------------------------------------------------------------

def plt_module():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 9, "font.family": "DejaVu Sans", "axes.titlesize": 10})
    return plt


def cell(ax, x, y, colour, text=None, edge="white", size=7, text_colour=BLACK, lw=0.8, hatch=None, w=1, h=1):
    from matplotlib.patches import Rectangle
    ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor=edge, linewidth=lw, hatch=hatch))
    if text is not None:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size, color=text_colour)


def grid_axes(ax, width, height):
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)


def draw_sliding_window(d):
    plt = plt_module()
    from matplotlib.patches import Rectangle
    fig = plt.figure(figsize=(WIDTH, 7.4))
    gs = fig.add_gridspec(2, 3, width_ratios=[10, 6, 7], wspace=0.05, hspace=0.12, left=0.02, right=0.99,
                          top=0.93, bottom=0.01)
    for n, ex in enumerate(d["examples"]):
        ax, ay, at = (fig.add_subplot(gs[n, i]) for i in range(3))
        pad, H, W = ex["pad"], ex["H"], ex["W"]
        grid_axes(ax, 9, 9)
        ax.set_xlim(-1, 9)
        ax.set_ylim(9.3, -1)
        taps = {(t[2], t[3]): t for t in ex["taps"]}
        for h in range(-pad, H + pad):
            for w in range(-pad, W + pad):
                inside = 0 <= h < H and 0 <= w < W
                tap = taps.get((h, w))
                colour = (ORANGE if inside else "#F6D7A7") if tap else (PALE_BLUE if inside else "white")
                label = f"{tap[0]},{tap[1]}" if tap else ("" if inside else "0")
                cell(ax, w + pad, h + pad, colour, label, edge=GREY if not inside else "white", size=7,
                     text_colour=BLACK if tap else "#888888")
        ax.add_patch(Rectangle((pad, pad), W, H, fill=False, edgecolor=BLUE, linewidth=1.5))
        for h in range(-pad, H + pad):
            ax.text(-0.15, h + pad + 0.5, str(h), ha="right", va="center", fontsize=7, color="#555555")
        for w in range(-pad, W + pad):
            ax.text(w + pad + 0.5, -0.15, str(w), ha="center", va="bottom", fontsize=7, color="#555555")
        ax.text(-0.9, -0.6, "h\\w", fontsize=7, color="#555555", va="center")
        grid_axes(ay, 5, 5)
        ay.set_xlim(-0.3, 5.3)
        ay.set_ylim(9.3, -1)
        for p in range(ex["P"]):
            for q in range(ex["Q"]):
                hit = (p, q) == (ex["p"], ex["q"])
                cell(ay, q, p + 2, ORANGE if hit else LIGHT, f"{p},{q}", size=7)
        ay.text(ex["Q"] / 2, 1.8, f"y: P × Q = {ex['P']} × {ex['Q']}\n(cells: p,q)", ha="center", va="bottom",
                fontsize=8)
        at.axis("off")
        hs = sorted({t[2] for t in ex["taps"]})
        ws = sorted({t[3] for t in ex["taps"]})
        lines = [f"H = W = {H}, R = S = {ex['R']}",
                 f"pad {pad}, stride {ex['stride']}, dilation {ex['dil']}",
                 "",
                 f"output (p, q) = ({ex['p']}, {ex['q']}), tap (r, s) reads",
                 "  h = p·stride − pad + r·dil",
                 f"     = {', '.join(map(str, hs))}",
                 "  w = q·stride − pad + s·dil",
                 f"     = {', '.join(map(str, ws))}",
                 "",
                 "P = (H + 2·pad − dil·(R−1) − 1) / stride + 1",
                 f"   = ({H} + {2 * pad} − {ex['dil'] * (ex['R'] - 1)} − 1) / {ex['stride']} + 1 = {ex['P']}"]
        at.text(0.0, 0.95, "\n".join(lines), ha="left", va="top", fontsize=8.5, transform=at.transAxes)
    fig.text(0.5, 0.995, "Blue outline: the image x (cells labelled with h and w). '0': zero padding. Orange: the "
             "taps (r, s) of the orange output;\nlight orange: a tap that lands in the padding and reads zero "
             "(the loop skips it).", ha="center", va="top", fontsize=9)
    return fig


def draw_warp_addresses(d):
    plt = plt_module()
    a, b = d["kernels"]["02a"], d["kernels"]["02b"]
    fig = plt.figure(figsize=(WIDTH, 7.2))
    gs = fig.add_gridspec(2, 1, height_ratios=[len(a["lines"]), 2.2], hspace=0.42, left=0.15, right=0.98,
                          top=0.88, bottom=0.07)
    PQ4 = 4 * d["P"] * d["Q"]
    for row, (kernel, k, title) in enumerate((
            ("02a", a, f"02a, k fastest: lane l stores y[0][l][0][0]. 32 floats P·Q·4 = {PQ4:,} B apart:\n"
                       f"{a['sectors']} sectors, 4 useful bytes in each"),
            ("02b", b, f"02b, q fastest: lane l stores y[0][0][0][l]. 32 consecutive floats:\n"
                       f"one 128-byte line, {b['sectors']} sectors, all used"))):
        ax = fig.add_subplot(gs[row, 0])
        lines = k["lines"]
        ax.set_xlim(0, 128)
        ax.set_ylim(max(len(lines), 1.6), 0)
        for y, line in enumerate(lines):
            for sector in range(4):
                touched = any(addr // 32 == line * 4 + sector for *_, addr in k["lanes"])
                cell(ax, sector * 32, y + 0.1, PALE_BLUE if touched else "white", edge=GREY, w=32, h=0.8, lw=0.6)
            for n, kk, p, q, addr in k["lanes"]:
                if addr // 128 == line:
                    lane = k["lanes"].index([n, kk, p, q, addr])
                    cell(ax, addr % 128, y + 0.1, BLUE, str(lane), edge="white", w=4, h=0.8, size=6,
                         text_colour="white")
            ax.text(-2, y + 0.5, f"byte {line * 128:,}", ha="right", va="center", fontsize=7)
        ax.set_xticks([0, 32, 64, 96, 128])
        ax.set_xlabel("byte within the 128-byte line (4 sectors of 32 bytes); blue: the 4 bytes a lane stores",
                      fontsize=8)
        ax.set_yticks([])
        for spine in ("top", "right", "left"):
            ax.spines[spine].set_visible(False)
        ax.set_title(title, fontsize=9, loc="left")
    fig.text(0.5, 0.995, f"Warp 0's store to y (NCHW fp32) on res2_3x3 (N = {d['N']}, K = {d['K']}, P = Q = "
             f"{d['P']}): one row per 128-byte line it touches,\nshaded: the 32-byte sectors the memory system must "
             "move. Lane l owns flat index i = l (blockIdx 0).", ha="center", va="top", fontsize=9)
    return fig


def draw_halo_tile(d):
    plt = plt_module()
    from matplotlib.patches import Rectangle
    fig = plt.figure(figsize=(WIDTH, 5.6))
    gs = fig.add_gridspec(1, 2, width_ratios=[d["cases"][0]["halo"] + 4, d["cases"][1]["halo"] + 2], wspace=0.12,
                          left=0.03, right=0.99, top=0.83, bottom=0.12)
    for n, c in enumerate(d["cases"]):
        ax = fig.add_subplot(gs[0, n])
        halo = c["halo"]
        grid_axes(ax, halo, halo)
        taps = {tuple(t) for t in c["taps"]}
        origins = {tuple(o) for o in c["origins"]}
        for i in range(halo):
            for j in range(halo):
                inside = i + c["h_first"] >= 0 and j + c["h_first"] >= 0
                colour = ORANGE if (i, j) in taps else (PALE_BLUE if inside else "#D9D9D9")
                cell(ax, j, i, colour, edge="white", lw=0.4, hatch=None if inside else "////")
                if (i, j) in origins:
                    ax.plot(j + 0.5, i + 0.5, "o", color=BLUE, markersize=2.2)
        ax.add_patch(Rectangle((0, 0), halo, halo, fill=False, edgecolor=BLACK, linewidth=1.2))
        ax.set_title(f"{c['name']}: {c['R']}×{c['R']}, stride {c['stride']}, pad {c['pad']}, dil {c['dil']}\n"
                     f"halo_h = ({c['tile']} − 1)·{c['stride']} + ({c['R']} − 1)·{c['dil']} + 1 = {halo}",
                     fontsize=9)
        ax.text(halo / 2, halo + 0.6, f"{halo}×{halo} staged inputs for {c['tile']}×{c['tile']} outputs",
                ha="center", va="top", fontsize=8)
    fig.text(0.5, 0.985, "The input tile a block stages for its 16×16 outputs at (p_first, q_first) = (0, 0), where it "
             "hangs over the image.\nGrey, hatched: zero padding (h or w < 0), staged as zeros. Dots: tap (0, 0) of each output, "
             "stride apart. Orange: the taps of output (3, 5).", ha="center", va="top", fontsize=9)
    return fig


def draw_im2col(d):
    plt = plt_module()
    fig = plt.figure(figsize=(WIDTH, 4.0))
    gs = fig.add_gridspec(1, 2, width_ratios=[6, 19], wspace=0.05, left=0.01, right=0.99, top=0.92, bottom=0.03)
    ax = fig.add_subplot(gs[0, 0])
    H, W, pad = d["H"], d["W"], d["pad"]
    pc, qc = d["column"]
    grid_axes(ax, W + 2 * pad, H + 2 * pad + 3)
    patch = {(pc - pad + r, qc - pad + s) for r in range(d["R"]) for s in range(d["S"])}
    for h in range(-pad, H + pad):
        for w in range(-pad, W + pad):
            inside = 0 <= h < H and 0 <= w < W
            colour = ORANGE if (h, w) in patch and inside else (PALE_BLUE if inside else "white")
            cell(ax, w + pad, h + pad + 1, colour, d["x"][h][w] if inside else "·",
                 edge=GREY if not inside else "white", size=9)
    ax.set_title(f"x: one channel, {H}×{W}, pad {pad}", fontsize=9)
    ax = fig.add_subplot(gs[0, 1])
    rows, cols = len(d["A"]), len(d["A"][0])
    grid_axes(ax, cols + 3, rows + 2)
    for i, row in enumerate(d["A"]):
        r, s = divmod(i, d["S"])
        ax.text(2.9, i + 2.5, f"(0,{r},{s})", ha="right", va="center", fontsize=7)
        for j, v in enumerate(row):
            centre = (r, s) == (pad, pad)
            colour = ORANGE if (j == pc * d["Q"] + qc and v != ".") else (PALE_BLUE if v != "." else "white")
            cell(ax, j + 3, i + 2, colour, "·" if v == "." else v, edge=BLUE if centre else GREY,
                 lw=1.4 if centre else 0.5, size=9)
    for j in range(cols):
        p, q = divmod(j, d["Q"])
        ax.text(j + 3.5, 1.9, f"(0,{p},{q})", ha="center", va="bottom", fontsize=7, rotation=90)
    ax.text(2.9, 1.9, "(c,r,s) \\ (n,p,q)", ha="right", va="bottom", fontsize=7)
    ax.set_title(f"A: C·R·S = {rows} rows × N·P·Q = {cols} columns. Column (0,{pc},{qc}): the orange patch; "
                 "outlined row (0,1,1): x itself", fontsize=9)
    return fig


def draw_mma_fragments(d):
    plt = plt_module()
    fig = plt.figure(figsize=(WIDTH, 5.0))
    gs = fig.add_gridspec(1, 3, width_ratios=[16, 8, 8], wspace=0.12, left=0.04, right=0.99, top=0.80,
                          bottom=0.10)
    reg_colours = [SKY, ORANGE, GREEN, PURPLE]
    specs = (("A", d["A"], "A: 16×16 (m × k), k contiguous (.row)\nregister r of lane L: colour; cell: L",
              "k", "m"),
             ("B", d["B"], "B: 16×8 (k × n), k contiguous\nper column (.col)", "n", "k"),
             ("C", d["C"], "C, D: 16×8 fp32 (m × n)\ncolour: element e", "n", "m"))
    for n, (name, M, title, xlab, ylab) in enumerate(specs):
        ax = fig.add_subplot(gs[0, n])
        rows, cols = len(M), len(M[0])
        grid_axes(ax, cols, rows)
        for i in range(rows):
            for j in range(cols):
                lane, reg = M[i][j]
                cell(ax, j, i, reg_colours[reg] if name != "C" else [YELLOW, YELLOW, GREY, GREY][reg], str(lane),
                     size=6.5, lw=0.5)
        for i in range(rows):
            ax.text(-0.2, i + 0.5, str(i), ha="right", va="center", fontsize=6.5, color="#555555")
        for j in range(cols):
            ax.text(j + 0.5, -0.2, str(j), ha="center", va="bottom", fontsize=6.5, color="#555555")
        ax.set_title(title, fontsize=9, pad=14)
        ax.text(cols / 2, rows + 0.4, f"{xlab} →, {ylab} ↓", ha="center", va="top", fontsize=8)
    from matplotlib.patches import Patch
    handles = [Patch(color=c, label=f"register {r}") for r, c in enumerate(reg_colours)]
    handles += [Patch(color=YELLOW, label="C: e = 0, 1"), Patch(color=GREY, label="C: e = 2, 3")]
    fig.legend(handles=handles, loc="lower center", ncol=6, fontsize=8, frameon=False)
    fig.text(0.5, 0.985, "mma.sync m16n8k16: the lane that holds each element (groupID = lane / 4, "
             "threadID_in_group = lane % 4;\ncommon/kernel/tensor_core.h mma_a_row/col, mma_b_k/n, mma_c_row/col)",
             ha="center", va="top", fontsize=9)
    return fig


def draw_swizzle(d):
    plt = plt_module()
    fig = plt.figure(figsize=(WIDTH, 3.9))
    gs = fig.add_gridspec(1, 3, wspace=0.16, left=0.04, right=0.99, top=0.70, bottom=0.03)
    row_colours = [ORANGE, SKY, GREEN, YELLOW, BLUE, VERMILLION, PURPLE, GREY]
    for n, sch in enumerate(d["schemes"]):
        ax = fig.add_subplot(gs[0, n])
        lines = max(addr for _, _, addr in sch["cells"]) // 128 + 1
        grid_axes(ax, 8, 5)
        ax.set_ylim(5.9, -0.1)
        for r, c, addr in sch["cells"]:
            line, slot = addr // 128, addr // 16 % 8
            if c < 0:
                cell(ax, slot, line, "white", "pad", edge=GREY, lw=0.5, size=6.5, hatch="///", text_colour="#777777")
            else:
                cell(ax, slot, line, row_colours[r] if c == 0 else LIGHT, f"r{r}\nc{c}", edge=GREY, lw=0.5,
                     size=6.5, text_colour="white" if c == 0 and r in (4, 5) else BLACK)
        for slot in range(8):
            ax.text(slot + 0.5, -0.15, str(slot), ha="center", va="bottom", fontsize=7, color="#555555")
        for line in range(lines):
            ax.text(-0.15, line + 0.5, str(line), ha="right", va="center", fontsize=7, color="#555555")
        verdict = "no bank conflict" if sch["ways"] == 1 else f"{sch['ways']}-way bank conflict"
        ax.text(4, lines + 0.2, f"chunk 0 of rows 0-7 in slots\n{', '.join(map(str, sch['slots']))}",
                ha="center", va="top", fontsize=8)
        ax.set_title(f"{sch['name']}: {verdict}", fontsize=9, pad=14)
    fig.text(0.5, 0.99, f"Rows 0-7 of a staged tile, BK = {d['BK']} halves (r: row, c: logical 16-byte chunk) in "
             "shared memory, one 128-byte line per row of cells\n(across: the line's eight 16-byte slots, four "
             "banks each). One ldmatrix phase reads chunk 0 of all 8 rows (coloured): they must fall\n"
             f"in 8 different slots. 05b pads rows to {d['pitch_05b']} halves; 05c stores chunk c of row r at "
             "c ^ ((r / 2) % 4) (swizzle_chunk).", ha="center", va="top", fontsize=8.5)
    return fig


def draw_tiles(d):
    plt = plt_module()
    fig = plt.figure(figsize=(WIDTH, 4.8))
    gs = fig.add_gridspec(1, 2, width_ratios=[1, 1.25], wspace=0.15, left=0.06, right=0.98, top=0.78, bottom=0.08)
    ax = fig.add_subplot(gs[0, 0])
    grid_axes(ax, d["BN"], d["BM"])
    ax.set_aspect("equal")
    for warp, wm, wn in d["warps"]:
        cell(ax, wn * d["WN"], wm * d["WM"], [SKY, ORANGE, GREEN, PURPLE][warp % 4],
             f"warp {warp}\nwarp_m {wm}, warp_n {wn}", edge="white", lw=2, size=8, w=d["WN"], h=d["WM"])
    for v in range(0, d["BN"] + 1, d["WN"]):
        ax.text(v, -3, str(v), ha="center", va="bottom", fontsize=7)
    for v in range(0, d["BM"] + 1, d["WM"]):
        ax.text(-3, v, str(v), ha="right", va="center", fontsize=7)
    ax.set_title(f"block tile BM × BN = {d['BM']} × {d['BN']} (pixels × output channels)\n"
                 f"warp = warp_m + {d['WARPS_M']}·warp_n", fontsize=9, pad=20)
    ax.text(d["BN"] / 2, d["BM"] + 3, "n (output channels) →, m (pixels) ↓", ha="center", va="top", fontsize=8)
    ax = fig.add_subplot(gs[0, 1])
    grid_axes(ax, d["WN"], d["WM"])
    for i in range(d["MMA_M"]):
        for j in range(d["MMA_N"]):
            cell(ax, j * 8, i * 16, SKY if (i + j) % 2 == 0 else PALE_BLUE, f"{i},{j}", edge="white", lw=1.5,
                 size=8, w=8, h=16)
    for v in range(0, d["WN"] + 1, 8):
        ax.text(v, -1.5, str(v), ha="center", va="bottom", fontsize=7)
    for v in range(0, d["WM"] + 1, 16):
        ax.text(-1.5, v, str(v), ha="right", va="center", fontsize=7)
    ax.set_title(f"warp 0's tile WM × WN = {d['WM']} × {d['WN']}: {d['MMA_M']} × {d['MMA_N']} mma tiles of 16 × 8, "
                 "acc[i][j][4]", fontsize=9, pad=20)
    ax.text(d["WN"] / 2, d["WM"] + 1.5, "j: n in steps of 8 →, i: m in steps of 16 ↓", ha="center", va="top",
            fontsize=8)
    fig.text(0.5, 0.99, f"05e-05i's tiles (IGEMM_SHAPE_05H). Per 16-deep step each warp issues {d['MMA_M']} "
             f"ldmatrix.x4 of A, {d['MMA_N'] // 2} of B\nand {d['MMA_M'] * d['MMA_N']} mma.sync m16n8k16; a stage "
             f"of BK = {d['BK']} is two such steps.", ha="center", va="top", fontsize=9)
    return fig


def draw_stride_phases(d):
    plt = plt_module()
    fig = plt.figure(figsize=(WIDTH, 5.9))
    gs = fig.add_gridspec(2, 5, height_ratios=[0.8, 1.25], width_ratios=[7, 3, 3, 3, 3], hspace=0.3, wspace=0.3,
                          left=0.04, right=0.98, top=0.87, bottom=0.02)
    ax = fig.add_subplot(gs[0, :])
    ax.set_xlim(-1.2, d["H"] + 0.2)
    ax.set_ylim(-0.35, 1.65)
    ax.axis("off")
    # dy row p sits above the input row its centre tap reads
    centre = lambda p: p * d["stride"] - d["pad"] + (d["R"] - 1) // 2 * d["dil"] + 0.5
    styles = {0: "-", 1: "--", 2: ":"}
    for h, ph, links in d["rows"]:
        for r, p in links:
            colour = PHASE_COLOURS[ph * d["stride"]]
            x0, x1 = h + 0.5, centre(p)
            ax.plot([x0, x1], [0.25, 1.05], styles[r], color=colour, linewidth=1.6)
            ax.text(x0 + 0.3 * (x1 - x0), 0.25 + 0.3 * 0.8, f"r={r}", fontsize=7, ha="center", va="center",
                    bbox=dict(facecolor="white", edgecolor="none", pad=0.3))
        cell(ax, h + 0.1, -0.25, PHASE_COLOURS[ph * d["stride"]], f"h={h}", edge="white", size=8, w=0.8, h=0.5)
    for p in range(d["P"]):
        cell(ax, centre(p) - 0.4, 1.05, LIGHT, f"p={p}", edge=GREY, size=8, w=0.8, h=0.5)
    ax.text(-0.2, 1.3, "dy", ha="right", va="center", fontsize=9)
    ax.text(-0.2, 0.0, "dx", ha="right", va="center", fontsize=9)
    ax.set_title(f"One axis, R = {d['R']}, stride {d['stride']}, pad {d['pad']}: tap r reaches input row h from dy row p "
                 "when p·stride = h + pad − r, 0 ≤ p < P.\nOdd h (phase 0): r = 0 and 2; even h (phase 1): r = 1 "
                 "(r = 0: solid, 1: dashed, 2: dotted)", fontsize=9)
    ax = fig.add_subplot(gs[1, 0])
    grid_axes(ax, d["W"], d["H"])
    for h in range(d["H"]):
        for w in range(d["W"]):
            ph = phase_of(h, d["pad"], d["stride"]) * d["stride"] + phase_of(w, d["pad"], d["stride"])
            cell(ax, w, h, PHASE_COLOURS[ph], f"{ph // d['stride']},{ph % d['stride']}", size=7)
    ax.set_title(f"dx ({d['H']}×{d['W']}): each pixel's phase", fontsize=9)
    for n, phase in enumerate(d["phases"]):
        ax = fig.add_subplot(gs[1, n + 1])
        grid_axes(ax, d["S"], d["R"] + 1.9)
        for r in range(d["R"]):
            for s in range(d["S"]):
                on = r in phase["r"] and s in phase["s"]
                cell(ax, s, r, PHASE_COLOURS[n] if on else LIGHT, f"{r},{s}" if on else "", size=7)
        taps = len(phase["r"]) * len(phase["s"])
        ax.text(d["S"] / 2, d["R"] + 0.2, f"{taps} tap{'s' if taps > 1 else ''}\nM = N·{len(phase['h'])}·"
                f"{len(phase['w'])}\nreduction {taps}·K", ha="center", va="top", fontsize=8)
        ax.set_title(f"phase ({phase['phase'][0]},{phase['phase'][1]})", fontsize=9)
    fig.text(0.5, 0.995, "dgrad at stride 2: a pixel's phase, (h + pad) mod stride along each axis, decides which "
             "taps reach it;\n06b runs one GEMM per phase, over that phase's pixels and exactly its taps",
             ha="center", va="top", fontsize=9)
    return fig


def draw_split_k(d):
    plt = plt_module()
    from matplotlib.patches import FancyArrowPatch
    fig = plt.figure(figsize=(WIDTH, 4.8))
    ax = fig.add_axes([0.03, 0.60, 0.94, 0.16])
    R, chunk, splits = d["reduction"], d["chunk"], d["splits"]
    ax.set_xlim(0, R)
    ax.set_ylim(0, 1)
    for s in range(splits):
        begin = s * chunk
        end = min(begin + chunk, R)
        colour = VERMILLION if s == splits - 1 else (SKY if s % 2 == 0 else BLUE)
        ax.add_patch(__import__("matplotlib.patches", fromlist=["Rectangle"]).Rectangle(
            (begin, 0.2), end - begin, 0.6, facecolor=colour, edgecolor="none"))
    ax.set_yticks([])
    for spine in ("top", "right", "left"):
        ax.spines[spine].set_visible(False)
    ax.set_xticks([0, 100000, 200000, 300000, R])
    ax.set_xticklabels(["0", "100,000", "200,000", "300,000", f"{R:,}"], fontsize=8)
    ax.set_xlabel("reduction index j = (n, p, q), 0 .. N·P·Q", fontsize=8)
    ax.annotate(f"split {splits - 1}: {d['last']} pixels", xy=(R - d["last"] / 2, 0.8), xytext=(R * 0.88, 1.35),
                fontsize=8, color=VERMILLION, ha="center", annotation_clip=False,
                arrowprops=dict(arrowstyle="-|>", color=VERMILLION, lw=1))
    wanted = -(-d["sms"] * d["waves"] // d["tiles"])
    fig.text(0.5, 0.985, f"plan_split_k() for {d['layer']} at N = 32 on {d['sms']} SMs: {d['tiles']} output tiles want "
             f"{d['sms']}·{d['waves']} / {d['tiles']} → {wanted} splits; the chunk, rounded down to\nwhole k tiles of "
             f"{d['block_k']}, is {chunk:,}, so there are {splits} splits, the last of {d['last']:,}. Below: one "
             "output tile's blocks and the sum of their partials.", ha="center", va="top", fontsize=9)
    ax = fig.add_axes([0.03, 0.02, 0.94, 0.5])
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 4.2)
    ax.axis("off")
    shown = [0, 1, 2, 3, None, splits - 1]
    xs = [0.3 + 1.6 * i for i in range(len(shown))]
    for x, s in zip(xs, shown):
        if s is None:
            ax.text(x + 0.6, 3.4, "…", ha="center", va="center", fontsize=14)
            ax.text(x + 0.6, 2.1, "…", ha="center", va="center", fontsize=14)
            continue
        cell(ax, x, 3.1, PALE_BLUE, f"block (tile, {s})\nj in split {s}", edge=BLUE, size=7.5, w=1.2, h=0.7)
        cell(ax, x, 1.8, LIGHT, f"partial[{s}]\nfp32 tile", edge=GREY, size=7.5, w=1.2, h=0.7)
        ax.add_patch(FancyArrowPatch((x + 0.6, 3.1), (x + 0.6, 2.5), arrowstyle="-|>", mutation_scale=9))
    # the left fold: ((p0 + p1) + p2) + ... in split order
    prev = (xs[0] + 0.6, 1.8)
    for x, s in zip(xs[1:], shown[1:]):
        if s is None:
            continue
        node = (x + 0.6, 1.0)
        ax.add_patch(FancyArrowPatch(prev, node, arrowstyle="-|>", mutation_scale=9, color=VERMILLION,
                                     shrinkA=0 if prev[1] > 1.5 else 7, shrinkB=7))
        ax.add_patch(FancyArrowPatch((x + 0.6, 1.8), node, arrowstyle="-|>", mutation_scale=9, color=VERMILLION,
                                     shrinkB=7))
        ax.plot(*node, "o", markersize=12, markerfacecolor="white", markeredgecolor=VERMILLION)
        ax.text(*node, "+", ha="center", va="center", fontsize=10, color=VERMILLION)
        prev = node
    ax.text(prev[0], 0.45, "dw = fp16(sum)", ha="center", va="center", fontsize=9)
    ax.text(0.3, 0.45, "wgrad_reduce adds the partials in one fixed order, split 0, 1, 2, …;\nno atomics: "
            "the same bits every run",
            ha="left", va="center", fontsize=9)
    return fig


def draw_pipeline(d):
    plt = plt_module()
    ev = d["events"]
    stages, tiles = d["stages"], d["tiles"]
    end = max(max(e[2] for e in ev["producer"]), max(e[2] for e in ev["consumer"])) + 0.5
    fig, ax = plt.subplots(figsize=(WIDTH, 5.6))
    fig.subplots_adjust(left=0.17, right=0.99, top=0.85, bottom=0.1)
    rows = ["producer\n(warpgroup 0)", "consumers\n(warpgroups 1, 2)", "their wgmma\ngroups"] + \
        [f"stage {s}" for s in range(stages)]
    tile_colour = lambda t: [SKY, ORANGE, GREEN, PURPLE, YELLOW][t % 5]
    for kind, a, b, t in ev["producer"]:
        if kind == "issue":
            cell(ax, a, 0.15, tile_colour(t), f"t{t}", edge="white", w=b - a, h=0.7, size=7)
        else:
            cell(ax, a, 0.3, "white", None, edge=GREY, w=b - a, h=0.4, hatch="////", lw=0.5)
    for kind, a, b, t in ev["consumer"]:
        if kind == "wgmma":
            cell(ax, a, 2.15, tile_colour(t), f"t{t}", edge="white", w=b - a, h=0.7, size=7)
        elif kind == "issue":
            ax.plot([a], [1.5], marker="|", color=BLACK, markersize=9)
        else:
            cell(ax, a, 1.3, "white", None, edge=GREY, w=b - a, h=0.4, hatch="////", lw=0.5)
    for t in range(tiles):
        s, u = t % stages, t // stages
        y = 3 + s
        fill, full = ev["fill"][str(t)], ev["full"][str(t)]
        release = ev["empty"].get(str(t), end)
        cell(ax, fill, y + 0.25, "white", None, edge=tile_colour(t), w=full - fill, h=0.5, lw=1.2)
        cell(ax, full, y + 0.15, tile_colour(t), f"t{t}, round {u}", edge="white", w=release - full, h=0.7, size=7)
        ax.plot([full], [y + 0.12], marker="v", color=BLACK, markersize=6)
        ax.text(full - 0.15, y + 0.08, str(u & 1), fontsize=6.5, ha="right", va="bottom")
        if str(t) in ev["empty"]:
            ax.plot([release], [y + 0.88], marker="^", color=VERMILLION, markersize=6)
            ax.text(release + 0.15, y + 0.92, str(u & 1), fontsize=6.5, ha="left", va="top", color=VERMILLION)
    ax.set_yticks([i + 0.5 for i in range(len(rows))])
    ax.set_yticklabels(rows, fontsize=8)
    ax.set_ylim(len(rows), 0)
    ax.set_xlim(0, end)
    ax.set_xlabel(f"time, schematic: issue {d['issue']:g}, copy latency {d['latency']:g}, one wgmma group "
                  f"{d['wgmma']:g} units (the order of events is the code's; no length is measured)", fontsize=8)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    fig.text(0.5, 0.995, f"08b's ring of {stages} stages, k tile t in stage t % {stages}, LAG {d['lag']}. Outlined: tile "
             "t's TMA and cp.async copies in flight; filled: tile t\nin its stage, from the completion of full[s] "
             "(▼; the digit is the parity the consumers wait for) to the consumers' arrival on\nempty[s] (▲; the "
             f"parity the producer waits for {stages} tiles later). Hatched: waiting on a barrier. |: a wgmma group "
             "is issued.", ha="center", va="top", fontsize=8.5)
    return fig


def draw_rolling_window(d):
    plt = plt_module()
    fig = plt.figure(figsize=(WIDTH, 4.6))
    gs = fig.add_gridspec(1, 2, wspace=0.1, left=0.04, right=0.99, top=0.80, bottom=0.02)
    r_colours = [SKY, ORANGE, GREEN, PURPLE, VERMILLION]
    for n, c in enumerate(d["cases"]):
        ax = fig.add_subplot(gs[0, n])
        grid_axes(ax, c["window"], c["m"])
        ax.set_xlim(-0.2, 10.2)
        ax.set_ylim(9.6, -0.2)
        for i in range(c["window"]):
            for o in range(c["m"]):
                cell(ax, i, o, LIGHT, None, lw=0.5)
        ax.text(c["window"] / 2, c["m"] + 0.3, f"{c['window']} staged rows, each loaded (ld.shared.v4) and converted "
                f"once,\nfor {c['m']} × {c['R']} = {c['m'] * c['R']} tap products per channel",
                ha="center", va="top", fontsize=8)
        for i, r, o in c["cells"]:
            cell(ax, i, o, r_colours[r], f"r={r}", size=7, lw=0.5)
        for i in range(c["window"]):
            ax.text(i + 0.5, -0.15, str(i), ha="center", va="bottom", fontsize=7)
        for o in range(c["m"]):
            ax.text(-0.15, o + 0.5, str(o), ha="right", va="center", fontsize=7)
        ax.set_title(f"{c['R']}×{c['R']}, stride {c['stride']}, m = {c['m']}: window rows i = 0 .. {c['window'] - 1} "
                     f"(across)\nfeed the strip's output rows 0 .. {c['m'] - 1} (down)", fontsize=9, pad=14)
    fig.text(0.5, 0.99, "09b's rolling window, one thread and one filter column s: each staged row i is loaded and "
             "converted once,\nthen added into output row (i − r) / stride through filter row r wherever that "
             "divides evenly (dw_window_output)", ha="center", va="top", fontsize=9)
    return fig


def draw_resnet_block(d):
    plt = plt_module()
    from matplotlib.patches import FancyArrowPatch
    st = d["traffic"]["stages"]
    MB = lambda b: f"{b / 1e6:.1f} MB"
    fig, ax = plt.subplots(figsize=(WIDTH, 4.4))
    fig.subplots_adjust(left=0.01, right=0.99, top=0.88, bottom=0.0)
    ax.set_xlim(0, 20)
    ax.set_ylim(1.0, 10)
    ax.axis("off")

    def tensor(x, y, name):
        cell(ax, x, y, PALE_BLUE, name, edge=BLUE, size=8, w=1.6, h=0.9)

    def kernel(x, y, name, w=3.0):
        cell(ax, x, y, "#FCE6C4", name, edge=ORANGE, size=7.5, w=w, h=0.9, lw=1.2)

    def arrow(a, b, label=None, colour=BLACK, below=False):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=9, color=colour, linewidth=1))
        if label:
            ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 + (-0.3 if below else 0.25), label, fontsize=7,
                    ha="center", va="center", color=colour)

    x_mb, h_mb = MB(st[0]["x"]), MB(st[0]["y"])
    # 10a, fused
    y = 7.2
    ax.text(0.1, 9.4, f"10a fused: 2 launches, {MB(d['traffic']['fused'])} in all", fontsize=9, weight="bold")
    tensor(0.2, y, "x")
    kernel(3.0, y, "conv1 + BN1 + ReLU")
    tensor(7.4, y, "h")
    kernel(10.2, y, "conv2 + BN2 + x + ReLU", w=3.6)
    tensor(15.4, y, "y")
    arrow((1.8, y + 0.45), (3.0, y + 0.45), x_mb)
    arrow((6.0, y + 0.45), (7.4, y + 0.45), h_mb)
    arrow((9.0, y + 0.45), (10.2, y + 0.45), h_mb)
    arrow((13.8, y + 0.45), (15.4, y + 0.45), h_mb)
    ax.add_patch(FancyArrowPatch((1.0, y + 0.9), (12.0, y + 0.9), connectionstyle="arc3,rad=-0.12",
                                 arrowstyle="-|>", mutation_scale=9, color=BLUE))
    ax.text(6.5, y + 2.0, f"residual x: {x_mb}", fontsize=7, ha="center", color=BLUE)
    # 10b, unfused
    y = 2.6
    ax.text(0.1, 5.2, f"10b unfused: 4 launches, {MB(d['traffic']['unfused'])} in all", fontsize=9, weight="bold")
    tensor(0.2, y, "x")
    kernel(2.5, y, "conv1", w=1.5)
    tensor(4.6, y, "h\n(before BN)")
    kernel(6.8, y, "BN1 + ReLU", w=1.8)
    tensor(9.2, y, "h")
    kernel(11.2, y, "conv2", w=1.5)
    tensor(13.2, y, "y\n(before BN)")
    kernel(15.4, y, "BN2 + x + ReLU", w=2.3)
    tensor(18.2, y, "y")
    extra = VERMILLION
    for a, b, colour in ((1.8, 2.5, BLACK), (4.0, 4.6, BLACK), (6.2, 6.8, extra), (8.6, 9.2, extra),
                         (10.8, 11.2, BLACK), (12.7, 13.2, BLACK), (14.8, 15.4, extra), (17.7, 18.2, extra)):
        arrow((a, y + 0.45), (b, y + 0.45), colour=colour)
    ax.add_patch(FancyArrowPatch((1.0, y + 0.9), (16.5, y + 0.9), connectionstyle="arc3,rad=-0.1",
                                 arrowstyle="-|>", mutation_scale=9, color=BLUE))
    ax.text(8.7, y + 2.2, f"residual x: {x_mb}", fontsize=7, ha="center", color=BLUE)
    ax.text(0.2, y - 0.45, f"Each arrow moves {h_mb}. Vermillion: the extra pass over each convolution's output, "
            f"read and written again in place: +{MB(2 * st[0]['y'] + 2 * st[1]['y'])} in all.\nNot drawn: the "
            f"filters ({MB(st[0]['w'] + st[1]['w'])}) and the BN scale and shift vectors "
            f"({(st[0]['vector'] + st[1]['vector']) / 1e3:.0f} KB), read by both.", fontsize=7.5, va="top")
    fig.text(0.5, 0.99, f"The identity block conv2_x (N = {d['shape']['n']}, {d['shape']['c']} → {d['shape']['k']} "
             f"channels, {d['shape']['h']}×{d['shape']['w']}, fp16): blue boxes live in global memory.\nUnfused, each "
             "convolution's output makes one more round trip through memory before BN and ReLU are applied "
             "(block_traffic(), block.c).", ha="center", va="top", fontsize=9)
    return fig


def draw_network(d):
    plt = plt_module()
    from matplotlib.patches import FancyArrowPatch
    fig, ax = plt.subplots(figsize=(WIDTH, 2.9))
    fig.subplots_adjust(left=0.01, right=0.99, top=0.90, bottom=0.0)
    ax.set_xlim(0, 20)
    ax.set_ylim(1.7, 6.3)
    ax.axis("off")
    xs = [0.2, 4.4, 8.6, 12.8, 16.4]
    names = ["images", "a1", "a2", "a3"]
    for i, (h, w, c) in enumerate(d["shapes"]):
        cell(ax, xs[i], 4.2, PALE_BLUE, f"{names[i]}\n{h}×{w}×{c}", edge=BLUE, size=8, w=2.0, h=1.1)
    cell(ax, xs[4], 4.2, PALE_BLUE, f"pool → {d['shapes'][-1][2]}\nfc → {d['classes']}\nsoftmax CE", edge=BLUE,
         size=8, w=3.0, h=1.3)
    for i, layer in enumerate(d["layers"]):
        a, b = xs[i] + 2.0, xs[i + 1]
        ax.add_patch(FancyArrowPatch((a, 4.9), (b, 4.9), arrowstyle="-|>", mutation_scale=10))
        ax.text((a + b) / 2, 5.15, f"{layer['name']} {layer['R']}×{layer['R']}, stride {layer['stride']}\n"
                f"+ ReLU; fprop {d['kernels']['fprop']}", ha="center", va="bottom", fontsize=7.5)
        ax.add_patch(FancyArrowPatch((b, 3.9), (a, 3.9), arrowstyle="-|>", mutation_scale=10, color=VERMILLION))
        dgrad = d["kernels"]["dgrad"][i]
        ax.text((a + b) / 2, 3.7, f"wgrad {d['kernels']['wgrad']} → dW{i + 1}\n" +
                (f"dgrad {dgrad} → d{names[i]}" if dgrad else "(no dgrad: images)"), ha="center", va="top",
                fontsize=7.5, color=VERMILLION)
    ax.add_patch(FancyArrowPatch((xs[4], 4.9), (xs[3] + 2.0, 4.9), arrowstyle="<|-", mutation_scale=10))
    ax.add_patch(FancyArrowPatch((xs[4], 3.9), (xs[3] + 2.0, 3.9), arrowstyle="-|>", mutation_scale=10,
                                 color=VERMILLION))
    ax.text(0.2, 2.2, "Black: the forward pass; vermillion: the backward pass (gradients, scaled by the loss scale S). "
            "Activations and\ngradients are fp16 NHWC, filters KRSC, every sum in fp32; SGD updates fp32 master weights.",
            fontsize=8, va="center")
    fig.text(0.5, 0.99, "The network chapter 11 trains, and the kernel that computes each convolution's "
             "three passes", ha="center", va="top", fontsize=9)
    return fig


FIGURES = [
    ("chapters/01_cpu_loop/figures/sliding_window.png", data_sliding_window, draw_sliding_window),
    ("chapters/02_naive_cuda/figures/warp_addresses.png", data_warp_addresses, draw_warp_addresses),
    ("chapters/03_smem_tiling/figures/halo_tile.png", data_halo_tile, draw_halo_tile),
    ("chapters/04_im2col_gemm/figures/im2col_matrix.png", data_im2col, draw_im2col),
    ("chapters/05_implicit_gemm_tc/figures/block_warp_tiles.png", data_tiles, draw_tiles),
    ("chapters/05_implicit_gemm_tc/figures/mma_fragments.png", data_mma_fragments, draw_mma_fragments),
    ("chapters/05_implicit_gemm_tc/figures/swizzle_banks.png", data_swizzle, draw_swizzle),
    ("chapters/06_dgrad/figures/stride_phases.png", data_stride_phases, draw_stride_phases),
    ("chapters/07_wgrad/figures/split_k.png", data_split_k, draw_split_k),
    ("chapters/08_hopper/figures/pipeline.png", data_pipeline, draw_pipeline),
    ("chapters/09_depthwise/figures/rolling_window.png", data_rolling_window, draw_rolling_window),
    ("chapters/10_resnet_block/figures/fused_vs_unfused.png", data_resnet_block, draw_resnet_block),
    ("chapters/11_train_cnn/figures/network.png", data_network, draw_network),
]


# ---- freshness ------------------------------------------------------------------------------------

def digest(path, data):
    with open(os.path.abspath(__file__), "rb") as f:
        source = f.read()
    h = hashlib.sha256(source)
    h.update(b"\0" + path.encode() + b"\0" + json.dumps(data, sort_keys=True).encode())
    return h.hexdigest()


def png_text(path):
    """The tEXt / iTXt chunks of a PNG file, as a dict."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        return {}
    text, at = {}, 8
    while at + 8 <= len(blob):
        length, kind = struct.unpack(">I4s", blob[at:at + 8])
        body = blob[at + 8:at + 8 + length]
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            text[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = body.partition(b"\0")
            compressed, rest = rest[0], rest[2:]
            _, _, rest = rest.partition(b"\0")  # language
            _, _, value = rest.partition(b"\0")  # translated keyword
            text[key.decode("latin-1")] = (zlib.decompress(value) if compressed else value).decode("utf-8")
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            text[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
        at += 12 + length
    return text


def save_png(fig, out, stamp):
    """Renders at DPI and stores the image with a palette of at most 128 colours (flat fills and anti-aliased
    text need no more; a third of the bytes of a full-colour PNG), the digest in a tEXt chunk."""
    from PIL import Image, PngImagePlugin
    fig.set_dpi(DPI)
    fig.canvas.draw()
    image = Image.frombuffer("RGBA", fig.canvas.get_width_height(), fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    image = image.convert("RGB").quantize(colors=128, dither=getattr(Image, "Dither", Image).NONE)
    info = PngImagePlugin.PngInfo()
    info.add_text(DIGEST_KEY, stamp)
    image.save(out, format="PNG", optimize=True, pnginfo=info)


def draw_all(only=None):
    plt = plt_module()
    for path, data_fn, draw_fn in FIGURES:
        if only and only not in path:
            continue
        data = data_fn()
        fig = draw_fn(data)
        out = rel(path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        save_png(fig, out, digest(path, data))
        plt.close(fig)
        print(f"wrote {path} ({os.path.getsize(out) // 1024} KB)")


# ---- geometry checks ------------------------------------------------------------------------------

def geometry_checks():
    """Each returns failures as strings; the checks compare the Python formulas with the chapters' own
    documented examples, and plant mistakes that must be caught."""
    fails = []

    def expect(cond, message):
        if not cond:
            fails.append(message)

    # 01: the output size, and every tap of every output of a small problem lands where the sum says
    for ex in data_sliding_window()["examples"]:
        last = (ex["P"] - 1) * ex["stride"] - ex["pad"] + (ex["R"] - 1) * ex["dil"]
        expect(last <= ex["H"] - 1 + ex["pad"] and last + ex["stride"] > ex["H"] - 1 + ex["pad"],
               f"01: P = {ex['P']} is not where the last tap still fits")
    expect(out_size(224, 3, 7, 2, 1) == 112 and out_size(56, 1, 3, 1, 1) == 56 and out_size(20, 2, 3, 1, 2) == 20,
           "01: out_size disagrees with the layers' known output sizes")

    # 02: the README's sectors per store, and 02b's flat index is y's own offset
    d = data_warp_addresses()
    expect(d["kernels"]["02a"]["sectors"] == 32 and d["kernels"]["02b"]["sectors"] == 4,
           "02: a warp's store is not 32 sectors (02a) and 4 sectors (02b), as the README's table says")
    for i in (0, 31, 3137, 200704, 6422527):
        n, k, p, q = naive_decompose("02b", i, d["K"], d["P"], d["Q"])
        expect(((n * d["K"] + k) * d["P"] + p) * d["Q"] + q == i, "02: 02b's index is not y's offset")
        n, k, p, q = naive_decompose("02a", i, d["K"], d["P"], d["Q"])
        expect(((n * d["P"] + p) * d["Q"] + q) * d["K"] + k == i, "02: 02a's decomposition is not k fastest")

    # 03: the README's halos (18 for res2_3x3, 33 for res3_3x3_s2); every staged element is read by a tap
    halos = [c["halo"] for c in data_halo_tile()["cases"]]
    expect(halos == [18, 33], f"03: halos {halos}, the README says 18 and 33")
    for c in data_halo_tile()["cases"]:
        read_ = {(i * c["stride"] + r * c["dil"]) for i in range(c["tile"]) for r in range(c["R"])}
        expect(read_ == set(range(c["halo"])), f"03: {c['name']}'s halo is not exactly what the taps read")

    # 04: A equals the README's worked example, cell by cell
    A = data_im2col()["A"]
    readme = read("chapters/04_im2col_gemm/README.md")
    rows = re.findall(r"\(r,s\) = (\d)(\d)\s+((?:[a-p.]\s*){16})", readme)
    expect(len(rows) == 9, "04: the README's 9-row im2col example was not found")
    for r, s, cells in rows:
        expect(cells.split() == A[int(r) * 3 + int(s)], f"04: row (r,s) = {r}{s} differs from the README's example")
    # and the matrix times a filter is the direct convolution, for a random filter
    d4 = data_im2col()
    import random
    rng = random.Random(1)
    xv = {ch: rng.randint(-4, 4) for ch in "abcdefghijklmnop"}
    xv["."] = 0
    wv = [rng.randint(-3, 3) for _ in range(9)]
    for p in range(d4["P"]):
        for q in range(d4["Q"]):
            direct = sum(wv[r * 3 + s] * (xv[d4["x"][p - 1 + r][q - 1 + s]] if 0 <= p - 1 + r < 4 and 0 <= q - 1 + s < 4
                                          else 0) for r in range(3) for s in range(3))
            gemm = sum(wv[i] * xv[A[i][p * d4["Q"] + q]] for i in range(9))
            expect(direct == gemm, f"04: W x A differs from the direct sum at (p, q) = ({p}, {q})")

    # 05: every fragment element held exactly once, and the README's lane tables
    f = data_mma_fragments()
    for name, M, regs in (("A", f["A"], 4), ("B", f["B"], 2), ("C", f["C"], 4)):
        cells = [tuple(c) for row in M for c in row]
        per = 2 if name != "C" else 1
        expect(None not in cells and all(cells.count(c) == per for c in set(cells)) and len(set(cells)) == 32 * regs,
               f"05: the {name} fragment does not hold each element exactly once")
    text05 = read("chapters/05_implicit_gemm_tc/README.md")
    a_rows = re.findall(r"^\s+m =\s+(\d+)((?:\s+\d+){8})\s*$", text05, re.M)
    c_rows = re.findall(r"^\s+m =\s+(\d+)((?:\s+\d+){4})\s*(?:elements.*)?$", text05, re.M)
    b_rows = re.findall(r"^\s+k =\s+(\d+),\d+((?:\s+\d+){8})", text05, re.M)
    expect(len(a_rows) >= 10 and len(b_rows) == 8 and len(c_rows) >= 4,
           "05: the README's fragment tables were not found")
    for m, lanes in a_rows:
        expect([f["A"][int(m)][2 * j][0] for j in range(8)] == [int(v) for v in lanes.split()],
               f"05: A row m = {m} differs from the README's fragment table")
    for k, lanes in b_rows:
        expect([f["B"][int(k)][n][0] for n in range(8)] == [int(v) for v in lanes.split()],
               f"05: B row k = {k} differs from the README's fragment table")
    for m, lanes in c_rows:
        expect([f["C"][int(m)][2 * j][0] for j in range(4)] == [int(v) for v in lanes.split()],
               f"05: C row m = {m} differs from the README's fragment table")
    # the swizzle: a permutation of each row, 16 rows down is 16 rows down, conflict-free ldmatrix phases
    for cpr in (1, 2, 4, 8, 16):
        for r in range(64):
            expect(sorted(swizzle_chunk(r, c, cpr) - r * cpr for c in range(cpr)) == list(range(cpr)),
                   f"05: swizzle_chunk is not a permutation of row {r} ({cpr} chunks per row)")
            expect(all(swizzle_chunk(r + 16, c, cpr) == swizzle_chunk(r, c, cpr) + 16 * cpr for c in range(cpr)),
                   f"05: swizzle_chunk moves row {r} + 16 by other than 16 rows")

    def phase_slots(place, cpr):
        return [[place(r, c) % 8 for r in range(r0, r0 + 8)] for r0 in range(0, 64, 8) for c in range(cpr)]

    for cpr in (4, 8):
        expect(all(len(set(s)) == 8 for s in phase_slots(lambda r, c: swizzle_chunk(r, c, cpr), cpr)),
               f"05: an ldmatrix phase meets a bank conflict in the swizzled tile ({cpr} chunks per row)")
        expect(not all(len(set(s)) == 8 for s in phase_slots(lambda r, c: r * cpr + c, cpr)),
               "05: the conflict check passes an unswizzled tile (it must fail)")
    sw = {s["name"]: s for s in data_swizzle()["schemes"]}
    expect(sw["05c: swizzled"]["slots"] == [0, 4, 1, 5, 2, 6, 3, 7],
           "05: chunk 0 of rows 0..7 is not in slots 0,4,1,5,2,6,3,7 as the README says")
    expect(sw["05b: padded"]["ways"] == 1 and sw["unpadded"]["ways"] == 4,
           "05: 05b's padded rows should be conflict-free and unpadded ones 4-way")
    # the tiles: the warps' accumulators cover the block tile exactly once (igemm_for_each_pair)
    t = data_tiles()
    seen = {}
    for warp, wm, wn in t["warps"]:
        for lane in range(32):
            for i in range(t["MMA_M"]):
                for j in range(t["MMA_N"]):
                    for e in range(4):
                        key = (wm * t["WM"] + i * 16 + mma_c_row(lane, e), wn * t["WN"] + j * 8 + mma_c_col(lane, e))
                        seen[key] = seen.get(key, 0) + 1
    expect(len(seen) == t["BM"] * t["BN"] and set(seen.values()) == {1},
           "05: the warps' accumulators do not cover the block tile exactly once")

    # 06: the README's one-axis table and the taps of each phase
    s6 = data_stride_phases()
    expected = {0: ([1], [0]), 1: ([0, 2], [1, 0]), 2: ([1], [1]), 3: ([0, 2], [2, 1]), 4: ([1], [2]),
                5: ([0, 2], [3, 2]), 6: ([1], [3])}
    for h, ph, links in s6["rows"]:
        expect(([r for r, _ in links], [p for _, p in links]) == expected[h],
               f"06: input row {h}'s taps differ from the README's table")
    counts = {tuple(p["phase"]): len(p["r"]) * len(p["s"]) for p in s6["phases"]}
    expect(counts == {(0, 0): 4, (0, 1): 2, (1, 0): 2, (1, 1): 1}, "06: the phases' tap counts are not 4, 2, 2, 1")
    expect(phase_taps(1, 3, 2, 2) == [] and phase_taps(0, 1, 1, 2) == [0] and phase_taps(1, 1, 1, 2) == [],
           "06: a phase without taps (dilation 2 or a 1x1 filter at stride 2) has taps")
    for H, R, pad, stride, dil in ((7, 3, 1, 2, 1), (71, 3, 1, 2, 1), (20, 5, 2, 3, 2), (9, 1, 0, 2, 1)):
        P = out_size(H, pad, R, stride, dil)
        for h in range(H):
            brute = [r for r in range(R) if (h + pad - r * dil) % stride == 0 and 0 <= (h + pad - r * dil) // stride < P]
            mine = [r for r in phase_taps(phase_of(h, pad, stride), R, dil, stride)
                    if 0 <= (h + pad - r * dil) // stride < P]
            expect(brute == mine, f"06: phase taps differ from brute force (H {H}, R {R}, stride {stride}, h {h})")

    # 07: the README's split table, row by row
    s7 = data_split_k()
    text07 = read("chapters/07_wgrad/README.md")
    table = re.findall(r"^\| (\w+) \| (\d+) \| [^|]+ \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", text07, re.M)
    expect(len(table) == 10, "07: the README's split table was not found")
    for layer, n, reduction, tiles, splits, chunk, blocks in table:
        got = plan_split_k(int(reduction), int(tiles), 132, s7["waves"], s7["block_k"], s7["min_chunk"])
        expect(got == (int(splits), int(chunk)) and int(splits) * int(tiles) == int(blocks),
               f"07: plan_split_k gives {got} for {layer}, the README says ({splits}, {chunk})")
    expect((s7["splits"], s7["chunk"], s7["last"]) == (67, 6080, 128),
           "07: conv1's plan is not 67 splits of 6080 with a last one of 128, as the README says")

    # 08: the simulated ring keeps the protocol, and a LAG past STAGES - 2 deadlocks
    p8 = data_pipeline()
    ev, stages = p8["events"], p8["stages"]
    expect(ev is not None, "08: the ring deadlocks at the code's LAG")
    if ev:
        for t in range(p8["tiles"]):
            reads = [e for e in ev["consumer"] if e[0] == "wgmma" and e[3] == t]
            expect(reads and reads[0][1] >= ev["full"][str(t)], f"08: tile {t} is read before its full barrier")
            if t >= stages:
                fill = ev["fill"][str(t)]
                expect(fill >= ev["empty"][str(t - stages)], f"08: tile {t} overwrites tile {t - stages} early")
                gone = [e for e in ev["consumer"] if e[0] == "wgmma" and e[3] == t - stages][0][2]
                expect(fill >= gone, f"08: tile {t} lands in a stage whose wgmma still runs")
            # the phase parities the figure prints are hopper.h's
            expect(hopper_full_parity(t, stages) == (t // stages) % 2, "08: full parity")
            if t >= stages:
                expect(hopper_empty_parity(t, stages) == ((t - stages) // stages) % 2, "08: empty parity")
    expect(simulate_pipeline(stages, stages - 2, 12) is not None,
           "08: LAG = STAGES - 2 is allowed by the static_assert but deadlocks in the model")
    expect(simulate_pipeline(stages, stages - 1, 12) is None,
           "08: LAG = STAGES - 1 should deadlock (the README's static_assert) but the model runs")

    # 09: every (output row, filter row) pair is met exactly once, at i = out * stride + r
    for c in data_rolling_window()["cases"]:
        pairs = [(o, r) for i, r, o in c["cells"]]
        expect(sorted(pairs) == sorted((o, r) for o in range(c["m"]) for r in range(c["R"])),
               f"09: the window for {c['R']}x{c['R']} stride {c['stride']} does not meet each pair once")
        expect(all(i == o * c["stride"] + r for i, r, o in c["cells"]), "09: window row is not out*stride + r")
    expect([c["window"] for c in data_rolling_window()["cases"]] == [10, 9], "09: window rows are not 10 and 9")

    # 10: block_traffic for the README's conv2_x row (64.4 MB fused, 115.8 MB unfused)
    tr = data_resnet_block()["traffic"]
    expect(round(tr["fused"] / 1e6, 1) == 64.4 and round(tr["unfused"] / 1e6, 1) == 115.8,
           f"10: conv2_x moves {tr['fused'] / 1e6:.1f} / {tr['unfused'] / 1e6:.1f} MB, the README says 64.4 / 115.8")
    tr = block_traffic(32, 128, 128, 28, 28, 1)
    expect(round(tr["fused"] / 1e6, 1) == 32.7 and round(tr["unfused"] / 1e6, 1) == 58.4,
           "10: conv3_x's bytes differ from the README's table")

    # 11: the network's shapes (net.h): 32x32x1 -> 16x16x16 -> 16x16x32 -> 8x8x64
    n11 = data_network()
    expect(n11["shapes"] == [[32, 32, 1], [16, 16, 16], [16, 16, 32], [8, 8, 64]],
           f"11: the network's shapes are {n11['shapes']}")
    return fails


def mirror_checks():
    return [f"{path}: {name}() is not the code draw.py's Python mirror was checked against (digest "
            f"{mirror_digest(path, name)}, recorded {want}): update the mirror in docs/figures/draw.py, then MIRRORS"
            for (path, name), want in MIRRORS.items() if mirror_digest(path, name) != want]


def check():
    fails = mirror_checks() + geometry_checks()
    for message in fails:
        print("FAIL", message)
    stale = 0
    for path, data_fn, _ in FIGURES:
        full = rel(path)
        want = digest(path, data_fn())
        if not os.path.exists(full):
            print(f"FAIL {path} is missing: run python3 docs/figures/draw.py")
            stale += 1
        elif png_text(full).get(DIGEST_KEY) != want:
            print(f"FAIL {path} is stale (drawn from other code or data): run python3 docs/figures/draw.py")
            stale += 1
    print(f"figures: {len(FIGURES)} figures, {len(MIRRORS)} mirrored C functions, {len(fails)} failures of the "
          f"geometry or the mirrors, {stale} stale or missing")
    return 1 if fails or stale else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="check the geometry and that every committed figure is up to date; draws nothing")
    parser.add_argument("--only", metavar="TEXT", help="draw only the figures whose path contains TEXT")
    args = parser.parse_args()
    if args.check:
        sys.exit(check())
    fails = mirror_checks() + geometry_checks()
    if fails:
        for message in fails:
            print("FAIL", message)
        sys.exit(1)
    draw_all(args.only)


if __name__ == "__main__":
    main()
