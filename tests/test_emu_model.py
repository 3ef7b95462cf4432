"""The timing model (emu/model.c) against the figures it is built from: microbenchmarks in PTX, each written so
that one figure of a GPU file (bench/<gpu>.json) decides its modeled time, run on two GPUs whose files differ,
so a model that ignored the file, or read the wrong figure, fails.

    python3 tests/test_emu_model.py PTXRUN WORK_DIR

Each case runs a kernel twice with different lengths and takes the difference (the per-step cost, free of
the launch's fixed start and end). These check that the model does what its figures say, not that the
figures are right: that is the validation's job (emu/README.md, "The timing model"). The figures' cases
model the PTX as written (EMU_NVDISASM empty: each PTX instruction one machine instruction), since ptxas
would fold their constant operands away; the machine code's cases read what ptxas makes of the PTX.
"""
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptxrun_cases import Fail, Runner, find_tool  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
import stall_counts  # noqa: E402  (its reader of the control bits: the test reads them apart from the model)
import model_microbench  # noqa: E402  (its wgmma kernel)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUS = ("h100", "a100")


def figure(gpu, key):
    with open(os.path.join(ROOT, "bench", gpu + ".json")) as f:
        entry = json.load(f)[key]
    return entry["value"] if isinstance(entry, dict) else entry


HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def kernel(name, params, regs, body):
    return f"{HEADER}.visible .entry {name}({params})\n{{\n{regs}\n{body}\n    ret;\n}}\n"


def fma_chain(n, chains=1):
    """n steps of `chains` independent dependent-FMA chains, interleaved."""
    regs = "    .reg .f32 %f<40>;\n    .reg .b64 %rd<3>;"
    body = [f"    mov.f32 %f{c}, 0f3F800000;" for c in range(chains + 2)]
    for _ in range(n):
        body += [f"    fma.rn.f32 %f{c}, %f{c}, %f{chains}, %f{chains + 1};" for c in range(chains)]
    body += ["    ld.param.u64 %rd1, [out];", "    st.global.f32 [%rd1], %f0;"]
    return kernel("chain", ".param .u64 out", regs, "\n".join(body))


def index_chase(n, space):
    """n dependent loads, each one's value the next one's index (a pointer chase)."""
    regs = "    .reg .u32 %r<4>;\n    .reg .b64 %rd<6>;"
    body = ["    ld.param.u64 %rd1, [table];", "    mov.u32 %r1, 0;"]
    if space == "shared":
        body = ["    .shared .align 4 .b32 tile[1024];", "    mov.u32 %r1, 0;", "    mov.u64 %rd1, tile;",
                "    mov.u32 %r3, 0;", "    st.shared.u32 [tile], %r3;", "    bar.sync 0;"]
    for _ in range(n):
        body += ["    mul.wide.u32 %rd2, %r1, 4;", "    add.s64 %rd3, %rd1, %rd2;",
                 f"    ld.{space}.u32 %r1, [%rd3];"]
    body += ["    ld.param.u64 %rd4, [out];", "    st.global.u32 [%rd4], %r1;"]
    return kernel("chase", ".param .u64 table, .param .u64 out", regs, "\n".join(body))


def conflicted_shared(n, stride_words):
    """n shared loads by all 32 lanes, lane l at word l * stride_words: stride 32 puts every lane in one bank."""
    regs = "    .reg .u32 %r<8>;\n    .reg .b64 %rd<4>;"
    body = ["    .shared .align 4 .b32 tile[1024];", "    mov.u32 %r1, %tid.x;",
            f"    mul.lo.u32 %r2, %r1, {4 * stride_words};", "    mov.u32 %r4, tile;", "    add.u32 %r2, %r2, %r4;",
            "    st.shared.u32 [%r2], %r1;", "    bar.sync 0;"]
    for _ in range(n):
        body += ["    ld.shared.u32 %r3, [%r2];", "    add.u32 %r2, %r2, %r3;", "    sub.u32 %r2, %r2, %r3;"]
    body += ["    ld.param.u64 %rd1, [out];", "    st.global.u32 [%rd1], %r3;"]
    return kernel("conflicts", ".param .u64 out", regs, "\n".join(body))


def strided_global(n, stride_bytes):
    """Each lane of each warp loads one word stride_bytes after its neighbour's, once to bring it into the L1,
    then n times more, independent loads (into 4 registers in turn): a request of 32 lines from 128 bytes up."""
    regs = "    .reg .u32 %r<10>;\n    .reg .b64 %rd<8>;"
    body = ["    ld.param.u64 %rd1, [table];", "    mov.u32 %r1, %tid.x;", "    and.b32 %r2, %r1, 31;",
            f"    mul.wide.u32 %rd2, %r2, {stride_bytes};", "    add.s64 %rd3, %rd1, %rd2;",
            "    ld.global.u32 %r3, [%rd3];"]
    body += [f"    ld.global.u32 %r{4 + i % 4}, [%rd3];" for i in range(n)]
    body += ["    xor.b32 %r3, %r3, %r4;", "    xor.b32 %r3, %r3, %r5;", "    xor.b32 %r3, %r3, %r6;",
             "    xor.b32 %r3, %r3, %r7;", "    ld.param.u64 %rd4, [out];", "    mul.wide.u32 %rd5, %r1, 4;",
             "    add.s64 %rd6, %rd4, %rd5;", "    st.global.u32 [%rd6], %r3;"]
    return kernel("strided", ".param .u64 table, .param .u64 out", regs, "\n".join(body))


def clock_kernel(n):
    """%clock64 read before and after n dependent FMAs: the model's cycles, not instruction counts."""
    regs = "    .reg .f32 %f<4>;\n    .reg .b64 %rd<6>;"
    body = ["    mov.f32 %f1, 0f3F800000;", "    mov.u64 %rd1, %clock64;"]
    body += ["    fma.rn.f32 %f1, %f1, %f1, %f1;"] * n
    body += ["    mov.u64 %rd2, %clock64;",
             "    sub.s64 %rd3, %rd2, %rd1;", "    ld.param.u64 %rd4, [out];", "    st.global.u64 [%rd4], %rd3;",
             "    st.global.f32 [%rd4+8], %f1;"]
    return kernel("clocked", ".param .u64 out", regs, "\n".join(body))


def division_chain(n):
    """n dependent signed divisions by a divisor the compiler cannot know: ptxas expands each into many
    machine instructions (there is no integer divide instruction)."""
    regs = "    .reg .u32 %r<4>;\n    .reg .b64 %rd<3>;"
    body = ["    ld.param.u32 %r1, [a];", "    ld.param.u32 %r2, [b];"]
    body += ["    div.s32 %r1, %r1, %r2;"] * n
    body += ["    ld.param.u64 %rd1, [out];", "    st.global.u32 [%rd1], %r1;"]
    return kernel("divisions", ".param .u32 a, .param .u32 b, .param .u64 out", regs, "\n".join(body))


def fma_chain_of_params(n):
    """n dependent fp32 multiply-adds of kernel parameters, which ptxas cannot fold: n FFMAs in the machine code,
    each waiting for the one before by its stall count alone (an FFMA sets no dependence counter)."""
    regs = "    .reg .f32 %f<4>;\n    .reg .b64 %rd<3>;"
    body = ["    ld.param.f32 %f1, [a];", "    ld.param.f32 %f2, [b];", "    mov.f32 %f3, %f1;"]
    body += ["    fma.rn.f32 %f3, %f3, %f1, %f2;"] * n
    body += ["    ld.param.u64 %rd1, [out];", "    st.global.f32 [%rd1], %f3;"]
    return kernel("fma_params", ".param .f32 a, .param .f32 b, .param .u64 out", regs, "\n".join(body))


def fenced(n, access, fence):
    """n steps of a global access (a store, or a load of a word the L1 then holds, into eight registers in turn,
    so that no load waits for the one before), each followed by a fence."""
    regs = "    .reg .u32 %r<12>;\n    .reg .b64 %rd<3>;"
    body = ["    ld.param.u64 %rd1, [out];", "    mov.u32 %r1, 7;", "    mov.u32 %r2, 0;", "    st.global.u32 [%rd1], %r1;"]
    for i in range(n):
        body.append("    st.global.u32 [%rd1], %r1;" if access == "store" else f"    ld.global.u32 %r{4 + i % 8}, [%rd1];")
        body += [f"    {fence};"] if fence else []
    body.append("    st.global.u32 [%rd1+4], %r4;")
    # fence.proxy.async is sm_90's
    return kernel("fenced", ".param .u64 out", regs, "\n".join(body)).replace(".target sm_80", ".target sm_90")


