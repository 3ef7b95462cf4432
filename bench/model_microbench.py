#!/usr/bin/env python3
"""The timing model against published microbenchmarks: small PTX kernels, each measuring one thing the way
a microbenchmark paper measures it (a pointer chase for a latency, many independent instructions for a
throughput), run on the emulator with the model of an H100 (EMU_MODEL=h100, ptxrun), beside what Luo et al.
measured on an H800 PCIe (bench/h100.json, published_measurements). Written into emu/README.md between
<!-- model-microbench:begin --> and <!-- model-microbench:end -->.

    python3 bench/model_microbench.py --write [--ptxrun build/emu/ptxrun]
    python3 bench/model_microbench.py --check [--ptxrun build/emu/ptxrun]

Only rows whose published number is not one of the model's own inputs: the mma.sync and wgmma latencies
the model takes from the same paper would agree by construction and are left out. An H800 PCIe is not an
H100 SXM5 (fewer SMs, a lower clock, the same SM design), so throughputs are compared as fractions of each
GPU's own peak and latencies in clocks. The kernels are modeled from their PTX as written (EMU_NVDISASM
empty): they compare the model's figures with the paper's, and ptxas would fold their constant operands and
drop the chains whose results are not stored, which the paper's own kernels are written to prevent.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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


def mma_throughput(steps):
    """Every warp of a 1024-thread block issues `steps` rounds of 4 independent mma.sync m16n8k16."""
    regs = "    .reg .b32 %a<4>;\n    .reg .b32 %b<2>;\n    .reg .f32 %c<16>;\n    .reg .b64 %rd<2>;"
    body = [f"    mov.b32 %a{i}, 0;" for i in range(4)] + [f"    mov.b32 %b{i}, 0;" for i in range(2)]
    body += [f"    mov.f32 %c{i}, 0f00000000;" for i in range(16)]
    for _ in range(steps):
        for chain in range(4):
            c = ", ".join(f"%c{4 * chain + j}" for j in range(4))
            body.append(f"    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{{c}}}, {{%a0, %a1, %a2, %a3}}, "
                        f"{{%b0, %b1}}, {{{c}}};")
    body += ["    ld.param.u64 %rd1, [out];", "    st.global.f32 [%rd1], %c0;"]
    return kernel("mma", ".param .u64 out", regs, "\n".join(body))


class Runner:
    def __init__(self, ptxrun, work):
        self.ptxrun, self.work, self.n = ptxrun, work, 0

    def cycles(self, ptx, name, block, args):
        self.n += 1
        path = os.path.join(self.work, f"{self.n}.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        done = subprocess.run([self.ptxrun, path, name, "--grid", "1", "--block", str(block)] + args,
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

    def out(self, dtype):
        self.n += 1
        return f"out:{os.path.join(self.work, str(self.n))}.npy:{dtype}:1"


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


def figure(key):
    with open(os.path.join(HERE, "h100.json")) as f:
        entry = json.load(f)[key]
    return entry["value"] if isinstance(entry, dict) else entry


def published(what):
    with open(os.path.join(HERE, "h100.json")) as f:
        for m in json.load(f)["published_measurements"]["list"]:
            if m["what"] == what and "Luo" in m.get("paper", "") and not m.get("also_model_input"):
                return m
    sys.exit(f"model_microbench: bench/h100.json has no published measurement '{what}' from Luo et al. that "
             "is not also one of the model's inputs")


def rows(ptxrun):
    with tempfile.TemporaryDirectory(prefix="model_microbench_") as work:
        run = Runner(ptxrun, work)
        l1_bytes = 32 << 10  # fits any carveout's L1
        big = 4 << 20        # far more than the L1, far less than the L2
        lines = []
        for what, modeled, input_key in (
                ("L1 hit latency, pointer chase", latency(run, "global", l1_bytes, 2), "lat_l1_hit_cycles"),
                ("L2 hit latency, pointer chase", latency(run, "global", big, 2), "lat_l2_hit_cycles"),
                ("global memory latency, pointer chase", latency(run, "global", big, 1), "lat_dram_cycles"),
                ("shared memory load latency", latency(run, "shared", 4096, 1), "lat_smem_load_cycles")):
            m = published(what)
            lines.append((what, f"{modeled:.1f} clocks", f"{m['value']} {m['unit']}", f"{modeled / m['value']:.2f}",
                          f"`{input_key}` = {figure(input_key)}"))
        steps = (16, 48)
        cycles = [run.cycles(mma_throughput(s), "mma", 1024, [run.out("f32")]) for s in steps]
        flop_per_clock = 32 * 4 * (steps[1] - steps[0]) * 2 * 16 * 8 * 16 / (cycles[1] - cycles[0])
        modeled_share = flop_per_clock / figure("tensor_fp16_flop_per_clock_per_sm")
        m = published("mma.sync m16n8k16 f16 in, f32 accumulate, dense throughput")
        peak = float(re.search(r"peak ([\d.]+)", m["unit"])[1])
        lines.append(("mma.sync m16n8k16 (f16 in, f32 accumulate) throughput", f"{100 * modeled_share:.0f}% of peak",
                      f"{m['value']} TFLOP/s, {100 * m['value'] / peak:.0f}% of its {peak} peak",
                      f"{modeled_share / (m['value'] / peak):.2f}",
                      f"`mma_m16n8k16_issue_cycles` = {figure('mma_m16n8k16_issue_cycles')}"))
    return lines


def table(ptxrun):
    out = ["| quantity | modeled on NVIDIA H100 SXM5 80GB (a model, not a measurement) | measured by Luo et al. "
           "on an H800 PCIe | modeled / measured | the model's input for it |", "| --- | ---: | ---: | ---: | --- |"]
    out += ["| " + " | ".join(r) + " |" for r in rows(ptxrun)]
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
