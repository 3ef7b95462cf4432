#!/usr/bin/env python3
"""The timing model against published microbenchmarks: small PTX kernels, each measuring one thing the way
a microbenchmark paper measures it (a pointer chase for a latency, many independent loads or instructions for a
throughput), run on the emulator with the model of an H100 (EMU_MODEL=h100, ptxrun), beside what Luo et al.
measured on an H800 PCIe and, for the latencies, what a public repository measured on a GH200 (bench/h100.json,
published_measurements), and beside what this project measured on an H100 (bench/gpu_session.sh validation): the
same chases (bench/validation/latency.cu) and the throughputs, instruction latencies and bank conflicts of
bench/validation/throughput.cu (bench/results/validation/). Written into emu/README.md between
<!-- model-microbench:begin --> and <!-- model-microbench:end -->, with how many rows are within 10% (the target).

    python3 bench/model_microbench.py --write [--ptxrun build/emu/ptxrun]
    python3 bench/model_microbench.py --check [--ptxrun build/emu/ptxrun]

Only rows whose measured number is not one of the model's own inputs: the mma.sync and wgmma latencies
the model takes from the same paper, and what it takes from this project's measurements on an H100 (the L2's
and DRAM's latencies, the L2's throughput, mma.sync's rate), would agree by construction and are left out. An H800 PCIe is not an
H100 SXM5 (fewer SMs, a lower clock, HBM2e, the same SM design), so throughputs are compared per SM, for the
whole GPU, or as fractions of each GPU's own peak, and latencies in clocks. The kernels are modeled from their
PTX as written (EMU_NVDISASM empty): they compare the model's figures with the paper's, and ptxas would fold
their constant operands and drop the chains whose results are not stored, which the paper's own kernels are
written to prevent.
"""
import argparse
import csv
import functools
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpus  # noqa: E402
import markers  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
README = os.path.join(ROOT, "emu", "README.md")
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
CYCLES = re.compile(r"\((\d+) cycles of one SM")


def kernel(name, params, regs, body):
    return f"{HEADER}.visible .entry {name}({params})\n{{\n{regs}\n{body}\n    ret;\n}}\n"


def chase(steps, space):
    """One thread follows `steps` links of a chain of 8-byte offsets, in a loop: each load's address is the
    last load's value plus the base (one add between two loads; the loop's own instructions do not wait)."""
    regs = "    .reg .b64 %rd<8>;\n    .reg .u32 %r<4>;\n    .reg .pred %p<2>;"
    if space == "shared":
        body = ["    .shared .align 8 .b64 tile[8];", "    mov.u64 %rd1, tile;", "    mov.u64 %rd2, 0;",
                "    st.shared.u64 [tile], %rd2;"]
    else:
        body = ["    ld.param.u64 %rd1, [table];", "    mov.u64 %rd2, 0;"]
    body += ["    mov.u32 %r1, 0;", f"    setp.ge.u32 %p1, %r1, {steps};", "@%p1 bra DONE;", "LINK:",
             "    add.s64 %rd3, %rd1, %rd2;", f"    ld.{space}.u64 %rd2, [%rd3];", "    add.u32 %r1, %r1, 1;",
             f"    setp.lt.u32 %p1, %r1, {steps};", "@%p1 bra LINK;", "DONE:",
             "    ld.param.u64 %rd4, [out];", "    st.global.u64 [%rd4], %rd2;"]
    return kernel("chase", ".param .u64 table, .param .u64 out", regs, "\n".join(body))


def mma_throughput(steps, k=16):
    """Every warp of a 1024-thread block issues `steps` rounds of 4 independent mma.sync m16n8k`k`."""
    a_regs, b_regs = k // 4, k // 8
    regs = "    .reg .b32 %a<4>;\n    .reg .b32 %b<2>;\n    .reg .f32 %c<16>;\n    .reg .b64 %rd<2>;"
    body = [f"    mov.b32 %a{i}, 0;" for i in range(4)] + [f"    mov.b32 %b{i}, 0;" for i in range(2)]
    body += [f"    mov.f32 %c{i}, 0f00000000;" for i in range(16)]
    a = ", ".join(f"%a{i}" for i in range(a_regs))
    b = ", ".join(f"%b{i}" for i in range(b_regs))
    for _ in range(steps):
        for chain in range(4):
            c = ", ".join(f"%c{4 * chain + j}" for j in range(4))
            body.append(f"    mma.sync.aligned.m16n8k{k}.row.col.f32.f16.f16.f32 {{{c}}}, {{{a}}}, {{{b}}}, {{{c}}};")
    body += ["    ld.param.u64 %rd1, [out];", "    st.global.f32 [%rd1], %c0;"]
    return kernel("mma", ".param .u64 out", regs, "\n".join(body))