def two_division_chains(n):
    """n steps of two independent chains of divisions: ptxas interleaves the two expansions for parallelism,
    so each division's machine instructions stand in many short runs between the other's."""
    regs = "    .reg .u32 %r<5>;\n    .reg .b64 %rd<3>;"
    body = ["    ld.param.u32 %r1, [a];", "    ld.param.u32 %r2, [b];", "    add.u32 %r3, %r1, 1;"]
    body += ["    div.s32 %r1, %r1, %r2;", "    div.s32 %r3, %r3, %r2;"] * n
    body += ["    ld.param.u64 %rd1, [out];", "    add.u32 %r4, %r1, %r3;", "    st.global.u32 [%rd1], %r4;"]
    return kernel("two_divisions", ".param .u32 a, .param .u32 b, .param .u64 out", regs, "\n".join(body))


def divisions_in_a_loop():
    """A loop of a runtime trip count that divides by a loop-invariant divisor each time: ptxas computes the
    divisor's reciprocal once, before the loop (a dozen machine instructions of the division's line), and
    leaves only the rest of the division in it."""
    regs = "    .reg .u32 %r<9>;\n    .reg .pred %p<2>;\n    .reg .b64 %rd<3>;"
    body = ["    ld.param.u32 %r1, [a];", "    ld.param.u32 %r2, [b];", "    ld.param.u32 %r7, [n];",
            "    mov.u32 %r3, 0;", "    mov.u32 %r5, 0;", "LOOP:", "    add.u32 %r4, %r1, %r3;",
            "    div.s32 %r6, %r4, %r2;", "    add.u32 %r5, %r5, %r6;", "    add.u32 %r3, %r3, 1;",
            "    setp.lt.u32 %p1, %r3, %r7;", "@%p1 bra LOOP;", "    ld.param.u64 %rd1, [out];",
            "    st.global.u32 [%rd1], %r5;"]
    return kernel("divide_in_loop", ".param .u32 a, .param .u32 b, .param .u32 n, .param .u64 out", regs,
                  "\n".join(body))


def unrolled_inner_loop():
    """An outer loop of a runtime trip count around an inner loop of 8, each inner iteration a load and 8
    multiply-adds: ptxas unrolls the inner loop whole (8 copies of most of its lines) and shifts the row's
    index once per outer iteration (one machine instruction for a line of the inner loop)."""
    regs = "    .reg .f32 %f<20>;\n    .reg .u32 %r<8>;\n    .reg .pred %p<3>;\n    .reg .b64 %rd<6>;"
    body = ["    ld.param.u64 %rd1, [table];", "    ld.param.u32 %r7, [n];", "    mov.u32 %r1, 0;"]
    body += [f"    mov.f32 %f{i}, 0f00000000;" for i in range(1, 9)]
    body += [f"    ld.global.f32 %f{10 + i}, [%rd1+{4 * i}];" for i in range(1, 9)]  # factors ptxas cannot know
    body += ["OUTER:", "    mov.u32 %r2, 0;", "INNER:", "    shl.b32 %r3, %r1, 5;", "    add.s32 %r4, %r3, %r2;",
             "    mul.wide.u32 %rd2, %r4, 4;", "    add.s64 %rd3, %rd1, %rd2;", "    ld.global.f32 %f9, [%rd3];"]
    body += [f"    fma.rn.f32 %f{i}, %f9, %f{10 + i}, %f{i};" for i in range(1, 9)]
    body += ["    add.s32 %r2, %r2, 1;", "    setp.ne.s32 %p1, %r2, 8;", "@%p1 bra INNER;",
             "    add.s32 %r1, %r1, 1;", "    setp.lt.u32 %p2, %r1, %r7;", "@%p2 bra OUTER;",
             ] + [f"    add.f32 %f1, %f1, %f{i};" for i in range(2, 9)] + ["    ld.param.u64 %rd4, [out];", "    st.global.f32 [%rd4], %f1;"]
    return kernel("unrolled", ".param .u64 table, .param .u32 n, .param .u64 out", regs, "\n".join(body))


def strided_dot_product():
    """A dot product of a row and a column, n steps (a runtime count), each step computing its two addresses from
    the step's index (as nvcc writes row * K + k), loading two floats and multiply-adding them. ptxas unrolls
    the loop 4 times: each copy holds the step's two loads and its FFMA, while the address lines become what
    strength reduction leaves of them (a count per line that is no multiple of the copies): more of the
    block's lines are integer arithmetic than loads and FFMAs."""
    regs = "    .reg .f32 %f<4>;\n    .reg .u32 %r<6>;\n    .reg .pred %p<2>;\n    .reg .b64 %rd<10>;"
    body = ["    ld.param.u64 %rd1, [row];", "    ld.param.u64 %rd2, [column];", "    ld.param.u32 %r1, [stride];",
            "    ld.param.u32 %r2, [n];", "    mov.f32 %f1, 0f00000000;", "    mov.u32 %r3, 0;", "STEP:",
            "    mul.lo.s32 %r4, %r3, %r1;", "    mul.wide.s32 %rd4, %r4, 4;", "    add.s64 %rd5, %rd2, %rd4;",
            "    mul.wide.u32 %rd6, %r3, 4;", "    add.s64 %rd7, %rd1, %rd6;", "    ld.global.f32 %f2, [%rd5];",
            "    ld.global.f32 %f3, [%rd7];", "    fma.rn.f32 %f1, %f3, %f2, %f1;", "    add.s32 %r3, %r3, 1;",
            "    setp.lt.u32 %p1, %r3, %r2;", "@%p1 bra STEP;", "    ld.param.u64 %rd8, [out];",
            "    st.global.f32 [%rd8], %f1;"]
    return kernel("dot", ".param .u64 row, .param .u64 column, .param .u32 stride, .param .u32 n, .param .u64 out",
                  regs, "\n".join(body))


def copies_chain(n):
    """n dependent multiply-adds, each result copied through two moves, which ptxas's register allocation
    makes vanish: in the machine code only the multiply-adds remain."""
    regs = "    .reg .u32 %r<6>;\n    .reg .b64 %rd<3>;"
    body = ["    ld.param.u32 %r1, [a];", "    ld.param.u32 %r3, [b];"]
    body += ["    mad.lo.u32 %r1, %r1, %r3, %r3;", "    mov.u32 %r2, %r1;", "    mov.u32 %r1, %r2;"] * n
    body += ["    ld.param.u64 %rd1, [out];", "    st.global.u32 [%rd1], %r1;"]
    return kernel("copies", ".param .u32 a, .param .u32 b, .param .u64 out", regs, "\n".join(body))


def four_words(n):
    """Each thread loads the four words at lane * 16 bytes of each of n rows of shared memory (rows 512 bytes
    apart) and adds them up: four ld.shared.f32 of consecutive words, which ptxas makes one LDS.128 (a warp's
    four wavefronts), where the PTX's four loads, lanes 16 bytes apart, take four wavefronts each."""
    regs = "    .reg .f32 %f<8>;\n    .reg .u32 %r<8>;\n    .reg .b64 %rd<3>;"
    body = ["    .shared .align 16 .b8 rows[32768];", "    mov.u32 %r1, %tid.x;", "    mov.u32 %r4, rows;",
            "    shl.b32 %r2, %r1, 5;", "    add.u32 %r2, %r2, %r4;", "    mov.u32 %r3, 0;",
            "    st.shared.v4.u32 [%r2], {%r3, %r3, %r3, %r3};", "    st.shared.v4.u32 [%r2+16], {%r3, %r3, %r3, %r3};",
            "    bar.sync 0;", "    and.b32 %r5, %r1, 31;", "    shl.b32 %r5, %r5, 4;", "    add.u32 %r5, %r5, %r4;",
            "    mov.f32 %f1, 0f00000000;"]
    for row in range(n):
        body += [f"    ld.shared.f32 %f{2 + i}, [%r5+{512 * row + 4 * i}];" for i in range(4)]
        body += [f"    add.f32 %f1, %f1, %f{2 + i};" for i in range(4)]
    body += ["    ld.param.u64 %rd1, [out];", "    st.global.f32 [%rd1], %f1;"]
    return kernel("four_words", ".param .u64 out", regs, "\n".join(body))


def word_loops(n):
    """n loops one after another, each over the 8 consecutive words at lane * 32 bytes of its own row of shared
    memory, adding and multiplying each word in: ptxas unrolls each loop whole (8 copies of its lines) and
    makes its 8 loads two LDS.128, given to the load's line: 2 machine instructions of that line for 8 runs
    of it, a quarter a run."""
    regs = "    .reg .f32 %f<8>;\n    .reg .u32 %r<12>;\n    .reg .pred %p<2>;\n    .reg .b64 %rd<3>;"
    body = ["    .shared .align 16 .b8 rows[32768];", "    mov.u32 %r1, %tid.x;", "    mov.u32 %r4, rows;",
            "    shl.b32 %r2, %r1, 5;", "    add.u32 %r2, %r2, %r4;", "    mov.u32 %r3, 0;",
            "    st.shared.v4.u32 [%r2], {%r3, %r3, %r3, %r3};", "    st.shared.v4.u32 [%r2+16], {%r3, %r3, %r3, %r3};",
            "    bar.sync 0;", "    and.b32 %r5, %r1, 31;", "    shl.b32 %r5, %r5, 5;", "    add.u32 %r5, %r5, %r4;",
            "    mov.f32 %f1, 0f00000000;", "    mov.f32 %f3, 0f3F800000;"]
    for row in range(n):
        body += ["    mov.u32 %r6, 0;", f"WORD{row}:", "    shl.b32 %r7, %r6, 2;", "    add.u32 %r8, %r5, %r7;",
                 f"    ld.shared.f32 %f2, [%r8+{1024 * row}];", "    add.f32 %f1, %f1, %f2;",
                 "    mul.f32 %f3, %f3, %f2;", "    add.u32 %r6, %r6, 1;", "    setp.ne.u32 %p1, %r6, 8;",
                 f"@%p1 bra WORD{row};"]
    body += ["    add.f32 %f1, %f1, %f3;", "    ld.param.u64 %rd1, [out];", "    st.global.f32 [%rd1], %f1;"]
    return kernel("word_loops", ".param .u64 out", regs, "\n".join(body))


def imad_iadd_chains(n):
    """Each thread a chain of n links, each a multiply-add then two adds (x = x y + z; x = x + y + z): ptxas's IMAD
    and IADD3 in turn, one on the FMA pipe and one on the integer ALU."""
    regs = "    .reg .u32 %r<6>;\n    .reg .b64 %rd<4>;"
    body = ["    ld.param.u32 %r2, [y];", "    ld.param.u32 %r3, [z];", "    mov.u32 %r1, %tid.x;"]
    body += ["    mad.lo.s32 %r1, %r1, %r2, %r3;", "    add.s32 %r1, %r1, %r2;", "    add.s32 %r1, %r1, %r3;"] * n
    body += ["    mov.u32 %r4, %tid.x;", "    ld.param.u64 %rd1, [out];", "    mul.wide.u32 %rd2, %r4, 4;",
             "    add.s64 %rd3, %rd1, %rd2;", "    st.global.u32 [%rd3], %r1;"]
    return kernel("imad_iadd", ".param .u32 y, .param .u32 z, .param .u64 out", regs, "\n".join(body))


def loads_among_chains(n, chain=4):
    """n steps of a dependent FMA chain (`chain` links a step), each step then loading a word of shared memory
    (512 bytes from the last, a register of its own) and adding it into a second chain. ptxas moves the loads
    up among the FMAs and the adds down: in its order the loads' latency hides behind the FMA chain, where in
    the PTX's each step waits for its load. The words are never written (initcheck off: only time counts)."""
    regs = "    .reg .f32 %f<200>;\n    .reg .u32 %r<4>;\n    .reg .b64 %rd<3>;"
    body = ["    .shared .align 16 .b8 rows[32768];", "    mov.u32 %r1, rows;", "    mov.f32 %f0, 0f3F800000;",
            "    mov.f32 %f1, 0f3F800000;", "    mov.f32 %f2, 0f3F800000;", "    mov.f32 %f6, 0f00000000;"]
    for step in range(n):
        body += ["    fma.rn.f32 %f0, %f0, %f1, %f2;"] * chain
        body += [f"    ld.shared.f32 %f{100 + step}, [%r1+{512 * step % 32768}];",
                 f"    add.f32 %f6, %f6, %f{100 + step};"]
    body += ["    add.f32 %f0, %f0, %f6;", "    ld.param.u64 %rd1, [out];", "    st.global.f32 [%rd1], %f0;"]
    return kernel("loads_among", ".param .u64 out", regs, "\n".join(body))


def loads_among_written(n, chain=4):
    """loads_among_chains with every word it loads written first (thread 0 stores step + 1 at row step, then a
    barrier) and each thread's result stored: f0 after 4n FMAs (x * 1 + 1 from 1: 1 + 4n) plus the n words
    loaded (n (n + 1) / 2), exact in fp32."""
    regs = "    .reg .f32 %f<200>;\n    .reg .u32 %r<4>;\n    .reg .pred %p<2>;\n    .reg .b64 %rd<4>;"
    body = ["    .shared .align 16 .b8 rows[32768];", "    mov.u32 %r1, rows;", "    mov.u32 %r2, %tid.x;",
            "    setp.ne.u32 %p1, %r2, 0;", "    @%p1 bra STORED;"]
    body += [f"    st.shared.f32 [%r1+{512 * step}], 0f{np.float32(step + 1).view(np.uint32):08X};" for step in range(n)]
    body += ["STORED:", "    bar.sync 0;", "    mov.f32 %f0, 0f3F800000;", "    mov.f32 %f1, 0f3F800000;",
             "    mov.f32 %f2, 0f3F800000;", "    mov.f32 %f6, 0f00000000;"]
    for step in range(n):
        body += ["    fma.rn.f32 %f0, %f0, %f1, %f2;"] * chain
        body += [f"    ld.shared.f32 %f{100 + step}, [%r1+{512 * step}];", f"    add.f32 %f6, %f6, %f{100 + step};"]
    body += ["    add.f32 %f0, %f0, %f6;", "    ld.param.u64 %rd1, [out];", "    mul.wide.u32 %rd2, %r2, 4;",
             "    add.s64 %rd3, %rd1, %rd2;", "    st.global.f32 [%rd3], %f0;"]
    return kernel("loads_among_written", ".param .u64 out", regs, "\n".join(body))


def copy16():
    """Each thread copies its 16 bytes: as much DRAM traffic as work, the GPU's bandwidth decides."""
    regs = "    .reg .u32 %r<10>;\n    .reg .b64 %rd<6>;"
    body = ["    mov.u32 %r1, %ctaid.x;", "    mov.u32 %r2, %ntid.x;", "    mov.u32 %r3, %tid.x;",
            "    mad.lo.u32 %r4, %r1, %r2, %r3;", "    mul.wide.u32 %rd3, %r4, 16;", "    ld.param.u64 %rd1, [src];",
            "    add.s64 %rd4, %rd1, %rd3;", "    ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd4];",
            "    ld.param.u64 %rd2, [dst];", "    add.s64 %rd5, %rd2, %rd3;",
            "    st.global.v4.u32 [%rd5], {%r5, %r6, %r7, %r8};"]
    return kernel("copy16", ".param .u64 src, .param .u64 dst", regs, "\n".join(body))


def store_stream(stores):
    """Each thread stores `stores` 16-byte vectors, the block's threads side by side: nothing waits for them."""
    regs = "    .reg .u32 %r<4>;\n    .reg .b64 %rd<4>;"
    body = ["    mov.u32 %r1, %tid.x;", "    mul.wide.u32 %rd1, %r1, 16;", "    ld.param.u64 %rd2, [dst];",
            "    add.s64 %rd3, %rd2, %rd1;"]
    body += [f"    st.global.v4.u32 [%rd3+{i * 16384}], {{%r1, %r1, %r1, %r1}};" for i in range(stores)]
    return kernel("stores", ".param .u64 dst", regs, "\n".join(body))


def finish_clocks(n):
    """Every thread n steps of 8 independent FMA chains (its warp is always ready: the scheduler's choice alone
    decides which warp of a sub-partition goes first), then each warp's lane 0 stores %clock64 at its end."""
    regs = "    .reg .f32 %f<12>;\n    .reg .b64 %rd<6>;\n    .reg .u32 %r<4>;\n    .reg .pred %p<2>;"
    body = [f"    mov.f32 %f{c}, 0f3F800000;" for c in range(10)]
    for _ in range(n):
        body += [f"    fma.rn.f32 %f{c}, %f{c}, %f8, %f9;" for c in range(8)]
    body += ["    mov.u64 %rd1, %clock64;", "    mov.u32 %r1, %tid.x;", "    and.b32 %r2, %r1, 31;",
             "    setp.ne.u32 %p1, %r2, 0;", "    shr.u32 %r3, %r1, 5;", "    ld.param.u64 %rd2, [out];",
             "    mul.wide.u32 %rd3, %r3, 8;", "    add.s64 %rd4, %rd2, %rd3;", "@%p1 bra DONE;",
             "    st.global.u64 [%rd4], %rd1;", "    st.global.f32 [%rd4+64], %f0;", "DONE:"]
    return kernel("finish", ".param .u64 out", regs, "\n".join(body))


def shuffle_ends(n):
    """Every thread a dependent chain of n shuffles, then each warp's lane 0 stores %clock64 at its end."""
    regs = "    .reg .b32 %r<6>;\n    .reg .b64 %rd<6>;\n    .reg .pred %p<2>;"
    body = ["    mov.u32 %r1, %tid.x;"] + ["    shfl.sync.bfly.b32 %r1, %r1, 1, 31, -1;"] * n
    body += ["    mov.u64 %rd1, %clock64;", "    mov.u32 %r2, %tid.x;", "    and.b32 %r3, %r2, 31;",
             "    setp.ne.u32 %p1, %r3, 0;", "    shr.u32 %r4, %r2, 5;", "    ld.param.u64 %rd2, [out];",
             "    mul.wide.u32 %rd3, %r4, 8;", "    add.s64 %rd4, %rd2, %rd3;", "@%p1 bra DONE;",
             "    st.global.u64 [%rd4], %rd1;", "    st.global.u32 [%rd4+256], %r1;", "DONE:"]
    return kernel("shuffles", ".param .u64 out", regs, "\n".join(body))