def wgmma_chain(n, steps, threads, wait_each, a_in_registers=False):
    """Each warpgroup of a `threads`-thread block issues `steps` wgmma.mma_async m64n`n`k16 (f16 in, f32
    accumulate, B in shared memory and A there too (SS) or in registers (RS), zero data) on its accumulators:
    back to back in one group (a throughput), or each committed and waited for before the next (a latency)."""
    a_bytes, b_bytes = 64 * 16 * 2, n * 16 * 2
    size = a_bytes + b_bytes
    acc = ", ".join(f"%f{i}" for i in range(n // 2))
    regs = (f"    .reg .f32 %f<{n // 2}>;\n    .reg .b64 %rd<8>;\n    .reg .b32 %r<8>;\n    .reg .b32 %a<4>;\n"
            "    .reg .pred %p<3>;")
    body = ["    mov.u32 %r1, %tid.x;", "    mov.u32 %r2, tiles;", "    shl.b32 %r3, %r1, 2;", "    add.u32 %r4, %r2, %r3;",
            "    mov.u32 %r5, %r3;", "ZERO:", "    st.shared.b32 [%r4], 0;", f"    add.u32 %r4, %r4, {4 * threads};",
            f"    add.u32 %r5, %r5, {4 * threads};", f"    setp.lt.u32 %p1, %r5, {size};", "@%p1 bra ZERO;",
            "    fence.proxy.async.shared::cta;", "    bar.sync 0;"]
    body += [f"    mov.f32 %f{i}, 0f00000000;" for i in range(n // 2)] + [f"    mov.b32 %a{i}, 0;" for i in range(4)]
    # K-major, no swizzle ("Matrix Descriptor Format"): core matrices of 8 rows x 16 bytes, the two along K 128
    # bytes apart (leading byte offset), 8-row groups 256 bytes apart (stride byte offset)
    layout = (128 >> 4) << 16 | (256 >> 4) << 32
    body += ["    cvt.u64.u32 %rd1, %r2;", "    shr.u64 %rd1, %rd1, 4;", f"    or.b64 %rd2, %rd1, {layout};",
             f"    add.u64 %rd3, %rd2, {a_bytes >> 4};", "    setp.eq.u32 %p2, %r1, %r1;",  # scale-d: accumulate
             "    wgmma.fence.sync.aligned;"]
    a, trans = ("{%a0, %a1, %a2, %a3}", "0") if a_in_registers else ("%rd2", "0, 0")
    mma = f"    wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {{{acc}}}, {a}, %rd3, %p2, 1, 1, {trans};"
    for step in range(steps):
        if wait_each and step:  # the registers the last wait handed back are touched again: a fence first
            body.append("    wgmma.fence.sync.aligned;")
        body.append(mma)
        if wait_each:
            body += ["    wgmma.commit_group.sync.aligned;", "    wgmma.wait_group.sync.aligned 0;"]
    if not wait_each:
        body += ["    wgmma.commit_group.sync.aligned;", "    wgmma.wait_group.sync.aligned 0;"]
    body += ["    setp.ne.u32 %p1, %r1, 0;", "@%p1 bra DONE;", "    ld.param.u64 %rd4, [out];", "    st.global.f32 [%rd4], %f0;",
             "DONE:"]
    text = kernel("wgmma", ".param .u64 out", regs, "\n".join(body))
    return text.replace(".target sm_80", ".target sm_90a").replace(
        ".visible .entry", f".shared .align 1024 .b8 tiles[{size}];\n.visible .entry", 1)


def load_stream(loads, space, vector, table_bytes, qualifier=""):
    """Every thread of a 1024-thread block issues `loads` independent loads of `vector` 32-bit words, the block's
    threads side by side (a warp's load covers 128 x vector contiguous bytes), walking a table of table_bytes
    round and round; the loaded registers rotate through 4 sets, so no load waits for another."""
    width = 4 * vector
    regs = "    .reg .b32 %v<16>;\n    .reg .b64 %rd<8>;\n    .reg .u32 %r<4>;"
    body = ["    mov.u32 %r1, %tid.x;", f"    mul.wide.u32 %rd1, %r1, {width};"]
    if space == "shared":
        body = ["    .shared .align 16 .b8 tile[" + str(table_bytes) + "];", "    mov.u64 %rd2, tile;"] + body
    else:
        body = ["    ld.param.u64 %rd2, [table];"] + body
    body.append("    add.s64 %rd3, %rd2, %rd1;")
    if space == "shared":  # written before it is read (a table of 1024 x width bytes, as the loads take it)
        zeros = ", ".join(["0"] * vector) if vector > 1 else "0"
        body += [f"    st.shared{'' if vector == 1 else f'.v{vector}'}.b32 [%rd3], {('{' + zeros + '}') if vector > 1 else zeros};",
                 "    bar.sync 0;"]
    per_pass = table_bytes // (1024 * width)
    for i in range(loads):
        offset = (i % per_pass) * 1024 * width
        dest = [f"%v{4 * (i % 4) + j}" for j in range(vector)]
        dest = dest[0] if vector == 1 else "{" + ", ".join(dest) + "}"
        vec = "" if vector == 1 else f".v{vector}"
        body.append(f"    ld.{space}{qualifier}{vec}.b32 {dest}, [%rd3+{offset}];")
    body += ["    ld.param.u64 %rd4, [out];", "    st.global.b32 [%rd4], %v0;"]
    return kernel("loads", ".param .u64 table, .param .u64 out", regs, "\n".join(body))


def dram_copy(per_thread):
    """Each thread of 1024-thread blocks copies `per_thread` 16-byte vectors, the block's threads side by side:
    a streaming copy, every byte read and written once."""
    regs = "    .reg .b32 %v<16>;\n    .reg .b64 %rd<10>;\n    .reg .u32 %r<6>;"
    body = ["    ld.param.u64 %rd1, [src];", "    ld.param.u64 %rd2, [dst];", "    mov.u32 %r1, %tid.x;",
            "    mov.u32 %r2, %ctaid.x;", f"    mul.lo.u32 %r3, %r2, {1024 * per_thread};", "    add.u32 %r4, %r3, %r1;",
            "    mul.wide.u32 %rd3, %r4, 16;", "    add.s64 %rd4, %rd1, %rd3;", "    add.s64 %rd5, %rd2, %rd3;"]
    for group in range(0, per_thread, 4):  # 4 loads in flight, then their 4 stores
        for op in ("ld", "st"):
            for i in range(group, group + 4):
                v = "{" + ", ".join(f"%v{4 * (i % 4) + j}" for j in range(4)) + "}"
                address = f"[%rd{4 if op == 'ld' else 5}+{i * 16384}]"
                body.append(f"    ld.global.v4.b32 {v}, {address};" if op == "ld" else
                            f"    st.global.v4.b32 {address}, {v};")
    return kernel("copy", ".param .u64 src, .param .u64 dst", regs, "\n".join(body))


class Runner:
    def __init__(self, ptxrun, work):
        self.ptxrun, self.work, self.n = ptxrun, work, 0

    def cycles(self, ptx, name, block, args, grid=1, flags=()):
        self.n += 1
        path = os.path.join(self.work, f"{self.n}.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        done = subprocess.run([self.ptxrun, path, name, "--grid", str(grid), "--block", str(block)] + list(flags) + args,
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, EMU_MODEL="h100", EMU_THREADS="1", EMU_NVDISASM=""))
        found = CYCLES.search(done.stdout)
        if done.returncode != 0 or not found:
            sys.exit(f"model_microbench: ptxrun failed: {(done.stderr or done.stdout).strip()[-300:]}")
        return int(found[1])

    def array(self, values):
        self.n += 1
        path = os.path.join(self.work, f"{self.n}.npy")
        np.save(path, values)
        return "in:" + path

    def out(self, dtype, count=1):
        self.n += 1
        return f"out:{os.path.join(self.work, str(self.n))}.npy:{dtype}:{count}"


def index_chase(steps):
    """The GH200 measurement's chase (markdewing/AI_kernels, latency/cuda/latency.cu): one thread follows `steps`
    links of a table of 32-bit indexes, `idx = a[idx]`, and the loop's clocks over its loads are a link's. A link
    is the load and the index's address arithmetic before the next one: a mul.wide and an add as PTX writes them
    (ptxas makes one IMAD.WIDE of the two)."""
    regs = "    .reg .b64 %rd<8>;\n    .reg .u32 %r<4>;\n    .reg .pred %p<2>;"
    body = ["    ld.param.u64 %rd1, [table];", "    mov.u32 %r2, 0;", "    mov.u32 %r1, 0;",
            f"    setp.ge.u32 %p1, %r1, {steps};", "@%p1 bra DONE;", "LINK:",
            "    mul.wide.u32 %rd2, %r2, 4;", "    add.s64 %rd3, %rd1, %rd2;", "    ld.global.u32 %r2, [%rd3];",
            "    add.u32 %r1, %r1, 1;", f"    setp.lt.u32 %p1, %r1, {steps};", "@%p1 bra LINK;", "DONE:",
            "    ld.param.u64 %rd4, [out];", "    st.global.u32 [%rd4], %r2;"]
    return kernel("index_chase", ".param .u64 table, .param .u64 out", regs, "\n".join(body))


def index_latency(run, table_bytes, passes):
    """Clocks per link of index_chase through a table of table_bytes whose links visit its 128-byte lines once
    each, in a shuffled order (as the GH200 measurement shuffles them), over the last of `passes` walks: nothing
    taken off, as that measurement takes nothing off."""
    lines = table_bytes // 128
    order = np.concatenate(([0], 1 + np.random.default_rng(0).permutation(lines - 1)))  # from index 0, as it starts
    table = np.zeros(table_bytes // 4, dtype=np.uint32)
    table[order * 32] = np.roll(order, -1) * 32  # line order[i] leads to line order[i + 1], the last back to 0
    indexes = run.array(table)

    def cycles(steps):
        return run.cycles(index_chase(steps), "index_chase", 1, [indexes, run.out("u32")])
    return (cycles(lines * passes) - cycles(lines * (passes - 1))) / lines


def latency(run, space, table_bytes, passes):
    """Cycles per link of a chase whose links go `stride` bytes on through a table of table_bytes, measured
    over the last of `passes` walks (the first brings the table in), less the add between two loads."""
    stride = 160  # bytes: every link in another 128-byte line, so each load is a new line's
    links = table_bytes // stride
    offsets = np.zeros(table_bytes // 8, dtype=np.uint64)
    for i in range(links):
        offsets[i * stride // 8] = ((i + 1) % links) * stride
    args = [] if space == "shared" else [run.array(offsets)]

    def cycles(steps):
        return run.cycles(chase(steps, space), "chase", 1, (args or [run.array(np.zeros(1, np.uint64))]) +
                          [run.out("u64")])
    lat_add = figure("lat_int_cycles")
    if space == "shared":
        return (cycles(96) - cycles(32)) / 64 - lat_add
    return (cycles(links * passes) - cycles(links * (passes - 1))) / links - lat_add


@functools.lru_cache(maxsize=None)
def h100():
    """bench/h100.json, read once."""
    with open(os.path.join(HERE, "h100.json")) as f:
        return json.load(f)


def figure(key):
    entry = h100()[key]
    return entry["value"] if isinstance(entry, dict) else entry


def taken_from_here(key, what):
    """Whether the H100 file takes the figure from this project's measurement `what` on an H100 (its source names
    a CSV of bench/results/validation/ and that row): a row against that measurement would agree by construction."""
    measured = gpus.measurement_of(h100()[key]["source"])
    return bool(measured) and measured[0].startswith("bench/results/validation/") and measured[1] == what


def same_as_here(key, derived):
    """Stops, in one line, where the H100 file's figure taken from this project's measurement is not the figure
    the measurement gives now (`derived`, rounded as the file rounds it)."""
    if round(derived) != figure(key):
        sys.exit(f"model_microbench: bench/h100.json's {key} = {figure(key)} is not what this project's "
                 f"measurement it names gives, {derived:.2f} rounded")


def published(what, who="Luo"):
    for m in h100()["published_measurements"]["list"]:
        if m["what"] == what and who in m.get("paper", "") and not m.get("also_model_input"):
            return m
    sys.exit(f"model_microbench: bench/h100.json has no published measurement '{what}' by {who} that is not also "
             "one of the model's inputs")


def by(m):
    """Who measured it, on what: 'Luo et al., H800 PCIe'."""
    who = "Luo et al." if m["paper"].startswith("Luo") else m["paper"].split(",")[0]
    return f"{who}, {m['measured_on'].split(' (')[0]}"


WRITTEN_CHASE = "latency of a table a kernel just wrote, pointer chase"


@functools.lru_cache(maxsize=None)
def validation_rows(name):
    """The rows of this project's measurements bench/results/validation/<name>, by quantity: read once."""
    with open(os.path.join(HERE, "results", "validation", name)) as f:
        return {r["quantity"]: r for r in csv.DictReader(f)}


def validation_row(name, what, required):
    """The row of `what` in bench/results/validation/<name>; None where it is missing and need not be there (a
    measurement added to the programs since bench/gpu_session.sh last ran on a GPU)."""
    row = validation_rows(name).get(what)
    if row is None and required:
        sys.exit(f"model_microbench: bench/results/validation/{name} has no '{what}'")
    return row


def measured_here(what, gpu="h100", required=True):
    """This project's chase on an H100 (bench/validation/latency.cu, bench/gpu_session.sh validation): the load's
    latency, the clocks a link took and the GPU. A link is the load and the address arithmetic before the next
    load as ptxas compiled it: for the global chases a 64-bit add, two dependent IADD3s on sm_90, which are taken
    off at the model's integer latency; for shared memory ptxas folds the add into the LDS's address, nothing.
    None, where `required` is False and the CSV has no such row."""
    row = validation_row(f"latency_{gpu}.csv", what, required)
    if row is None:
        return None
    link = float(row["clocks_per_link"])
    return link - (0 if what.startswith("shared") else 2 * figure("lat_int_cycles")), link, row["gpu"]


def throughput_here(what, gpu="h100", required=True):
    """(value, unit, GPU) of `what` in this project's bench/results/validation/throughput_<gpu>.csv
    (bench/validation/throughput.cu); None where it was not measured and need not have been."""
    row = validation_row(f"throughput_{gpu}.csv", what, required)
    return (float(row["value"]), row["unit"], row["gpu"]) if row else None


def tensor_share_here(what, required=True):
    """A tensor-core throughput measured here as a share of the fp16 peak: its TFLOP/s at the SM clock the run
    measured beside it (flop per clock per SM over the peak's), and that TFLOP/s; None where it was not measured."""
    here = throughput_here(what, required=required)
    if here is None:
        return None
    tflops, _, gpu = here
    mhz = throughput_here(what + ", SM clock")[0]
    return tflops * 1e12 / (figure("sms") * mhz * 1e6) / figure("tensor_fp16_flop_per_clock_per_sm"), tflops, mhz, gpu


def chain(op):
    """One dependent chain of the PTX instruction `op` (on %r1, %f1 or %fd1, with runtime operands x, y, z): the
    kernel's text for `steps` instructions, a function of steps."""
    regs = ("    .reg .b32 %r<4>;\n    .reg .f32 %f<4>;\n    .reg .f64 %fd<4>;\n    .reg .b64 %rd<2>;")

    def text(steps):
        body = [f"    ld.param.u32 %r{i}, [{v}];" for i, v in ((1, "x"), (2, "y"), (3, "z"))]
        body += [f"    mov.b32 %f{i}, %r{i};" for i in (1, 2, 3)] + [f"    cvt.f64.f32 %fd{i}, %f{i};" for i in (1, 2, 3)]
        body += [f"    {op}"] * steps
        body += ["    cvt.rn.f32.f64 %f2, %fd1;", "    mov.b32 %r2, %f2;", "    mov.b32 %r3, %f1;", "    xor.b32 %r1, %r1, %r2;",
                 "    xor.b32 %r1, %r1, %r3;", "    ld.param.u64 %rd1, [out];", "    st.global.b32 [%rd1], %r1;"]
        return kernel("chain", ".param .u32 x, .param .u32 y, .param .u32 z, .param .u64 out", regs, "\n".join(body))
    return text


def bank_conflicts(ways, loads):
    """Each warp (one, or four); lane i loads 32-bit word i x `ways` of a shared table (each bank `ways` lanes'
    words, the others none: a `ways`-way conflict), `loads` independent loads into 4 registers in turn. Warp 0
    writes the table first."""
    regs = "    .reg .b32 %v<4>;\n    .reg .u32 %r<7>;\n    .reg .pred %p<2>;\n    .reg .b64 %rd<4>;"
    body = ["    .shared .align 4 .b32 words[1024];", "    mov.u32 %r6, %tid.x;", "    and.b32 %r1, %r6, 31;",
            f"    mul.lo.u32 %r2, %r1, {4 * ways};", "    mov.u32 %r3, words;", "    add.u32 %r4, %r3, %r2;",
            "    shl.b32 %r5, %r1, 2;", "    add.u32 %r5, %r3, %r5;", "    setp.lt.u32 %p1, %r6, 32;"]
    body += [f"@%p1 st.shared.b32 [%r5+{128 * i}], 0;" for i in range(32)] + ["    bar.sync 0;"]
    body += [f"    ld.shared.b32 %v{i % 4}, [%r4];" for i in range(loads)]
    body += ["    xor.b32 %v0, %v0, %v1;", "    xor.b32 %v0, %v0, %v2;", "    xor.b32 %v0, %v0, %v3;",
             "    ld.param.u64 %rd1, [out];", "    mul.wide.u32 %rd2, %r6, 4;", "    add.s64 %rd3, %rd1, %rd2;",
             "    st.global.b32 [%rd3], %v0;"]
    return kernel("conflicts", ".param .u64 out", regs, "\n".join(body))


def grouped_loads(group, loads):
    """throughput.cu's strided_loads with its lanes in groups of `group` on one word each, the groups' words 128
    bytes apart: each warp loads its words `loads` times, 8 at a time into 8 registers folded into one after
    them, after one load that brings their lines into the L1."""
    regs = "    .reg .b32 %v<8>;\n    .reg .u32 %r<6>;\n    .reg .b64 %rd<7>;"
    body = ["    mov.u32 %r1, %tid.x;", "    and.b32 %r2, %r1, 31;", f"    div.u32 %r3, %r2, {group};",
            "    ld.param.u64 %rd1, [table];", "    mul.wide.u32 %rd2, %r3, 128;", "    add.s64 %rd3, %rd1, %rd2;",
            "    ld.global.b32 %r4, [%rd3];"]
    for _ in range(loads // 8):  # as the CUDA: 8 loads, then the 8 folded into one value
        body += [f"    ld.global.b32 %v{i}, [%rd3];" for i in range(8)]
        body += [f"    xor.b32 %r4, %r4, %v{i};" for i in range(8)]
    body += ["    ld.param.u64 %rd4, [out];", "    mul.wide.u32 %rd5, %r1, 4;", "    add.s64 %rd6, %rd4, %rd5;",
             "    st.global.b32 [%rd6], %r4;"]
    return kernel("grouped_loads", ".param .u64 table, .param .u64 out", regs, "\n".join(body))


def grouped_loads_clocks(run, lines):
    """Clocks per warp load of the SM, 4 warps each loading the words of `lines` lines, 32 / lines lanes on
    each, 1024 times less 256 times (as throughput.cu measures it)."""
    table = run.array(np.zeros(1024, dtype=np.uint32))
    cycles = [run.cycles(grouped_loads(32 // lines, loads), "grouped_loads", 128, [table, run.out("u32", 128)])
              for loads in (256, 1024)]
    return (cycles[1] - cycles[0]) / (4 * 768)


def fma_chains(steps):
    """Each thread one chain of `steps` dependent FMAs (throughput.cu's chain<Ffma>), its result stored to its own
    word: launched with 1 to 32 warps, how many it takes to hide the FMA's latency."""
    regs = "    .reg .f32 %f<4>;\n    .reg .u32 %r<2>;\n    .reg .b64 %rd<4>;"
    body = ["    ld.param.f32 %f1, [x];", "    ld.param.f32 %f2, [y];", "    ld.param.f32 %f3, [z];"]
    body += ["    fma.rn.f32 %f1, %f1, %f2, %f3;"] * steps
    body += ["    mov.u32 %r1, %tid.x;", "    ld.param.u64 %rd1, [out];", "    mul.wide.u32 %rd2, %r1, 4;",
             "    add.s64 %rd3, %rd1, %rd2;", "    st.global.f32 [%rd3], %f1;"]
    return kernel("fma_chains", ".param .f32 x, .param .f32 y, .param .f32 z, .param .u64 out", regs, "\n".join(body))


def line_chase(links, passes):
    """throughput.cu's line_chase: each warp follows its own chain of 128-byte lines, its lanes reading the line's
    32 words (one request a line), `passes` times over the same `links` lines; warp w starts at line 64 w."""
    regs = "    .reg .u32 %r<10>;\n    .reg .pred %p<2>;\n    .reg .b64 %rd<8>;"
    body = ["    ld.param.u64 %rd1, [table];", "    mov.u32 %r1, %tid.x;", "    shr.u32 %r2, %r1, 5;",
            "    mul.lo.u32 %r8, %r2, 2048;", "    and.b32 %r4, %r1, 31;", "    mov.u32 %r9, 0;", "PASS:",
            "    mov.u32 %r3, %r8;", "    mov.u32 %r5, 0;", "LINK:", "    add.u32 %r6, %r3, %r4;",
            "    mul.wide.u32 %rd2, %r6, 4;", "    add.s64 %rd3, %rd1, %rd2;", "    ld.global.u32 %r3, [%rd3];",
            "    add.u32 %r5, %r5, 1;", f"    setp.lt.u32 %p1, %r5, {links};", "@%p1 bra LINK;",
            "    add.u32 %r9, %r9, 1;", f"    setp.lt.u32 %p1, %r9, {passes};", "@%p1 bra PASS;",
            "    ld.param.u64 %rd4, [out];", "    mul.wide.u32 %rd5, %r1, 4;", "    add.s64 %rd6, %rd4, %rd5;",
            "    st.global.u32 [%rd6], %r3;"]
    return kernel("line_chase", ".param .u64 table, .param .u64 out", regs, "\n".join(body))


# the GH200 measurements' names where they differ from Luo et al.'s
GH200_NAMES = {"global memory latency, pointer chase": "main memory latency, pointer chase"}


def stream_rate(run, space, vector, table_bytes, first_pass=False):
    """Bytes per clock one SM's 1024 threads load, from the difference of two runs of 16 and 48 loads each
    (after a whole pass over the table unless first_pass: then every load is the table's first touch)."""
    per_pass = 0 if first_pass else table_bytes // (1024 * 4 * vector)
    table = [run.array(np.zeros(1 if space == "shared" else table_bytes // 4, np.uint32))]
    cycles = [run.cycles(load_stream(per_pass + n, space, vector, table_bytes), "loads", 1024, table + [run.out("u32")])
              for n in (16, 48)]
    return 1024 * 4 * vector * 32 / (cycles[1] - cycles[0])


def mma_share(run, k):
    """The share of the tensor cores' fp16 peak 32 warps of independent mma.sync m16n8k`k` reach."""
    steps = (16, 48)
    cycles = [run.cycles(mma_throughput(s, k), "mma", 1024, [run.out("f32")]) for s in steps]
    flop_per_clock = 32 * 4 * (steps[1] - steps[0]) * 2 * 16 * 8 * k / (cycles[1] - cycles[0])
    return flop_per_clock / figure("tensor_fp16_flop_per_clock_per_sm")


def rows(ptxrun):
    """(quantity, modeled, published, measured by, modeled / measured, the model's input for it)"""
    with tempfile.TemporaryDirectory(prefix="model_microbench_") as work:
        run = Runner(ptxrun, work)
        l1_bytes = 32 << 10  # fits any carveout's L1
        big = 4 << 20        # far more than the L1, far less than the L2
        lines = []
        dram_chase = latency(run, "global", big, 1)
        for what, modeled, input_key, table_bytes, passes in (
                ("L1 hit latency, pointer chase", latency(run, "global", l1_bytes, 2), "lat_l1_hit_cycles", l1_bytes, 2),
                ("L2 hit latency, pointer chase", latency(run, "global", big, 2), "lat_l2_hit_cycles", big, 2),
                ("global memory latency, pointer chase", dram_chase, "lat_dram_cycles", big, 1),
                ("shared memory load latency", latency(run, "shared", 4096, 1), "lat_smem_load_cycles", 0, 0)):
            m = published(what)
            lines.append((what, f"{modeled:.1f} clocks", f"{m['value']} {m['unit']}", by(m), modeled / m["value"],
                          f"`{input_key}` = {figure(input_key)}"))
            if "pointer chase" in what:  # the GH200's links, its address arithmetic in them, by its own chase
                m = published(GH200_NAMES.get(what, what), "markdewing")
                link = index_latency(run, table_bytes, passes)
                lines.append((what, f"{link:.1f} clocks a link", f"{m['value']} {m['unit']} a link", by(m),
                              link / m["value"], f"`{input_key}` = {figure(input_key)}, "
                              f"`lat_int_cycles` = {figure('lat_int_cycles')} (twice: the index's mul.wide and add)"))
            here, link, gpu = measured_here(what)
            if taken_from_here(input_key, what):  # the model's input is this very measurement: no check
                same_as_here(input_key, here)
                continue
            lines.append((what, f"{modeled:.1f} clocks", f"{here:.1f} clocks ({link:.2f} a link)",
                          f"this project, {gpu}", modeled / here, f"`{input_key}` = {figure(input_key)}"))
        # a table one kernel wrote, the next kernel's first walk through it: the model gives every launch an L2
        # that holds nothing its SM has asked for (ASSUME_FIRST_REQUEST), so a DRAM access, whoever wrote it
        written = measured_here(WRITTEN_CHASE, required=False)
        if written:
            here, link, gpu = written
            lines.append((WRITTEN_CHASE, f"{dram_chase:.1f} clocks", f"{here:.1f} clocks ({link:.2f} a link)",
                          f"this project, {gpu}", dram_chase / here,
                          f"`lat_dram_cycles` = {figure('lat_dram_cycles')} (ASSUME_FIRST_REQUEST)"))
        # throughputs: one SM's bytes per clock; the L2's and DRAM's as the whole GPU's (this SM's share times
        # the SMs) and as a share of the peak, since the H800 PCIe has fewer SMs and HBM2e
        sms, clock = figure("sms"), figure("boost_clock_ghz")
        for what, modeled, unit, input_key in (
                ("shared memory load throughput", stream_rate(run, "shared", 4, 16 << 10), "bytes per clock per SM",
                 "smem_bytes_per_clock_per_sm"),
                ("L1 load throughput, FP32.v4 loads", stream_rate(run, "global", 4, 16 << 10), "bytes per clock per SM",
                 "smem_bytes_per_clock_per_sm"),
                ("L2 load throughput, FP32 loads", sms * stream_rate(run, "global", 1, 1 << 20),
                 "bytes per clock (whole GPU)", "l2_read_bytes_per_clock"),
                ("L2 load throughput, FP32.v4 loads", sms * stream_rate(run, "global", 4, 1 << 20),
                 "bytes per clock (whole GPU)", "l2_read_bytes_per_clock")):
            m = published(what)
            lines.append((what, f"{modeled:.1f} {unit}", f"{m['value']} {m['unit']}", by(m), modeled / m["value"],
                          f"`{input_key}` = {figure(input_key)}"))
            value, unit_here, gpu = throughput_here(what)
            if taken_from_here(input_key, what):
                same_as_here(input_key, value)
                continue
            lines.append((what, f"{modeled:.1f} {unit}", f"{value:.1f} {unit_here}", f"this project, {gpu}",
                          modeled / value, f"`{input_key}` = {figure(input_key)}"))
        m = published("global memory throughput")
        peak = float(re.search(r"([\d.]+) GB/s peak", m["where"])[1])
        dram = sms * stream_rate(run, "global", 4, 4 << 20, first_pass=True) * clock / figure("hbm_bandwidth_gbps")
        lines.append(("global memory load throughput, share of the peak", f"{100 * dram:.0f}% of peak",
                      f"{m['value']} GB/s, {100 * m['value'] / peak:.0f}% of its {peak:.0f} peak", by(m),
                      dram / (m["value"] / peak), f"`hbm_bandwidth_gbps` = {figure('hbm_bandwidth_gbps')}"))
        value, _, gpu = throughput_here("global memory load throughput")
        share = value / figure("hbm_bandwidth_gbps")
        lines.append(("global memory load throughput, share of the peak", f"{100 * dram:.0f}% of peak",
                      f"{value:.0f} GB/s, {100 * share:.0f}% of the H100's {figure('hbm_bandwidth_gbps')} peak",
                      f"this project, {gpu}", dram / share, f"`hbm_bandwidth_gbps` = {figure('hbm_bandwidth_gbps')}"))
        for k in (16, 8):
            m = published(f"mma.sync m16n8k{k} f16 in, f32 accumulate, dense throughput")
            peak = float(re.search(r"peak ([\d.]+)", m["unit"])[1])
            share = mma_share(run, k)
            lines.append((f"mma.sync m16n8k{k} (f16 in, f32 accumulate) throughput", f"{100 * share:.0f}% of peak",
                          f"{m['value']} TFLOP/s, {100 * m['value'] / peak:.0f}% of its {peak} peak", by(m),
                          share / (m["value"] / peak),
                          f"`mma_m16n8k{k}_issue_cycles` = {figure(f'mma_m16n8k{k}_issue_cycles')}"))
            what = f"mma.sync m16n8k{k} f16 in, f32 accumulate, dense throughput"
            here, tflops, mhz, gpu = tensor_share_here(what)
            if taken_from_here(f"mma_m16n8k{k}_issue_cycles", what):  # clocks an mma on one of the 4 tensor cores
                same_as_here(f"mma_m16n8k{k}_issue_cycles",
                             2 * 16 * 8 * k / (here * figure("tensor_fp16_flop_per_clock_per_sm") / 4))
                continue
            lines.append((f"mma.sync m16n8k{k} (f16 in, f32 accumulate) throughput", f"{100 * share:.0f}% of peak",
                          f"{tflops:.0f} TFLOP/s at {mhz:.0f} MHz, {100 * here:.0f}% of peak", f"this project, {gpu}",
                          share / here, f"`mma_m16n8k{k}_issue_cycles` = {figure(f'mma_m16n8k{k}_issue_cycles')}"))
        inputs = (f"`wgmma_fp16_clocks_per_n` = {figure('wgmma_fp16_clocks_per_n')}, `lat_wgmma_m64n8k16_f32_rs_cycles` = "
                  f"{figure('lat_wgmma_m64n8k16_f32_rs_cycles')}, `smem_bytes_per_clock_per_sm` = "
                  f"{figure('smem_bytes_per_clock_per_sm')} (ASSUME_WGMMA_OPERANDS)")
        for form, operands, ns in (("SS", "A and B in shared memory", (256, 64, 32, 16, 8)),
                                   ("RS", "A in registers", (64, 32, 16, 8))):  # two warpgroups, back to back
            for n in ns:
                m = published(f"wgmma m64n{n}k16 f16 in, f32 accumulate, A and B in shared memory, zero data"
                              if n == 256 else f"wgmma m64n{n}k16 f32 accumulate throughput, {form}, zero data")
                peak = float(re.search(r"peak ([\d.]+)", m["unit"])[1])
                cycles = [run.cycles(wgmma_chain(n, s, 256, False, form == "RS"), "wgmma", 256, [run.out("f32")])
                          for s in (8, 24)]
                share = 2 * 16 * 2 * 64 * n * 16 / (cycles[1] - cycles[0]) / figure("tensor_fp16_flop_per_clock_per_sm")
                quantity = f"wgmma m64n{n}k16 (f16 in, f32 accumulate, {operands}) throughput"
                lines.append((quantity, f"{100 * share:.0f}% of peak", f"{m['value']} TFLOP/s, "
                              f"{100 * m['value'] / peak:.0f}% of its {peak} peak", by(m), share / (m["value"] / peak),
                              inputs))
                here = tensor_share_here(f"wgmma m64n{n}k16 f32 accumulate throughput, {form}, zero data", False)
                if here:
                    share_here, tflops, mhz, gpu = here
                    lines.append((quantity, f"{100 * share:.0f}% of peak", f"{tflops:.0f} TFLOP/s at {mhz:.0f} MHz, "
                                  f"{100 * share_here:.0f}% of peak", f"this project, {gpu}", share / share_here, inputs))
        for form, operands, ns in (("SS", "A and B in shared memory", (128, 64, 32, 16, 8)),
                                   ("RS", "A in registers", (32, 16))):  # one warpgroup, each waited for
            for n in ns:
                m = published(f"wgmma m64n{n}k16 f32 accumulate latency, {form}")
                cycles = [run.cycles(wgmma_chain(n, s, 128, True, form == "RS"), "wgmma", 128, [run.out("f32")])
                          for s in (8, 24)]
                modeled = (cycles[1] - cycles[0]) / 16
                quantity = f"wgmma m64n{n}k16 (f32 accumulate, {operands}) latency, with its fence, commit and wait"
                lines.append((quantity, f"{modeled:.1f} clocks", f"{m['value']} {m['unit']}", by(m),
                              modeled / m["value"], inputs))
                here = throughput_here(f"wgmma m64n{n}k16 f32 accumulate latency, {form}", required=False)
                if here:
                    value, _, gpu = here
                    lines.append((quantity, f"{modeled:.1f} clocks", f"{value:.1f} clocks", f"this project, {gpu}",
                                  modeled / value, inputs))
        # dependent chains, one instruction class each, against what ptxas made of the same PTX on the H100
        for what, op, threads, inputs in (
                ("fma.rn.f32 latency", "fma.rn.f32 %f1, %f1, %f2, %f3;", 1, "`lat_fp32_cycles`"),
                ("add.s32 latency", "add.s32 %r1, %r1, %r2;", 1, "`lat_int_cycles`"),
                ("mad.lo.s32 latency", "mad.lo.s32 %r1, %r1, %r2, %r3;", 1, "`lat_int_cycles`"),
                ("ex2.approx.f32 latency", "ex2.approx.ftz.f32 %f1, %f1;", 1, "`lat_mufu_cycles`"),
                ("fma.rn.f16x2 latency", "fma.rn.f16x2 %r1, %r1, %r2, %r3;", 1, "`lat_fp32_cycles` (fp16 as fp32)"),
                ("fma.rn.f64 latency", "fma.rn.f64 %fd1, %fd1, %fd2, %fd3;", 1, "ASSUME_FP64_LATENCY"),
                ("cvt.rn.f16.f32 latency", "cvt.rn.f16x2.f32 %r1, %r3, %r1;", 1,
                 "`lat_int_cycles` (ASSUME_UNIT_LATENCIES: the ALU's)"),
                ("shfl.sync.bfly latency", "shfl.sync.bfly.b32 %r1, %r1, 1, 31, -1;", 32,
                 "`lat_smem_load_cycles` (ASSUME_UNIT_LATENCIES)")):
            text = chain(op)
            args = ["u32:1065353216", "u32:1056964608", "u32:1056964608"]  # f32 1, 0.5, 0.5
            cycles = [run.cycles(text(steps), "chain", threads, args + [run.out("u32")]) for steps in (8, 24)]
            modeled = (cycles[1] - cycles[0]) / 16
            value, _, gpu = throughput_here(what)
            lines.append((f"{what}, dependent chain", f"{modeled:.1f} clocks", f"{value:.2f} clocks",
                          f"this project, {gpu}", modeled / value, inputs))
        # issue rates: the same chains in 32 warps on one SM, every thread its own; warp instructions a clock (the
        # model's from the PTX, one instruction each: the add is the IADD3 the measured chain's pair of adds became)
        for name, op, inputs in (
                ("FFMA", "fma.rn.f32 %f1, %f1, %f2, %f3;", "thr_fp32_fma"),
                ("IADD3", "add.s32 %r1, %r1, %r2;", "thr_int32_add"),
                ("IMAD", "mad.lo.s32 %r1, %r1, %r2, %r3;", "thr_int32_mad"),
                ("MUFU.EX2", "ex2.approx.ftz.f32 %f1, %f1;", "thr_mufu"),
                ("HFMA2", "fma.rn.f16x2 %r1, %r1, %r2, %r3;", "thr_fp16x2_fma"),
                ("DFMA", "fma.rn.f64 %fd1, %fd1, %fd2, %fd3;", "thr_fp64_fma"),
                ("F2FP (cvt.rn.f16.f32)", "cvt.rn.f16x2.f32 %r1, %r3, %r1;", "thr_int32_add"),
                ("SHFL.BFLY", "shfl.sync.bfly.b32 %r1, %r1, 1, 31, -1;", "thr_shfl")):
            text = chain(op)
            args = ["u32:1065353216", "u32:1056964608", "u32:1056964608"]
            cycles = [run.cycles(text(steps), "chain", 1024, args + [run.out("u32")]) for steps in (64, 192)]
            modeled = 32 * 128 / (cycles[1] - cycles[0])
            what = f"{name} issue rate, dependent chains in 32 warps on one SM"
            value, _, gpu = throughput_here(what)
            if taken_from_here(inputs, what):  # results per clock: a warp instruction's, 2 a lane for an HFMA2
                same_as_here(inputs, value * 32 * (2 if name == "HFMA2" else 1))
                continue
            lines.append((f"{name} issue rate, 32 warps of dependent chains", f"{modeled:.2f} warp instructions a clock",
                          f"{value:.2f} warp instructions a clock", f"this project, {gpu}", modeled / value,
                          f"`{inputs}` = {figure(inputs)}" + (" (ASSUME_SHUFFLE_QUEUE)" if name == "SHFL.BFLY" else "")))
        # latency hidden by warps: one block of 1 to 32 warps on one SM
        table_lines = (4 << 20) // 128
        table = run.array(np.repeat((np.arange(table_lines, dtype=np.uint32) + 97) % table_lines * 32, 32))
        links = 2560  # a chain's lines: more than the L1 holds (2,048), so its second pass hits the L2 only
        for warps in (1, 2, 4, 8, 16, 32):
            threads = 32 * warps
            fma = [run.cycles(fma_chains(steps), "fma_chains", threads,
                              ["f32:1", "f32:0.5", "f32:0.5", run.out("f32", threads)]) for steps in (64, 192)]
            modeled = warps * 128 / (fma[1] - fma[0])  # long enough runs that 32 warps reach their steady rate
            what = f"dependent FFMA chains, {warps} warp{'s' if warps > 1 else ''} on one SM"
            value, _, gpu = throughput_here(what)
            lines.append((what, f"{modeled:.2f} warp instructions a clock", f"{value:.2f} warp instructions a clock",
                          f"this project, {gpu}", modeled / value, f"`lat_fp32_cycles` = {figure('lat_fp32_cycles')}"))
            chase = [run.cycles(line_chase(links, passes), "line_chase", threads, [table, run.out("u32", threads)])
                     for passes in (1, 2)]
            modeled = warps * links / (chase[1] - chase[0])
            what = f"dependent L2-hit loads, {warps} warp{'s' if warps > 1 else ''} on one SM"
            value, _, gpu = throughput_here(what)
            lines.append((what, f"{modeled:.4f} warp loads a clock", f"{value:.4f} warp loads a clock",
                          f"this project, {gpu}", modeled / value,
                          f"`lat_l2_hit_cycles` = {figure('lat_l2_hit_cycles')}"))
        for n in (1, 2, 4, 8, 16):  # the L1's tag stage where few lines serve many lanes (once measured)
            what = f"L1-hit warp loads, 32 lanes on {n} line{'s' if n > 1 else ''}"
            here = throughput_here(what, required=False)
            if here:
                modeled = grouped_loads_clocks(run, n)
                lines.append((what, f"{modeled:.2f} clocks a warp load of the SM",
                              f"{here[0]:.2f} clocks a warp load of the SM", f"this project, {here[2]}",
                              modeled / here[0], "one cycle a line (ASSUME_L1_LINE_PER_CYCLE)"))
        for ways in (1, 2, 4, 8, 16, 32):  # one warp and four, 16 and 48 loads each
            for warps, suffix, label in ((1, "", "one warp"), (4, ", 4 warps", "4 warps, a load of the SM")):
                cycles = [run.cycles(bank_conflicts(ways, loads), "conflicts", 32 * warps, [run.out("u32", 32 * warps)])
                          for loads in (16, 48)]
                modeled = (cycles[1] - cycles[0]) / (32 * warps)
                value, _, gpu = throughput_here(f"shared memory bank conflicts, {ways}-way{suffix}")
                lines.append((f"shared memory 32-bit loads, {ways}-way bank conflict, {label}",
                              f"{modeled:.2f} clocks a load", f"{value:.2f} clocks a load", f"this project, {gpu}",
                              modeled / value,
                              f"`smem_bytes_per_clock_per_sm` = {figure('smem_bytes_per_clock_per_sm')}"))
    return lines


def not_yet_measured():
    """What the programs measure that their last run on a GPU did not (added since): a sentence, or nothing."""
    missing = []
    if not measured_here(WRITTEN_CHASE, required=False):
        missing.append("the chase through a table a kernel has just written (`bench/validation/latency.cu`), which "
                       "the model takes from DRAM (ASSUME_FIRST_REQUEST)")
    if not throughput_here("L1-hit warp loads, 32 lanes on 1 line", required=False):
        missing.append("warp loads whose 32 lanes share 1 to 16 lines, one word a line (`bench/validation/"
                       "throughput.cu`), which would test ASSUME_L1_LINE_PER_CYCLE where a depthwise kernel's filter "
                       "loads (09a: 4 lines a warp load) lean on it")
    if not throughput_here("wgmma m64n8k16 f32 accumulate throughput, RS, zero data", required=False):
        missing.append("`wgmma` with A in registers (`bench/validation/throughput.cu`), which would test "
                       "ASSUME_WGMMA_OPERANDS apart from the rows it was written after")
    return f" Not yet measured on a GPU, added since the last run: {'; and '.join(missing)}." if missing else ""


def table(ptxrun):
    lines = rows(ptxrun)
    within = sum(1 for r in lines if abs(r[4] - 1) <= 0.1)
    ours = [r for r in lines if r[3].startswith("this project")]
    out = [f"{len(lines)} comparisons, {within} of them within 10% of the measurement (the target: all); of the "
           f"{len(ours)} against this project's measurements on an H100, {sum(1 for r in ours if abs(r[4] - 1) <= 0.1)}. "
           "Those are `bash bench/gpu_session.sh validation`'s: the latencies by the same chases "
           "(`bench/validation/latency.cu`), clocks per link less the address arithmetic ptxas put between two "
           "loads, at the model's integer latency (two dependent IADD3s for the global chases, none for shared "
           "memory); the rest by `bench/validation/throughput.cu` (its header says how each is measured; the "
           "tensor cores' share of the peak at the SM clock each run measured)." + not_yet_measured(), "",
           "| quantity | modeled on NVIDIA H100 SXM5 80GB (a model, not a measurement) | measured | "
           "measured by, on | modeled / measured | the model's input for it |", "| --- | ---: | ---: | --- | ---: | --- |"]
    out += [f"| {q} | {mod} | {pub} | {who} | {ratio:.2f} | {inp} |" for q, mod, pub, who, ratio, inp in lines]
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    ap.add_argument("--ptxrun", default=os.path.join(ROOT, "build", "emu", "ptxrun"))
    args = ap.parse_args(argv)
    return markers.refresh(README, "model-microbench", table(args.ptxrun), args.check, "model_microbench",
                           "python3 bench/model_microbench.py --write")


if __name__ == "__main__":
    sys.exit(main())