def guarded_loads(n, negated=False):
    """Each thread n loads, each guarded by a bounds test as a tile's loads are (x = tid < limit ? load : 0), and
    each value stored to shared memory after it: in PTX, every load in a block of its own that a branch skips
    (`@p bra` past it, or with `negated` `@!p bra`). The loads read lines 4 KiB apart; each thread stores the
    value of its first to out[tid]."""
    regs = "    .reg .f32 %f<40>;\n    .reg .u32 %r<8>;\n    .reg .b64 %rd<6>;\n    .reg .pred %p<40>;"
    body = ["    .shared .align 4 .f32 stage[4096];", "    ld.param.u64 %rd1, [in];", "    ld.param.u32 %r7, [limit];",
            "    mov.u32 %r1, %tid.x;", "    mov.u32 %r2, stage;", "    shl.b32 %r3, %r1, 2;", "    add.u32 %r4, %r2, %r3;",
            "    mul.wide.u32 %rd2, %r1, 4;", "    add.s64 %rd3, %rd1, %rd2;"]
    for i in range(n):
        test, guard = ("lt", "@!") if negated else ("ge", "@")
        body += [f"    mov.f32 %f{i}, 0f00000000;", f"    setp.{test}.u32 %p{i}, %r1, %r7;", f"{guard}%p{i} bra SKIP{i};",
                 f"    ld.global.f32 %f{i}, [%rd3+{4096 * i}];", f"SKIP{i}:", f"    st.shared.f32 [%r4+{128 * i}], %f{i};"]
    body += ["    bar.sync 0;", "    ld.shared.f32 %f39, [%r4];", "    ld.param.u64 %rd4, [out];",
             "    add.s64 %rd5, %rd4, %rd2;", "    st.global.f32 [%rd5], %f39;"]
    return kernel("guarded", ".param .u64 in, .param .u32 limit, .param .u64 out", regs, "\n".join(body))


def late_warp(n, late_threads=32):
    """The first late_threads threads (warp 0) run n dependent FMAs before the block's barrier; the other warps
    reach it at once."""
    regs = "    .reg .f32 %f<4>;\n    .reg .u32 %r<3>;\n    .reg .pred %p<2>;\n    .reg .b64 %rd<3>;"
    body = ["    mov.f32 %f1, 0f3F800000;", "    mov.u32 %r1, %tid.x;", f"    setp.ge.u32 %p1, %r1, {late_threads};",
            "@%p1 bra WAIT;"] + ["    fma.rn.f32 %f1, %f1, %f1, %f1;"] * n + \
        ["WAIT:", "    bar.sync 0;", "    ld.param.u64 %rd1, [out];", "    st.global.f32 [%rd1], %f1;"]
    return kernel("late", ".param .u64 out", regs, "\n".join(body))


def crossed_barriers():
    """Warp 0 waits at barrier 1, warp 1 at barrier 0: each waits for the other, for ever."""
    regs = "    .reg .u32 %r<3>;\n    .reg .pred %p<2>;"
    body = ["    mov.u32 %r1, %tid.x;", "    setp.lt.u32 %p1, %r1, 32;", "@%p1 bra FIRST;", "    bar.sync 0;",
            "    bra.uni DONE;", "FIRST:", "    bar.sync 1;", "DONE:"]
    return kernel("stuck", "", regs, "\n".join(body))


def warp_states(text):
    """The model's warp states in all, from its print: {state: cycles per issued instruction}."""
    line = text.split("warp states", 1)[1].splitlines()[1]
    return {s: float(v) for s, v in re.findall(r"(\w+) ([\d.]+)", line.split(":", 1)[1])}, line.strip()


def warpgroup_states(text):
    """The same for each warpgroup, where the print has them: [{state: cycles per issued instruction}]."""
    return [{s: float(v) for s, v in re.findall(r"(\w+) ([\d.]+)", line.split(":", 2)[2])}
            for line in re.findall(r"^ +warps \d+-\d+:.*$", text, re.M)]


MODELED = re.compile(r"time\s+([\d.]+) us \((\d+) cycles of one SM; it ran (\d+) blocks, ([\d.]+) at once")
MACHINE = re.compile(r"issued\s+(\d+) warp instructions of machine code \(SASS\), made of (\d+) of PTX")
PTX_ALONE = {"EMU_NVDISASM": ""}  # model each PTX instruction as one machine instruction


def main():
    ptxrun, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    R = Runner(ptxrun, work, work)

    def write(name, text):
        with open(os.path.join(work, name), "w") as f:
            f.write(text)
        return name

    # The microbenchmarks store every thread's result to the same words of `out`, a race on purpose (only
    # their time is measured): racecheck off.
    def modeled(gpu, ptx, name, grid, block, args, smem=None, env=PTX_ALONE):
        result = R.run(ptx, name, grid, block, args, smem=smem,
                       env={"EMU_MODEL": gpu, "EMU_THREADS": "1", "EMU_RACECHECK": "0", **env})
        found = MODELED.search(result.stdout)
        if not found or "(a model, not a measurement)" not in result.stdout:
            raise Fail(f"no labelled modeled time in: {result.stdout.strip()[-300:]}")
        machine = MACHINE.search(result.stdout)
        return {"us": float(found[1]), "cycles": int(found[2]), "blocks": int(found[3]),
                "resident": float(found[4]), "text": result.stdout,
                "machine": (int(machine[1]), int(machine[2])) if machine else None}

    def per_step(gpu, make, short, long, grid=1, block=32, args_of=None, smem=None, env=PTX_ALONE, what="cycles"):
        got = []
        for n in (short, long):
            ptx = write(f"{make.__name__}_{gpu}_{n}.ptx", make(n))
            args = args_of() if args_of else [R.out("f32", 4)[0]]
            name = re.search(r"\.entry (\w+)", open(os.path.join(work, ptx)).read())[1]
            m = modeled(gpu, ptx, name, grid, block, args, smem, env)
            if what == "machine" and not m["machine"]:
                raise Fail(f"the model read no machine code: {m['text'].strip()[-300:]}")
            got.append(m["cycles"] if what == "cycles" else m["machine"][0])
        return (got[1] - got[0]) / (long - short)

    def near(got, want, tolerance, what):
        if abs(got - want) > tolerance:
            raise Fail(f"{what}: {got:.2f} cycles per step, the GPU file's figures give {want:.2f}")
        return f"{got:.2f} cycles per step (figures: {want:.2f})"

    for gpu in GPUS:
        lat_fp32, lat_int = figure(gpu, "lat_fp32_cycles"), figure(gpu, "lat_int_cycles")
        R.case(f"{gpu}: a dependent FMA waits lat_fp32_cycles",
               lambda: near(per_step(gpu, fma_chain, 128, 384), lat_fp32, 0.05, "dependent FMA"))

        # 32 warps, 8 per scheduler, each 8 independent chains: the FMA pipe's issue rate decides
        def throughput(gpu=gpu):
            make = lambda n: fma_chain(n, chains=8)  # noqa: E731
            make.__name__ = "fma8"
            step = per_step(gpu, make, 32, 96, block=1024)  # cycles per step of 8 FMAs in each of 32 warps
            per_cycle = 32 * 8 / step
            want = min(figure(gpu, "warp_schedulers_per_sm"), figure(gpu, "thr_fp32_fma") / 32)
            if abs(per_cycle - want) > 0.05 * want:
                raise Fail(f"{per_cycle:.2f} warp FMAs per cycle per SM; thr_fp32_fma gives {want:.2f}")
            return f"{per_cycle:.2f} warp FMAs per cycle per SM (thr_fp32_fma / 32 = {want:.2f})"
        R.case(f"{gpu}: independent FMAs issue at thr_fp32_fma", throughput)

        def chase(space, latency, gpu=gpu):
            table = np.zeros(256, dtype=np.uint32)  # every index 0: after the first load, the same line
            make = lambda n: index_chase(n, space)  # noqa: E731
            make.__name__ = "chase_" + space
            step = per_step(gpu, make, 32, 96, block=1, args_of=lambda: [R.inp(table), R.out("u32", 1)[0]])
            return near(step, latency + 2 * lat_int, 0.5, f"{space} load chain")
        R.case(f"{gpu}: a global load that hits L1 waits lat_l1_hit_cycles",
               lambda: chase("global", figure(gpu, "lat_l1_hit_cycles")))
        R.case(f"{gpu}: a shared load waits lat_smem_load_cycles",
               lambda: chase("shared", figure(gpu, "lat_smem_load_cycles")))

        def conflicts(gpu=gpu):
            clean = per_step(gpu, lambda n: conflicted_shared(n, 1), 16, 48)
            conflicted = per_step(gpu, lambda n: conflicted_shared(n, 32), 16, 48)
            if abs(conflicted - clean - 31) > 0.5:
                raise Fail(f"a 32-way bank conflict costs {conflicted - clean:.2f} cycles more; 31 wavefronts more "
                           "at one wavefront per clock give 31")
            return f"{conflicted - clean:.2f} cycles more for 31 more wavefronts"
        R.case(f"{gpu}: a 32-way bank conflict costs its 31 extra wavefronts", conflicts)

        def tag_stage(gpu=gpu):
            table = np.zeros(32 * 128 // 4, dtype=np.uint32)
            cost = {}
            for stride in (4, 32, 128):
                make = lambda n, stride=stride: strided_global(n, stride)  # noqa: E731
                make.__name__ = f"strided{stride}"
                # 4 warps, one request each a step: the SM's L1 takes them one after another; from 48 steps on,
                # 8-line requests outlast the first load's wait for DRAM, so the difference is the L1's rate alone
                cost[stride] = per_step(gpu, make, 48, 96, block=128,
                                        args_of=lambda: [R.inp(table), R.out("u32", 128)[0]]) / 4
            # 32 lines: one a cycle (ASSUME_L1_LINE_PER_CYCLE); 8 lines of 4 sectors: 8 either way; 1 line: 1 or
            # less than the warps' own issue
            if abs(cost[128] - 32) > 1 or abs(cost[32] - 8) > 1 or cost[4] > 4:
                raise Fail(f"cycles per warp request of L1 hits: {cost[4]:.2f} for one line, {cost[32]:.2f} for 8 "
                           f"lines of 4 sectors, {cost[128]:.2f} for 32 lines (want about 1, 8 and 32)")
            return f"{cost[4]:.2f}, {cost[32]:.2f} and {cost[128]:.2f} cycles a request of 1, 8 and 32 lines"
        R.case(f"{gpu}: the L1 resolves a request's lines one a cycle", tag_stage)

    # The machine code: what ptxas makes of the PTX for the modeled GPU, read through nvdisasm
    def scalar_args():
        return ["u32:1000003", "u32:7", R.out("u32", 1)[0]]

    def stall_cycles_per_step(make, short, long):
        """The stall counts ptxas set in the H100's machine code of make(n), per step from short to long steps:
        read by cuobjdump and bench/stall_counts.py, not by the model."""
        ptxas, cuobjdump = find_tool("ptxas", "PTXAS"), find_tool("cuobjdump")
        if not ptxas or not cuobjdump:
            raise Fail("no ptxas or cuobjdump to read the stall counts with (bench/setup.sh installs cuobjdump)")
        total = []
        for n in (short, long):
            text = make(n).replace(".target sm_80", ".target sm_90a")
            ptx = write(f"{make.__name__}_sm90a_{n}.ptx", text)
            name = re.search(r"\.entry (\w+)", text)[1]
            code = stall_counts.machine_code(os.path.join(work, ptx), ptxas, cuobjdump)[name]
            total.append(sum(stall for _, stall in code.values()))
        return (total[1] - total[0]) / (long - short)

    def division():
        sass = per_step("h100", division_chain, 4, 12, args_of=scalar_args, env={}, what="machine")
        cycles = per_step("h100", division_chain, 4, 12, args_of=scalar_args, env={})
        alone = per_step("h100", division_chain, 4, 12, args_of=scalar_args)
        stalls = stall_cycles_per_step(division_chain, 4, 12)
        lat_int = figure("h100", "lat_int_cycles")
        interval = 32 / (figure("h100", "thr_int32_mad") / figure("h100", "warp_schedulers_per_sm"))
        # its stall counts hold the warp (ASSUME_STALL_COUNTS), its result comes n - 1 cycles after one
        # instruction's and its n instructions hold their pipe (ASSUME_SASS_EXPANSION): the longest decides
        want = max(stalls, lat_int + sass - 1, sass * interval)
        if sass < 8 or stalls <= sass or abs(cycles - want) > 0.5 or abs(alone - lat_int) > 0.5:
            raise Fail(f"a div.s32 is {sass:.1f} machine instructions, {stalls:.2f} stall cycles and {cycles:.2f} "
                       f"cycles per step (want {want:.2f}); from its PTX alone {alone:.2f} (lat_int {lat_int})")
        return (f"{sass:.0f} machine instructions, {stalls:.0f} stall cycles, {cycles:.2f} cycles per division "
                f"({alone:.2f} from its PTX alone)")
    R.case("h100: a PTX division costs the machine instructions ptxas makes of it", division)

    def held_warps_leave_the_scheduler():
        # five warps: warps 0 and 4 share a sub-partition's scheduler; while one is held for its stall counts
        # the other issues, so a step takes what it takes one warp (the issue slots, 2 x 13, are fewer)
        one = per_step("h100", division_chain, 4, 12, args_of=scalar_args, env={})
        two = per_step("h100", division_chain, 4, 12, block=160, args_of=scalar_args, env={})
        if abs(two - one) > 1:
            raise Fail(f"{two:.2f} cycles a step with two warps on one scheduler, {one:.2f} with one: a warp held "
                       "by its stall counts took the other's issue slots")
        return f"{two:.2f} cycles a step with two warps on one scheduler ({one:.2f} with one)"
    R.case("h100: a warp held by its stall counts lets another warp of its scheduler issue",
           held_warps_leave_the_scheduler)

    def stall_counts_alone():
        # an FFMA sets no dependence counter: the next waits by its stall count, whatever the GPU file's
        # latency (here made ten times the GPU's); from the PTX alone the file's latency decides
        slow = {"EMU_MODEL_FIGURES": f"lat_fp32_cycles={10 * figure('h100', 'lat_fp32_cycles')}"}
        args = lambda: ["f32:1.0001", "f32:0.5", R.out("f32", 1)[0]]  # noqa: E731
        stalls = stall_cycles_per_step(fma_chain_of_params, 8, 24)
        cycles = per_step("h100", fma_chain_of_params, 8, 24, args_of=args, env=slow)
        alone = per_step("h100", fma_chain_of_params, 8, 24, args_of=args, env={**PTX_ALONE, **slow})
        if abs(cycles - stalls) > 0.5 or abs(alone - 10 * figure("h100", "lat_fp32_cycles")) > 0.5:
            raise Fail(f"a dependent FFMA: {cycles:.2f} cycles a step, its stall count {stalls:.2f}; from the PTX "
                       f"alone {alone:.2f} (the file's latency: {10 * figure('h100', 'lat_fp32_cycles')})")
        return f"{cycles:.2f} cycles a step, its stall count {stalls:.0f} ({alone:.2f} from the PTX alone)"
    R.case("h100: a fixed latency the machine code leaves to its stall counts waits for them alone",
           stall_counts_alone)

    def fences():
        # ASSUME_FENCE: a fence waits for the warp's own accesses; a GPU-wide one an L2 round trip at least
        cost = {(access, fence): per_step("h100", lambda n, a=access, f=fence: fenced(n, a, f), 8, 24)
                for access, fence in [("store", None), ("store", "membar.gl"), ("store", "membar.cta"),
                                      ("store", "fence.proxy.async.global"), ("load", None), ("load", "membar.cta")]}
        lat_l2, lat_l1 = figure("h100", "lat_l2_hit_cycles"), figure("h100", "lat_l1_hit_cycles")
        gpu_wide, in_cta = cost["store", "membar.gl"], cost["store", "membar.cta"]
        after_load, view = cost["load", "membar.cta"], cost["store", "fence.proxy.async.global"]
        if gpu_wide < lat_l2 - 0.5 or in_cta > gpu_wide / 2 or not lat_l1 - 0.5 <= after_load < gpu_wide or \
                abs(view - cost["store", None]) > 0.5:
            raise Fail(f"cycles a step: a store and membar.gl {gpu_wide:.2f} (lat_l2 {lat_l2}), membar.cta "
                       f"{in_cta:.2f}, a load and membar.cta {after_load:.2f} (lat_l1_hit {lat_l1}), a store and "
                       f"fence.proxy.async.global {view:.2f} (without it {cost['store', None]:.2f})")
        return (f"{gpu_wide:.2f} cycles a step with membar.gl, {in_cta:.2f} with membar.cta ({after_load:.2f} after "
                f"a load), {view:.2f} with fence.proxy.async.global ({cost['store', None]:.2f} with none)")
    R.case("h100: a fence waits as far as it reaches: the GPU's L2, the warp's own accesses, or nothing", fences)

    def read_for(gpu):
        sass = per_step(gpu, division_chain, 4, 12, args_of=scalar_args, env={}, what="machine")
        if sass < 8:
            raise Fail(f"a div.s32 is {sass:.1f} machine instructions on the {gpu}: ptxas makes a dozen or more")
        return f"{sass:.0f} machine instructions per division"
    for gpu in ("a100", "a6000"):  # nvdisasm lists an sm_8x kernel's registers in a .sectioninfo line
        R.case(f"{gpu}: the model reads the machine code ptxas makes for its architecture",
               lambda gpu=gpu: read_for(gpu))

    def interleaved():
        one = per_step("h100", division_chain, 4, 12, args_of=scalar_args, env={}, what="machine")
        two = per_step("h100", two_division_chains, 4, 12, args_of=scalar_args, env={}, what="machine")
        if abs(two - 2 * one) > 1:
            raise Fail(f"two independent divisions are {two:.1f} machine instructions a step, one alone "
                       f"{one:.1f}: ptxas interleaving their instructions must not hide them")
        return f"{two:.0f} machine instructions a step of two divisions (one alone: {one:.0f})"
    R.case("h100: divisions ptxas interleaves cost their whole expansions", interleaved)

    def hoisted():
        one = per_step("h100", division_chain, 4, 12, args_of=scalar_args, env={}, what="machine")
        ptx = write("divide_in_loop.ptx", divisions_in_a_loop())
        counts = [modeled("h100", ptx, "divide_in_loop", 1, 32, ["u32:1000003", "u32:7", f"u32:{n}",
                                                                  R.out("u32", 1)[0]], env={})["machine"][0]
                  for n in (64, 192)]
        per_iteration = (counts[1] - counts[0]) / 128
        # a division in a chain by one divisor (its reciprocal computed once, as here before the loop) and
        # the loop's five other instructions, each one machine instruction or two; not the reciprocal again
        if not one + 3 <= per_iteration <= one + 7:
            raise Fail(f"a loop iteration with a division by an invariant divisor is {per_iteration:.1f} machine "
                       f"instructions, a division in a chain {one:.1f}: what ptxas moved out of the loop counted "
                       "in it, or the loop's own instructions missed")
        return f"{per_iteration:.1f} machine instructions an iteration (a division in a chain: {one:.0f})"
    R.case("h100: what ptxas moves out of a loop is not counted in it", hoisted)

    def unrolled():
        ptx = write("unrolled.ptx", unrolled_inner_loop())
        table = np.ones(32 * 192, dtype=np.float32)
        counts = [modeled("h100", ptx, "unrolled", 1, 32, [R.inp(table), f"u32:{n}", R.out("f32", 1)[0]],
                          env={})["machine"][0] for n in (64, 192)]
        per_outer = (counts[1] - counts[0]) / 128
        # 8 inner iterations of 1 load and 8 FFMAs (72), each load's address (an add and a multiply-add, or
        # fewer) and the outer loop's own instructions (about 4); the inner loop's gone
        if not 72 <= per_outer <= 100:
            raise Fail(f"an outer iteration is {per_outer:.1f} machine instructions; ptxas's unrolled inner loop has "
                       "72 loads and FFMAs and a few more: its copies counted wrong")
        return f"{per_outer:.1f} machine instructions an outer iteration (72 loads and FFMAs in the unrolled loop)"
    R.case("h100: a loop ptxas unrolls counts each line once per copy", unrolled)

    def unrolled_addresses():
        ptx = write("dot.ptx", strided_dot_product())
        row, column = np.ones(192, dtype=np.float32), np.ones(192 * 8, dtype=np.float32)
        counts = [modeled("h100", ptx, "dot", 1, 32, [R.inp(row), R.inp(column), "u32:8", f"u32:{n}",
                                                       R.out("f32", 1)[0]], env={})["machine"][0] for n in (64, 192)]
        per_step = (counts[1] - counts[0]) / 128
        # ptxas's unrolled loop: 35 machine instructions for 4 steps (2 LDGs, an FFMA and what strength reduction
        # left of the addresses and the count, per step); counted line by line without the copies, 40 a step
        if not 6 <= per_step <= 12:
            raise Fail(f"a step of a dot product is {per_step:.1f} machine instructions; ptxas's loop unrolled 4 "
                       "times has about 9 a step: the copies were missed where most lines are address arithmetic")
        return f"{per_step:.1f} machine instructions a step (ptxas's unrolled loop: 35 for 4 steps)"
    R.case("h100: an unrolled loop's copies found where most of its lines are address arithmetic",
           unrolled_addresses)

    def folded():
        sass = per_step("h100", copies_chain, 8, 24, args_of=scalar_args, env={}, what="machine")
        cycles = per_step("h100", copies_chain, 8, 24, args_of=scalar_args, env={})
        alone = per_step("h100", copies_chain, 8, 24, args_of=scalar_args)
        lat_int = figure("h100", "lat_int_cycles")
        if abs(sass - 1) > 0.01 or abs(cycles - lat_int) > 0.5 or abs(alone - 3 * lat_int) > 0.5:
            raise Fail(f"a multiply-add and two moves: {sass:.2f} machine instructions and {cycles:.2f} cycles per "
                       f"step (want 1 and lat_int {lat_int}); from the PTX alone {alone:.2f} (want {3 * lat_int})")
        return f"{sass:.0f} machine instruction, {cycles:.2f} cycles per step ({alone:.2f} from the PTX alone)"
    R.case("h100: PTX moves that ptxas folds away cost nothing", folded)

    def data_path_a_warp(make, short, long, env=PTX_ALONE):
        """Cycles a step takes a warp of 32 (one block of 1024 threads): where the data path decides, at a
        wavefront a cycle, its wavefronts a warp."""
        return per_step("h100", make, short, long, block=1024, env=env) / 32

    def wider_access():
        machine = data_path_a_warp(four_words, 16, 48, env={})
        alone = data_path_a_warp(four_words, 16, 48)
        if abs(machine - 4) > 0.5 or abs(alone - 16) > 1:
            raise Fail(f"four consecutive words a lane: {machine:.2f} cycles of the data path a warp with the machine "
                       f"code (its LDS.128: 4 wavefronts), {alone:.2f} from the PTX alone (four loads of 4 each: 16)")
        return f"{machine:.2f} cycles a warp as ptxas's LDS.128 ({alone:.2f} as the PTX's four loads)"
    R.case("h100: loads ptxas made one wider load cost that load's wavefronts", wider_access)

    def spread_over_runs():
        # a warp's 2 LDS.128 per loop, lanes 32 bytes apart: 8 wavefronts each
        cycles = data_path_a_warp(word_loops, 8, 24, env={})
        if abs(cycles - 16) > 1.5:
            raise Fail(f"a loop of 8 loads ptxas made 2 LDS.128 of: {cycles:.2f} cycles of the data path a warp (want "
                       "16: 2 loads of 8 wavefronts); rounding the line's quarter of an instruction a run to none, or "
                       "to one, misses them")
        return f"{cycles:.2f} cycles a warp a loop (2 LDS.128 of 8 wavefronts)"
    R.case("h100: a line's machine instructions spread over its runs, a quarter each (not rounded)", spread_over_runs)

    def imad_pipe():
        # 32 warps, 8 a scheduler: the pipes decide; an IMAD and an IADD3 a link
        args = lambda: ["u32:3", "u32:5", R.out("u32", 1024)[0]]  # noqa: E731
        machine = 2 * 32 / per_step("h100", imad_iadd_chains, 32, 96, block=1024, args_of=args, env={})
        if not 3.2 <= machine <= 4.05:  # (the model's warps fall into step and sometimes all want one pipe)
            raise Fail(f"IMADs and IADD3s in turn: {machine:.2f} warp instructions a clock for the SM; on two pipes, "
                       "each at half a scheduler's rate, they issue at up to 4 (on the H100: 3.9), on one at 2")
        return f"{machine:.2f} warp instructions a clock (measured on an H100: 3.9; one pipe would give 2)"
    R.case("h100: IMADs go down the FMA pipe, the other integer instructions the ALU", imad_pipe)

    def machine_order():
        lat_fp32 = figure("h100", "lat_fp32_cycles")
        machine = per_step("h100", loads_among_chains, 16, 48, env={"EMU_INITCHECK": "0"})
        alone = per_step("h100", loads_among_chains, 16, 48, env={**PTX_ALONE, "EMU_INITCHECK": "0"})
        if abs(machine - 4 * lat_fp32) > 1 or alone < machine + 10:
            raise Fail(f"four dependent FMAs and a load a step: {machine:.2f} cycles a step in ptxas's order (want the "
                       f"FMAs' 4 x lat_fp32 = {4 * lat_fp32}: the load hidden), {alone:.2f} in the PTX's (want the "
                       "load's wait on top)")
        return f"{machine:.2f} cycles a step in ptxas's order, {alone:.2f} in the PTX's"
    R.case("h100: a warp issues a block in ptxas's order, where the loads it moved up wait behind the FMAs",
           machine_order)

    def machine_order_computes():
        n = 16
        ptx = write("loads_among_written.ptx", loads_among_written(n))
        want = np.float32(1 + 4 * n + n * (n + 1) // 2)
        got = {}
        for how, env in (("in ptxas's order", {}), ("in the PTX's", PTX_ALONE)):
            out, path = R.out("f32", 64)
            m = modeled("h100", ptx, "loads_among_written", 1, 64, [out], env=env)
            if how == "in ptxas's order" and not m["machine"]:
                raise Fail(f"the model read no machine code: {m['text'].strip()[-300:]}")
            got[how] = np.load(path)
            if not np.all(got[how] == want):
                raise Fail(f"issued {how}: {got[how][:4]} ..., want {want} in every thread")
        return f"every thread {want:.0f} either way"
    R.case("h100: a block issued in ptxas's order computes what the PTX does", machine_order_computes)

    def occupancy():
        ptx = write("occupancy.ptx", fma_chain(4))
        got = []
        for smem in (None, 100000):
            m = modeled("h100", ptx, "chain", 132 * 40, 256, [R.out("f32", 4)[0]], smem=smem)
            got.append(m["resident"])
        # 256 threads: 8 warps; 64 warps per SM allow 8 blocks. 100000 bytes (+1024 reserved) of 233472 allow 2.
        want = [figure("h100", "max_warps_per_sm") // 8,
                figure("h100", "smem_per_sm_bytes") // (100000 + figure("h100", "smem_reserved_per_block_bytes"))]
        if got != want:
            raise Fail(f"resident blocks {got}, the occupancy rules give {want}")
        return f"resident blocks {got} (by warps, by shared memory)"
    R.case("h100: occupancy by warps and by shared memory", occupancy)

    def clock():
        ptx = write("clock.ptx", clock_kernel(100))
        out, path = R.out("u64", 2)
        modeled("h100", ptx, "clocked", 1, 1, [out])
        elapsed = int(np.load(path)[0])
        want = 100 * figure("h100", "lat_fp32_cycles")
        if abs(elapsed - want) > 8:
            raise Fail(f"%clock64 saw {elapsed} cycles pass over 100 dependent FMAs; the model's own cycles are {want}")
        return f"%clock64 saw {elapsed} cycles (100 x lat_fp32 = {want})"
    R.case("h100: %clock64 reads the modeled cycle", clock)

    def youngest_first():
        # warps 0 and 4 share sub-partition 0; both always ready, so greedy-then-youngest runs warp 4 through
        # and warp 0 after it (ASSUME_POLICY), where greedy-then-oldest would do the opposite
        ptx = write("finish.ptx", finish_clocks(64))
        out, path = R.out("u64", 16)
        modeled("h100", ptx, "finish", 1, 160, [out])
        ends = [int(v) for v in np.load(path)[:5]]
        if not ends[4] < ends[0]:
            raise Fail(f"warp 4 ended at cycle {ends[4]}, warp 0 at {ends[0]}: the younger warp must go first")
        return f"warp 4 ended at cycle {ends[4]}, warp 0 at {ends[0]}"
    R.case("h100: a sub-partition issues greedily, then from its youngest warp", youngest_first)

    def if_converted():
        # ptxas predicates the loads the PTX branches around (no BRA of their branches' lines in the machine
        # code) and issues them together, before the stores of their values: the model runs them so
        # (ASSUME_SASS_ORDER), and each load after the first adds a few cycles, not a load's latency
        table = np.zeros(8 * 1024 + 32, dtype=np.float32)
        args = lambda: [R.inp(table), "u32:1073741824", R.out("f32", 32)[0]]  # noqa: E731
        step = per_step("h100", guarded_loads, 1, 8, args_of=args, env={})
        alone = per_step("h100", guarded_loads, 1, 8, args_of=args)
        latency = float(figure("h100", "lat_l2_hit_cycles"))
        if step > latency / 4 or alone < latency:
            raise Fail(f"a guarded load and its store cost {step:.1f} cycles a step from the machine code, {alone:.1f} "
                       f"from the PTX alone: ptxas's predicated loads overlap (want under {latency / 4:.0f}), the "
                       f"PTX's branched ones wait a load each (want over {latency:.0f})")
        # predicated, the lanes the branch takes past a load do not load: threads 16-31 store 0
        for negated in (False, True):
            ptx = write(f"guarded_{negated}.ptx", guarded_loads(8, negated))
            out, path = R.out("f32", 32)
            modeled("h100", ptx, "guarded", 1, 32, [R.inp(np.arange(1, table.size + 1, dtype=np.float32)), "u32:16",
                                                     out], env={})
            got, want = np.load(path), np.where(np.arange(32) < 16, np.arange(1, 33), 0).astype(np.float32)
            if not np.array_equal(got, want):
                raise Fail(f"{'@!p' if negated else '@p'} bra, threads 16-31 past their loads: stored {got.tolist()}, "
                           f"want {want.tolist()}")
        return (f"{step:.1f} cycles a guarded load from the machine code, {alone:.1f} from the PTX alone; the lanes "
                "the branch takes past the loads (@p and @!p) do not load")
    R.case("h100: loads ptxas if-converted issue together, predicated, where the PTX branches around each",
           if_converted)

    def shuffle_queue():
        # 32 warps' chains of shuffles through the SM's one queue, one a clock in the order they came
        # (ASSUME_SHUFFLE_QUEUE): every chain goes at the same pace, and the last warp ends with the first
        ptx = write("shuffles.ptx", shuffle_ends(64))
        out, path = R.out("u64", 64)
        modeled("h100", ptx, "shuffles", 1, 1024, [out])
        ends = [int(v) for v in np.load(path)[:32]]
        rate = 32 * 64 / max(ends)
        if max(ends) - min(ends) > 0.1 * max(ends) or not 0.9 < rate < 1.1:
            raise Fail(f"32 warps' shuffle chains ended between cycles {min(ends)} and {max(ends)} ({rate:.2f} shuffles "
                       "a clock): through one queue at one a clock, they must end together at about one a clock")
        return f"32 warps' chains of 64 shuffles ended between cycles {min(ends)} and {max(ends)}: {rate:.2f} a clock"
    R.case("h100: the sub-partitions' shuffles share the SM's queue, one a clock, in the order they came",
           shuffle_queue)

    def deadlock():
        ptx = write("stuck.ptx", crossed_barriers())
        result = R.launch(ptx, "stuck", 1, 64, [], env={"EMU_MODEL": "h100", "EMU_THREADS": "1"}, timeout=60)
        text = result.stderr.strip()
        if result.returncode != 1 or "deadlock" not in text or len(text.splitlines()) != 1:
            raise Fail(f"exit {result.returncode}, {text!r}: two warps each waiting at a barrier the other never "
                       "reaches must be one line, a deadlock")
        return text
    R.case("h100: a deadlock under the model is one line, not a hang", deadlock)

    def states(space, state, other):
        ptx = write(f"states_{space}.ptx", index_chase(16, space))
        m = modeled("h100", ptx, "chase", 1, 32, [R.inp(np.zeros(64, dtype=np.uint32)), R.out("u32", 1)[0]])
        named, line = warp_states(m["text"])
        if state not in named or named[state] < max(named.get(s, 0) for s in ("wait", other)):
            raise Fail(f"a chain of {space} loads must stall mostly on {state}: {line}")
        return line
    R.case("h100: a global load chain's warp stalls on long_scoreboard (Nsight Compute's name)",
           lambda: states("global", "long_scoreboard", "short_scoreboard"))
    R.case("h100: a shared load chain's warp stalls on short_scoreboard (an MIO operation's, as Nsight Compute has it)",
           lambda: states("shared", "short_scoreboard", "long_scoreboard"))

    def barrier_states():
        ptx = write("late.ptx", late_warp(64))
        m = modeled("h100", ptx, "late", 1, 256, [R.out("f32", 1)[0]])
        named, line = warp_states(m["text"])
        top = max((v, s) for s, v in named.items() if s != "selected")[1]
        if top != "barrier":
            raise Fail(f"seven warps waiting at a barrier for an eighth must stall most on barrier: {line}")
        return line
    R.case("h100: warps that wait for a late warp stall on barrier (Nsight Compute's name)", barrier_states)

    def roles():
        # warps 0-3 run a chain of FMAs, warps 4-7 wait for them at the barrier: each group's own states
        ptx = write("late_group.ptx", late_warp(64, late_threads=128))
        m = modeled("h100", ptx, "late", 1, 256, [R.out("f32", 1)[0]])
        groups = warpgroup_states(m["text"])
        tops = [max((v, s) for s, v in g.items() if s != "selected")[1] for g in groups]
        if tops != ["wait", "barrier"]:
            raise Fail(f"warpgroups' top states {tops}: warps 0-3 wait on their FMAs' latency, warps 4-7 at the "
                       f"barrier for them")
        return f"warps 0-3 most in wait ({groups[0]['wait']:.2f}), warps 4-7 at the barrier ({groups[1]['barrier']:.2f})"
    R.case("h100: each warpgroup's states, where warps have roles", roles)

    def waves():
        # one block per SM (its shared memory), so a grid of SMs + 1 blocks is two waves and 2 SMs one more
        ptx = write("waves.ptx", fma_chain(64))
        sms, smem = figure("h100", "sms"), figure("h100", "smem_per_sm_bytes") // 2 + 1024
        cycles = [modeled("h100", ptx, "chain", blocks, 32, [R.out("f32", 4)[0]], smem=smem)["cycles"]
                  for blocks in (sms, sms + 1, 2 * sms, 2 * sms + 1)]
        # each wave adds one block's time; the launch ends a cycle or two after its last block, when that
        # block's store has drained to memory (the first wave's store goes to DRAM, later ones hit the L2)
        added = (cycles[1] - cycles[0], cycles[3] - cycles[1])
        if not (cycles[1] == cycles[2] and abs(added[0] - added[1]) <= 1 and 0 <= cycles[0] - added[0] <= 3):
            raise Fail(f"grids of SMs, SMs + 1, 2 SMs and 2 SMs + 1 blocks took {cycles} cycles: whole waves "
                       f"give t, 2t, 2t, 3t (and the last store's drain)")
        return f"{cycles} cycles for {sms}, {sms + 1}, {2 * sms}, {2 * sms + 1} blocks: whole waves"
    R.case("h100: the modeled time grows in whole waves of the grid", waves)

    def sampled_waves():
        # one block per SM again, 6 waves: the first 3 modeled and 3 extrapolated give every wave's time
        ptx = write("waves.ptx", fma_chain(64))
        sms, smem = figure("h100", "sms"), figure("h100", "smem_per_sm_bytes") // 2 + 1024
        full = modeled("h100", ptx, "chain", 6 * sms, 32, [R.out("f32", 4)[0]], smem=smem)
        part = modeled("h100", ptx, "chain", 6 * sms, 32, [R.out("f32", 4)[0], "--sample-waves", "3"], smem=smem)
        if part["blocks"] != 3 or "3 more extrapolated from its waves" not in part["text"] or \
                abs(part["cycles"] - full["cycles"]) > 0.01 * full["cycles"]:
            raise Fail(f"6 waves: every block modeled took {full['cycles']} cycles; 3 modeled and 3 extrapolated "
                       f"{part['cycles']} ({part['text'].strip().splitlines()[1].strip()})")
        for flags, env in ((["--sample-waves", "2"], {"EMU_MODEL": "h100"}), (["--sample-waves", "3"], {})):
            refused = R.launch(ptx, "chain", 6 * sms, 32, [R.out("f32", 4)[0]] + flags, smem, 60, env)
            if refused.returncode != 2:
                raise Fail(f"ptxrun {' '.join(flags)} {'without a model' if not env else ''} must be refused (exit "
                           f"2), got {refused.returncode}")
        return f"{part['cycles']} cycles from 3 of 6 waves, {full['cycles']} from all (fewer than 3 waves, or no " \
               "model: refused)"
    R.case("h100: ptxrun --sample-waves extrapolates whole waves", sampled_waves)

    def drained():
        # 1024 threads x 16 stores x 16 bytes: the warps issue them in a few thousand cycles, and the launch
        # ends when they have reached DRAM at this SM's share of its bandwidth
        ptx = write("stores.ptx", store_stream(16))
        m = modeled("h100", ptx, "stores", 1, 1024, [R.out("u32", 1024 * 16 * 4)[0]])
        share = figure("h100", "hbm_bandwidth_gbps") / figure("h100", "sms") / figure("h100", "boost_clock_ghz")
        floor = 1024 * 16 * 16 / share
        if m["cycles"] < floor:
            raise Fail(f"256 KiB of stores took {m['cycles']} cycles; at this SM's share of DRAM ({share:.1f} bytes per "
                       f"cycle) they need {floor:.0f}: the launch ended before its stores reached memory")
        return f"{m['cycles']} cycles for 256 KiB of stores (their DRAM time: {floor:.0f})"
    R.case("h100: a launch ends when its stores have reached memory", drained)

    def what_if():
        # EMU_MODEL_FIGURES: twice the DRAM bandwidth makes a copy faster and an FMA chain no slower (its one
        # store drains to DRAM at the end: a cycle sooner at most)
        doubled = {"EMU_MODEL_FIGURES": f"hbm_bandwidth_gbps={2 * figure('h100', 'hbm_bandwidth_gbps')}"}
        blocks = 4 * figure("h100", "sms")
        copy, chain = write("copy16.ptx", copy16()), write("what_if_chain.ptx", fma_chain(64))

        def copy_args():
            return [R.inp(np.zeros(blocks * 256 * 4, dtype=np.uint32)), R.out("u32", blocks * 256 * 4)[0]]
        times = {}
        for name, env in (("as filed", PTX_ALONE), ("doubled", dict(PTX_ALONE, **doubled))):
            m = modeled("h100", copy, "copy16", blocks, 256, copy_args(), env=env)
            if name == "doubled" and "with hbm_bandwidth_gbps=" not in m["text"]:
                raise Fail(f"a what-if's label must say so: {m['text'].strip()[-200:]}")
            times[name] = (m["cycles"], modeled("h100", chain, "chain", 1, 32, [R.out("f32", 4)[0]], env=env)["cycles"])
        (copy_filed, chain_filed), (copy_doubled, chain_doubled) = times["as filed"], times["doubled"]
        if not copy_doubled < copy_filed or not 0 <= chain_filed - chain_doubled <= 1:
            raise Fail(f"twice the DRAM bandwidth: the copy {copy_filed} -> {copy_doubled} cycles (must fall), an FMA "
                       f"chain {chain_filed} -> {chain_doubled} (must not change, but for its last store's drain)")
        bad = R.launch(chain, "chain", 1, 1, [R.out("f32", 1)[0]],
                       env={"EMU_MODEL": "h100", "EMU_MODEL_FIGURES": "hbm_bandwith_gbps=1"})
        if "is not NAME=VALUE with a figure" not in bad.stderr or "modeled on" in bad.stdout:
            raise Fail(f"a misspelt figure must be refused in one line, nothing modeled: {bad.stderr.strip()!r}")
        return (f"copy {copy_filed} -> {copy_doubled} cycles, FMA chain {chain_filed} -> {chain_doubled}; a misspelt "
                "figure refused")
    R.case("h100: what if (EMU_MODEL_FIGURES): twice the DRAM bandwidth never slows a kernel", what_if)

    def wgmma_operands():
        # two warpgroups of back-to-back m64n8k16: with A in registers each warp's tensor core holds a wgmma for the
        # floor (ASSUME_WGMMA_LATENCY), two warps a core; with A in shared memory too, the SM's data path reads
        # 2 KiB of A and 256 bytes of B a wgmma (ASSUME_WGMMA_OPERANDS), two wgmmas a step, and decides
        floor, smem = figure("h100", "lat_wgmma_m64n8k16_f32_rs_cycles"), figure("h100", "smem_bytes_per_clock_per_sm")
        step = {}
        for form in ("RS", "SS"):
            make = lambda n, form=form: model_microbench.wgmma_chain(8, n, 256, False, form == "RS")  # noqa: E731
            make.__name__ = "wgmma_" + form
            step[form] = per_step("h100", make, 8, 24, block=256)
        want = {"RS": 2 * floor, "SS": 2 * (64 * 16 * 2 + 8 * 16 * 2) / smem}
        for form in step:
            near(step[form], want[form], 1, f"wgmma m64n8k16 {form}, two warpgroups")
        return f"{step['RS']:.2f} (RS) and {step['SS']:.2f} (SS) cycles a step (figures: {want['RS']:.0f}, {want['SS']:.0f})"
    R.case("h100: a small wgmma holds the tensor cores its floor, and reads its operands through the data path",
           wgmma_operands)

    def unknown_gpu():
        ptx = write("unknown.ptx", fma_chain(1))
        result = R.launch(ptx, "chain", 1, 1, [R.out("f32", 1)[0]], env={"EMU_MODEL": "h200x"})
        if "names no GPU the model knows" not in result.stderr or "modeled" in result.stdout:
            raise Fail(f"EMU_MODEL=h200x: {result.stderr.strip()!r}")
        return result.stderr.strip()
    R.case("EMU_MODEL with an unknown GPU says so and models nothing", unknown_gpu)

    def flag():
        ptx = write("flag.ptx", fma_chain(64))
        out = R.out("f32", 1)[0]
        by_flag = R.run(ptx, "chain", 1, 1, [out, "--model", "a100"])
        by_env = R.run(ptx, "chain", 1, 1, [out], env={"EMU_MODEL": "a100"})
        cycles = [MODELED.search(r.stdout) for r in (by_flag, by_env)]
        if not all(cycles) or cycles[0][2] != cycles[1][2] or "A100" not in by_flag.stdout:
            raise Fail(f"ptxrun --model a100 and EMU_MODEL=a100 differ: {by_flag.stdout!r} {by_env.stdout!r}")
        wrong = R.launch(ptx, "chain", 1, 1, [out, "--model", "h200x"])
        if wrong.returncode != 2 or "the model knows h100, a100, a6000" not in wrong.stderr:
            raise Fail(f"ptxrun --model h200x: exit {wrong.returncode}, {wrong.stderr.strip()!r}")
        return f"{cycles[0][2]} cycles either way; an unknown GPU: {wrong.stderr.strip()}"
    R.case("ptxrun --model GPU is EMU_MODEL=GPU, and an unknown GPU is bad usage", flag)

    return R.summary("emu_model")


if __name__ == "__main__":
    sys.exit(main())
