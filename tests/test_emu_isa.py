#!/usr/bin/env python3
"""The PTX emulator's own instruction tests.

Usage: python3 tests/test_emu_isa.py PTXRUN_PATH WORK_DIR
       python3 tests/test_emu_isa.py --gpu WORK_DIR      the same cases on a GPU (tests/ptxrun_gpu.py)

Runs the hand-written kernels in tests/emu/*.ptx with ptxrun and compares every output with values computed here
from the rules of the NVIDIA PTX ISA (9.0) text. Each family below names the ISA section its expectations come
from. Where the ISA leaves a result unspecified (division by zero, rem of negative numbers, the bits of a NaN
that is only said to be "NaN"), the case avoids it or checks only what is specified. The emulator's code is not
a source of expectations. Prints one line per case and a summary; exits 0 only if every case passes.
"""
import math
from fractions import Fraction
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxrun_cases  # noqa: E402
from ptxrun_cases import Fail  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EMU_DIR = os.path.join(HERE, 'emu')
M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF


class Runner(ptxrun_cases.Runner):
    def __init__(self, ptxrun, work, gpu=None):
        super().__init__(ptxrun, os.path.join(work, 'emu_isa'), EMU_DIR, gpu)

    def elem(self, ptx, kernel, ins, outs):
        """Elementwise kernel: ins are numpy arrays (uint16/uint32/uint64), outs a list of 'u16'/'u32'/'u64'.
        Returns the outputs as unsigned integer arrays."""
        n = len(ins[0])
        args = [self.inp(a) for a in ins]
        paths = []
        for o in outs:
            a, p = self.out(o, n)
            args.append(a)
            paths.append((p, o))
        args.append('u32:%d' % n)
        self.run(ptx, kernel, (n + 127) // 128, 128, args)
        res = []
        for p, o in paths:
            r = np.load(p)
            res.append(r.view({'u16': np.uint16, 'u32': np.uint32, 'u64': np.uint64}[o]).copy())
        return res


def hx(v, bits=32):
    return '0x%0*x' % (bits // 4, int(v))


def compare(got, exp, inputs, bits=32, what='', maskfn=None):
    """got: array; exp: list of int expected values or None (= not checked) or a callable check(got) -> bool."""
    bad = []
    for i, e in enumerate(exp):
        g = int(got[i])
        if e is None:
            continue
        ok = e(g) if callable(e) else (g == (e & ((1 << bits) - 1)))
        if not ok:
            bad.append(i)
    if bad:
        parts = []
        for i in bad[:4]:
            ins = ', '.join(hx(x[i], b) for x, b in inputs)
            e = exp[i]
            es = getattr(e, 'desc', 'predicate') if callable(e) else hx(e & ((1 << bits) - 1), bits)
            parts.append('[%d] in (%s): expected %s, got %s' % (i, ins, es, hx(got[i], bits)))
        raise Fail('%s%d of %d wrong; %s' % (what, len(bad), len(exp), '; '.join(parts)))


def nan_check(bits, width=32):
    """A NaN whose bits the ISA does not specify."""
    if width == 32:
        f = lambda g: (g & 0x7F800000) == 0x7F800000 and (g & 0x7FFFFF) != 0
    elif width == 16:
        f = lambda g: (g & 0x7C00) == 0x7C00 and (g & 0x3FF) != 0
    else:
        f = lambda g: (g & 0x7FF0000000000000) == 0x7FF0000000000000 and (g & 0xFFFFFFFFFFFFF) != 0
    f.desc = 'any NaN'
    return f


# ------------------------------------------------------------------ helpers on bits
def f32b(x):
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def bf32(b):
    return float(np.array([b], dtype=np.uint32).view(np.float32)[0])


def f64b(x):
    return int(np.array([x], dtype=np.float64).view(np.uint64)[0])


def bf64(b):
    return float(np.array([b], dtype=np.uint64).view(np.float64)[0])


def s32(v):
    v &= M32
    return v - (1 << 32) if v >> 31 else v


def s64(v):
    v &= M64
    return v - (1 << 64) if v >> 63 else v


def sx(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def is_nan32(b):
    return (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF) != 0


def is_nan64(b):
    return (b & 0x7FF0000000000000) == 0x7FF0000000000000 and (b & 0xFFFFFFFFFFFFF) != 0


def f16_rn(b32):
    """IEEE round-to-nearest-even f32 -> f16 (numpy's conversion is correctly rounded)."""
    return int(np.array([b32], dtype=np.uint32).view(np.float32).astype(np.float16).view(np.uint16)[0])


def bf16_rn(b):
    """IEEE round-to-nearest-even f32 -> bf16 (the upper 16 bits after rounding the lower 16)."""
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


SPECIAL_F32 = [f32b(x) for x in [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, -3.5, 0.49999997, 0.50000006,
                                  65504.0, 65519.996, 65520.0, -65520.0, 65536.0, 1e6, -1e6, 1e-8, 2.0 ** -24,
                                  2.0 ** -25, 3 * 2.0 ** -26, 1.5 * 2.0 ** -24, 2.5 * 2.0 ** -24, 2.0 ** -14,
                                  1023 * 2.0 ** -24, 2047 * 2.0 ** -25, 3e9, -3e9, 2147483520.0, 2147483648.0,
                                  4294967040.0, 4294967296.0, -2147483648.0, -2147483904.0, 1e20, -1e20,
                                  1.17549435e-38, 32767.5, 32768.0, -32768.5, -32769.0, 100000.0, 0.999, 1.0001,
                                  3.99999976, 16777217.0, 1.00048828125, 1.0009765625, 1.00146484375]] + \
    [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x00000001, 0x80000001, 0x007FFFFF, 0x3F808000,
     0x3F818000, 0x3F80C000, 0x3F804000, 0x7F7FFFFF, 0x7F7F8000, 0xFF7FFFFF, 0x477FF000, 0x477FE000, 0x33000001,
     0x32FFFFFF]


def rand_f32(rng, n):
    vals = rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n).astype(np.float64))
    return [int(x) for x in vals.astype(np.float32).view(np.uint32)]


# ------------------------------------------------------------------ mma
# "Matrix Fragments for mma.m16n8k16 with floating point type": groupID = laneid >> 2, threadID_in_group = laneid % 4
def a_elem(lane, i):
    g, t = lane >> 2, lane % 4
    row = g if (i < 2 or 4 <= i < 6) else g + 8
    col = t * 2 + (i & 1) + (8 if i >= 4 else 0)
    return row, col


def b_elem(lane, i):
    g, t = lane >> 2, lane % 4
    row = t * 2 + (i & 1) + (8 if i >= 2 else 0)
    return row, g


def c_elem(lane, i):
    g, t = lane >> 2, lane % 4
    row = g if i < 2 else g + 8
    return row, t * 2 + (i & 1)


def h16(x):
    return int(np.array([x], dtype=np.float16).view(np.uint16)[0])


def bf16_values(rng, lo, hi, shape):
    """Uniform values that bfloat16 holds exactly (float32 with the low 16 bits cleared)."""
    x = rng.uniform(lo, hi, shape).astype(np.float32)
    return (x.view(np.uint32) & 0xffff0000).view(np.float32)


def bf16_bits(x):
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0]) >> 16


def mma_problem(rng, warps, f16acc, bf16=False):
    if bf16:
        A, B = bf16_values(rng, -2, 2, (warps, 16, 16)), bf16_values(rng, -2, 2, (warps, 16, 8))
    else:
        A = rng.uniform(-2, 2, (warps, 16, 16)).astype(np.float16)
        B = rng.uniform(-2, 2, (warps, 16, 8)).astype(np.float16)
    bits16 = bf16_bits if bf16 else h16  # A's and B's elements as 16-bit patterns
    C = rng.uniform(-4, 4, (warps, 16, 8)).astype(np.float16 if f16acc else np.float32)
    afr = np.zeros((warps * 32, 4), np.uint32)
    bfr = np.zeros((warps * 32, 2), np.uint32)
    cfr = np.zeros((warps * 32, 2 if f16acc else 4), np.uint32)
    for w in range(warps):
        for lane in range(32):
            tid = 32 * w + lane
            a = [bits16(A[w][a_elem(lane, i)]) for i in range(8)]  # "elements (low to high)"
            afr[tid] = [a[2 * k] | a[2 * k + 1] << 16 for k in range(4)]
            b = [bits16(B[w][b_elem(lane, i)]) for i in range(4)]
            bfr[tid] = [b[0] | b[1] << 16, b[2] | b[3] << 16]
            if f16acc:
                c = [h16(C[w][c_elem(lane, i)]) for i in range(4)]
                cfr[tid] = [c[0] | c[1] << 16, c[2] | c[3] << 16]
            else:
                cfr[tid] = [f32b(C[w][c_elem(lane, i)]) for i in range(4)]
    return A, B, C, afr, bfr, cfr


def mma_check(A, B, C, D_of, tol_rel, what):
    warps = A.shape[0]
    for w in range(warps):
        exact = A[w].astype(np.float64) @ B[w].astype(np.float64) + C[w].astype(np.float64)
        scale = np.abs(A[w].astype(np.float64)) @ np.abs(B[w].astype(np.float64)) + np.abs(C[w].astype(np.float64))
        got = D_of(w)
        err = np.abs(got - exact)
        lim = tol_rel * scale + 1e-30
        if not np.all(err <= lim):
            r, c = np.unravel_index(np.argmax(err - lim), err.shape)
            raise Fail('%s warp %d: D[%d][%d] = %r, expected A*B+C = %r (tolerance %.3g); %d elements outside'
                       % (what, w, r, c, float(got[r, c]), float(exact[r, c]), float(lim[r, c]),
                          int(np.sum(err > lim))))


def f32_accumulators(d):
    """D of warp w, from each lane's four f32 accumulator registers (d: lanes x 4 words, in lane order)."""
    def D_of(w):
        D = np.zeros((16, 8))
        for lane in range(32):
            for i in range(4):
                D[c_elem(lane, i)] = bf32(int(d[32 * w + lane][i]))
        return D
    return D_of


def f16_accumulators(d):
    """D of warp w, from each lane's two f16x2 accumulator registers (d: lanes x 2 words, in lane order)."""
    def D_of(w):
        D = np.zeros((16, 8))
        for lane in range(32):
            regs = d[32 * w + lane]
            vals = [int(regs[0]) & 0xFFFF, int(regs[0]) >> 16, int(regs[1]) & 0xFFFF, int(regs[1]) >> 16]
            for i in range(4):
                D[c_elem(lane, i)] = float(np.array([vals[i]], np.uint16).view(np.float16)[0])
        return D
    return D_of


def tests_mma(R, rng):
    def f32acc():
        A, B, C, afr, bfr, cfr = mma_problem(rng, 2, False)
        ao, ap = R.out('u32', 64 * 4)
        R.run('mma.ptx', 'mma_f32', 1, 64, [R.inp(afr.ravel()), R.inp(bfr.ravel()), R.inp(cfr.ravel().view(np.float32)), ao])
        D_of = f32_accumulators(np.load(ap).view(np.uint32).reshape(64, 4))
        mma_check(A, B, C, D_of, 2.0 ** -20, 'mma f32')

    def bf16():
        A, B, C, afr, bfr, cfr = mma_problem(rng, 2, False, bf16=True)
        ao, ap = R.out('u32', 64 * 4)
        R.run('mma.ptx', 'mma_bf16', 1, 64, [R.inp(afr.ravel()), R.inp(bfr.ravel()), R.inp(cfr.ravel().view(np.float32)), ao])
        D_of = f32_accumulators(np.load(ap).view(np.uint32).reshape(64, 4))
        mma_check(A, B, C, D_of, 2.0 ** -20, 'mma bf16')

    def f16acc():
        A, B, C, afr, bfr, cfr = mma_problem(rng, 2, True)
        ao, ap = R.out('u32', 64 * 2)
        R.run('mma.ptx', 'mma_f16', 1, 64, [R.inp(afr.ravel()), R.inp(bfr.ravel()), R.inp(cfr.ravel()), ao])
        D_of = f16_accumulators(np.load(ap).view(np.uint32).reshape(64, 2))
        # f16 result: one rounding to f16 (2^-11 relative) plus accumulation slack
        mma_check(A, B, C, D_of, 2.0 ** -9, 'mma f16')

    def in_place():
        A, B, C, afr, bfr, cfr = mma_problem(rng, 2, False)
        ao, ap = R.out('u32', 64 * 4)
        R.run('mma.ptx', 'mma_f32_in_place', 1, 64,
              [R.inp(afr.ravel()), R.inp(bfr.ravel()), R.inp(cfr.ravel().view(np.float32)), ao])
        D_of = f32_accumulators(np.load(ap).view(np.uint32).reshape(64, 4))
        mma_check(A, B, C, D_of, 2.0 ** -20, 'mma f32, D over C')

    def rowmajor():
        A = rng.uniform(-2, 2, (1, 16, 16)).astype(np.float16)
        B = rng.uniform(-2, 2, (1, 16, 8)).astype(np.float16)
        C = rng.uniform(-4, 4, (1, 16, 8)).astype(np.float32)
        ao, ap = R.out('f32', 128)
        R.run('mma.ptx', 'mma_f32_rowmajor', 1, 32, [R.inp(A[0].ravel()), R.inp(np.ascontiguousarray(B[0].T).ravel()),
                                                         R.inp(C[0].ravel()), ao])
        D = np.load(ap).astype(np.float64).reshape(16, 8)
        mma_check(A, B, C, lambda w: D, 2.0 ** -20, 'mma f32 (index math in PTX)')

    def integers():
        # small integers: every product and sum is exact, so D must equal A*B+C exactly
        A = rng.integers(-8, 8, (2, 16, 16)).astype(np.float16)
        B = rng.integers(-8, 8, (2, 16, 8)).astype(np.float16)
        C = rng.integers(-100, 100, (2, 16, 8)).astype(np.float32)
        _, _, _, afr, bfr, cfr = mma_problem(np.random.default_rng(0), 2, False)
        for w in range(2):
            for lane in range(32):
                tid = 32 * w + lane
                a = [h16(A[w][a_elem(lane, i)]) for i in range(8)]
                afr[tid] = [a[2 * k] | a[2 * k + 1] << 16 for k in range(4)]
                b = [h16(B[w][b_elem(lane, i)]) for i in range(4)]
                bfr[tid] = [b[0] | b[1] << 16, b[2] | b[3] << 16]
                cfr[tid] = [f32b(C[w][c_elem(lane, i)]) for i in range(4)]
        ao, ap = R.out('u32', 256)
        R.run('mma.ptx', 'mma_f32', 1, 64, [R.inp(afr.ravel()), R.inp(bfr.ravel()), R.inp(cfr.ravel().view(np.float32)), ao])
        D_of = f32_accumulators(np.load(ap).view(np.uint32).reshape(64, 4))
        mma_check(A, B, C, D_of, 0.0, 'mma f32 exact integers')

    def k8(bf16):
        """m16n8k8: A 16x8 and B 8x8, their fragments the first half of m16n8k16's (a0-a3, b0-b1); small integers,
        which f16 and bf16 hold exactly, times an f32 C: the exact sum rounded once."""
        def run():
            bits16 = bf16_bits if bf16 else h16
            A = rng.integers(-8, 8, (2, 16, 8)).astype(np.float32)
            B = rng.integers(-8, 8, (2, 8, 8)).astype(np.float32)
            C = rng.uniform(-4, 4, (2, 16, 8)).astype(np.float32)
            afr, bfr, cfr = np.zeros((64, 2), np.uint32), np.zeros(64, np.uint32), np.zeros((64, 4), np.uint32)
            for w in range(2):
                for lane in range(32):
                    tid = 32 * w + lane
                    a = [bits16(A[w][a_elem(lane, i)]) for i in range(4)]
                    afr[tid] = [a[0] | a[1] << 16, a[2] | a[3] << 16]
                    b = [bits16(B[w][b_elem(lane, i)]) for i in range(2)]
                    bfr[tid] = b[0] | b[1] << 16
                    cfr[tid] = [f32b(C[w][c_elem(lane, i)]) for i in range(4)]
            ao, ap = R.out('u32', 256)
            R.run('mma.ptx', 'mma_k8_bf16' if bf16 else 'mma_k8_f32', 1, 64,
                  [R.inp(afr.ravel()), R.inp(bfr), R.inp(cfr.ravel().view(np.float32)), ao])
            D_of = f32_accumulators(np.load(ap).view(np.uint32).reshape(64, 4))
            mma_check(A, B, C, D_of, 2.0 ** -23, 'mma m16n8k8 ' + ('bf16' if bf16 else 'f16'))
        return run

    R.case('mma.m16n8k16.row.col.f32.f16.f16.f32 (fragments per ISA table, 2 warps)', f32acc)
    R.case('mma.m16n8k16.row.col.f32.bf16.bf16.f32 (fragments per ISA table, 2 warps)', bf16)
    R.case('mma.m16n8k8.row.col.f32.f16.f16.f32 (fragments per ISA table, 2 warps)', k8(False))
    R.case('mma.m16n8k16.row.col.f16.f16.f16.f16 (f16x2 accumulators, 2 warps)', f16acc)
    R.case('mma.m16n8k16.row.col.f32.f16.f16.f32 with D written over C', in_place)
    # "mma": at .m16n8k8 and .m16n8k16, ".dtype must be the same as .ctype" (ptxas refuses the others too)
    fragments = '.reg .f32 %f<4>; .reg .b32 %a<8>; '
    R.case('mma.m16n8k16 with an f32 D and an f16 C: refused at load, naming the rule',
           refused_at_load(R, fragments + 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {%f0, %f1, %f2, %f3}, '
                           '{%a0, %a1, %a2, %a3}, {%a4, %a5}, {%a6, %a7};', '.dtype must be the same as .ctype'))
    R.case('mma.m16n8k8 with an f16 D and an f32 C: refused at load, naming the rule',
           refused_at_load(R, fragments + 'mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f32 {%a6, %a7}, {%a0, %a1}, '
                           '{%a4}, {%f0, %f1, %f2, %f3};', '.dtype must be the same as .ctype'))
    R.case('mma.m16n8k8.row.col.f32.bf16.bf16.f32 (fragments per ISA table, 2 warps)', k8(True))
    R.case('mma.m16n8k16.row.col.f32 with fragment index math written in PTX', rowmajor)
    R.case('mma.m16n8k16.row.col.f32 small integers (exact result)', integers)


# ------------------------------------------------------------------ ldmatrix
def tests_ldmatrix(R, rng):
    # "Warp-level matrix load instruction: ldmatrix"
    src16 = rng.integers(0, 1 << 16, 512).astype(np.uint16)
    src32 = src16.view(np.uint32)

    for num in (1, 2, 4):
        for trans in (False, True):
            for kern in (['ldm_x%d%s' % (num, '_trans' if trans else '')] + (['ldm_x4_generic'] if num == 4 and not trans else [])):
                def run(num=num, trans=trans, kern=kern):
                    slots = rng.permutation(64)[:32]
                    off = (slots * 16).astype(np.uint32)
                    ao, ap = R.out('u32', 128)
                    R.run('ldmatrix.ptx', kern, 1, 32, [R.inp(src32), R.inp(off), ao])
                    got = np.load(ap).view(np.uint32).reshape(32, 4)

                    def M(k, row, c):
                        return int(src16[(int(off[8 * k + row]) + 2 * c) // 2])
                    exp, g_ = [], []
                    for lane in range(32):
                        g, t = lane >> 2, lane % 4
                        for k in range(num):
                            if trans:
                                lo, hi = M(k, 2 * t, g), M(k, 2 * t + 1, g)
                            else:
                                lo, hi = M(k, g, 2 * t), M(k, g, 2 * t + 1)
                            exp.append(lo | hi << 16)
                            g_.append(int(got[lane][k]))
                    bad = [i for i in range(len(exp)) if exp[i] != g_[i]]
                    if bad:
                        i = bad[0]
                        raise Fail('%d of %d registers wrong; lane %d r%d expected %s got %s'
                                   % (len(bad), len(exp), i // num, i % num, hx(exp[i]), hx(g_[i])))
                R.case('ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 (%s, scattered row addresses)'
                       % (num, '.trans' if trans else '', kern), run)


# ------------------------------------------------------------------ cp.async
def tests_cp_async(R, rng):
    # "Data Movement and Conversion Instructions: cp.async", "Async-group mechanism", "cp.async.wait_group / wait_all"
    def sizes():
        src = rng.integers(0, 1 << 32, 32 * 24, dtype=np.uint64).astype(np.uint32)
        sb = src.view(np.uint8)
        ao, ap = R.out('u32', 32 * 24)
        R.run('cp_async.ptx', 'cpa_sizes', 1, 32, [R.inp(src), ao])
        got = np.load(ap).view(np.uint32).view(np.uint8)
        # (offset, cp-size, src-size)
        ops = [(0, 4, 4), (8, 8, 8), (16, 16, 16), (32, 16, 16), (48, 16, 5), (64, 16, 0), (80, 8, 3), (88, 4, 1)]
        names = {0: 'ca 4', 8: 'ca 8', 16: 'ca 16', 32: 'cg 16', 48: 'ca 16 src-size 5', 64: 'cg 16 src-size 0',
                 80: 'ca 8 src-size 3', 88: 'ca 4 src-size 1 (register)'}
        errs = []
        for tid in range(32):
            base = 96 * tid
            exp = [0xA5] * 96
            for off, n, s in ops:
                for j in range(n):
                    exp[off + j] = int(sb[base + off + j]) if j < s else 0
            for j in range(96):
                if int(got[base + j]) != exp[j]:
                    where = [o for o, n, s in ops if o <= j < o + n]
                    errs.append('thread %d byte %d (%s): expected 0x%02x got 0x%02x'
                                % (tid, j, names[where[0]] if where else 'not written by cp.async', exp[j], got[base + j]))
        if errs:
            raise Fail('%d bytes wrong; %s' % (len(errs), '; '.join(errs[:4])))

    def groups():
        src = rng.integers(0, 1 << 32, 32 * 16, dtype=np.uint64).astype(np.uint32)
        ao, ap = R.out('u32', 32 * 20)
        R.run('cp_async.ptx', 'cpa_groups', 1, 32, [R.inp(src), ao])
        got = np.load(ap).view(np.uint32).reshape(32, 20)
        what = ['after wait_group 2 (2nd committed group)', 'after wait_group 1', 'after wait_group 0',
                'after wait_all (uncommitted)', 'neighbour thread after bar.sync']
        errs = []
        for tid in range(32):
            exp = list(src[16 * tid:16 * tid + 16]) + list(src[16 * ((tid + 1) % 32):16 * ((tid + 1) % 32) + 4])
            for j in range(20):
                if int(got[tid][j]) != int(exp[j]):
                    errs.append('thread %d word %d (%s): expected %s got %s' % (tid, j, what[j // 4], hx(exp[j]), hx(got[tid][j])))
        if errs:
            raise Fail('%d words wrong; %s' % (len(errs), '; '.join(errs[:4])))

    def misaligned_zero_fill():
        src = np.zeros(32 * 4 + 4, np.uint32)
        ao, _ = R.out('u32', 4)
        p = R.launch('cp_async.ptx', 'cpa_misaligned_zero_fill', 1, 32, [R.inp(src), ao])
        one_error_line(p, 'misaligned cp.async source', 'thread (3,0,0)')

    R.case('cp.async.ca/.cg cp-size 4/8/16, src-size 5/0/3/1 (zero fill), wait_all', sizes)
    R.case('cp.async src-size 0: the source still aligned to cp-size ("Addresses as Operands"), one lane off',
           misaligned_zero_fill)
    R.case('cp.async.commit_group (incl. empty group) / wait_group 2,1,0 / wait_all, then bar.sync', groups)


# ------------------------------------------------------------------ shfl.sync
def shfl_expected(mode, a, b, c):
    # pseudo-code of "Data Movement and Conversion Instructions: shfl.sync"
    d, p = [], []
    cval, segmask = c & 0x1F, (c >> 8) & 0x1F
    for lane in range(32):
        bval = b[lane] & 0x1F
        maxLane = (lane & segmask) | (cval & ~segmask)
        minLane = lane & segmask
        if mode == 'up':
            j = lane - bval
            pval = j >= maxLane
        elif mode == 'down':
            j = lane + bval
            pval = j <= maxLane
        elif mode == 'bfly':
            j = lane ^ bval
            pval = j <= maxLane
        else:
            j = minLane | (bval & ~segmask)
            pval = j <= maxLane
        if not pval:
            j = lane
        d.append(int(a[j]))
        p.append(1 if pval else 0)
    return d, p


def tests_shfl(R, rng):
    cases = []
    for width in (32, 16, 8):
        for mode in ('up', 'down', 'bfly', 'idx'):
            clamp = 0 if mode == 'up' else 0x1F
            c = ((32 - width) << 8) | clamp
            if mode in ('up', 'down'):
                bs = [[1] * 32, [3] * 32, [width // 2 + 1] * 32, [17] * 32]
            elif mode == 'bfly':
                bs = [[1] * 32, [width // 2] * 32, [16] * 32, [31] * 32]
            else:
                bs = [[int(x) for x in rng.integers(0, 32, 32)], [int(x) for x in rng.integers(0, 256, 32)], [0] * 32]
            for b in bs:
                cases.append((mode, width, c, b))
    # clamp values below the top lane, and b with bits above [4:0]
    cases += [('down', 32, 20, [3] * 32), ('up', 32, 5, [2] * 32), ('bfly', 32, 0x0010, [3] * 32),
              ('idx', 32, 0x0009, [int(x) for x in rng.integers(0, 32, 32)]), ('down', 32, 0x1F, [33] * 32),
              ('up', 32, 0, [34] * 32), ('idx', 16, 0x1807, [5] * 32), ('down', 8, 0x1802, [1] * 32)]
    for mode, width, c, b in cases:
        def run(mode=mode, c=c, b=b):
            a = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
            do, dp = R.out('u32', 32)
            po, pp = R.out('u32', 32)
            R.run('shfl.ptx', 'shfl_' + mode, 1, 32, [R.inp(a), R.inp(np.array(b, np.uint32)), do, po, 'u32:%d' % c])
            d, p = np.load(dp).view(np.uint32), np.load(pp).view(np.uint32)
            ed, ep = shfl_expected(mode, a, b, c)
            bad = [l for l in range(32) if int(d[l]) != ed[l] or int(p[l]) != ep[l]]
            if bad:
                l = bad[0]
                src = [j for j in range(32) if int(a[j]) == int(d[l])]
                raise Fail('%d lanes wrong; lane %d (b=%d): expected value of lane %d, p=%d; got value of lane %s, p=%d'
                           % (len(bad), l, b[l], [j for j in range(32) if int(a[j]) == ed[l]][0], ep[l],
                              src[0] if src else '?', int(p[l])))
        bdesc = ('b=%d' % b[0]) if len(set(b)) == 1 else 'b per lane'
        R.case('shfl.sync.%s width %d c=0x%04x %s' % (mode, width, c, bdesc), run)

    def imm():
        a = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
        do, dp = R.out('u32', 32)
        po, pp = R.out('u32', 32)
        R.run('shfl.ptx', 'shfl_bfly_imm', 1, 32, [R.inp(a), R.inp(a), do, po, 'u32:0'])
        compare(np.load(dp).view(np.uint32), [int(a[l ^ 16]) for l in range(32)], [(a, 32)])
    R.case('shfl.sync.bfly immediate b=16 c=0x1f', imm)


# ------------------------------------------------------------------ cvt
def f2i(b, rnd, bits, signed, src64=False):
    """cvt.{rnd}.{s,u}{bits}.{f32,f64}: "clamped to the destination range by default"; NaN -> 0 unless the source is
    .f64 or the destination is .s64/.u64, then 1 << (BitWidth(dst) - 1)."""
    x = bf64(b) if src64 else bf32(b)
    if math.isnan(x):
        return (1 << (bits - 1)) if (src64 or bits == 64) else 0
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if math.isinf(x):
        return (hi if x > 0 else lo) & ((1 << bits) - 1)
    if rnd == 'rzi':
        v = math.trunc(x)
    elif rnd == 'rni':
        v = round(x)      # Python rounds halves to even
    elif rnd == 'rmi':
        v = math.floor(x)
    else:
        v = math.ceil(x)
    return min(max(v, lo), hi) & ((1 << bits) - 1)


def f16_rz(b):
    x = bf32(b)
    h = f16_rn(b)
    if math.isnan(x) or math.isinf(x):
        return h
    hv = float(np.array([h], np.uint16).view(np.float16)[0])
    if math.isinf(hv) or abs(hv) > abs(x):
        h -= 1                    # one step toward zero in magnitude (0x7c00 - 1 = 0x7bff, the largest finite)
    return h


def tests_cvt(R, rng):
    S = 'cvt.ptx'
    F = SPECIAL_F32 + rand_f32(rng, 200)
    # include ties and subnormals of f16 explicitly: every f16 value +- half an ulp
    for h in list(range(0, 0x400, 37)) + list(range(0x3C00, 0x3C40)) + [0x7BFF, 0x0001, 0x03FF, 0x0400]:
        v = float(np.array([h], np.uint16).view(np.float16)[0])
        nxt = float(np.array([h + 1], np.uint16).view(np.float16)[0])
        F.append(f32b((v + nxt) / 2))
    F = [x & M32 for x in F]
    Fa = np.array(F, np.uint32)

    def unary(kern, ins, exp_fn, ibits, obits, otype):
        def run():
            got, = R.elem(S, kern, [ins], [otype])
            compare(got, [exp_fn(int(x)) for x in ins], [(ins, ibits)], obits)
        return run

    def f16_exp(b):
        return nan_check(0, 16) if is_nan32(b) else f16_rn(b)
    R.case('cvt.rn.f16.f32 (ties to even, overflow to inf, f16 subnormals)', unary('cvt_rn_f16_f32', Fa, f16_exp, 32, 16, 'u16'))
    Frz = np.array([b for b in F if not (abs(bf32(b)) >= 65536 and not math.isinf(bf32(b)))], np.uint32)
    R.case('cvt.rz.f16.f32 (no overflowing inputs)', unary('cvt_rz_f16_f32', Frz,
                                                           lambda b: nan_check(0, 16) if is_nan32(b) else f16_rz(b), 32, 16, 'u16'))
    H = np.array(list(range(0, 0x10000, 97)) + [0, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7E00,
                                                0x7C01, 0x3C00, 0xBC00], np.uint16)

    def f16_to_f32(h):
        if (h & 0x7C00) == 0x7C00 and (h & 0x3FF):
            return nan_check(0)
        return f32b(float(np.array([h], np.uint16).view(np.float16)[0]))
    R.case('cvt.f32.f16 (exact, subnormals, inf)', unary('cvt_f32_f16', H, f16_to_f32, 16, 32, 'u32'))

    def f16x2():
        a = np.array(F, np.uint32)
        b = np.array(list(reversed(F)), np.uint32)
        got, = R.elem(S, 'cvt_rn_f16x2_f32', [a, b], ['u32'])
        exp = []
        for x, y in zip(a, b):
            x, y = int(x), int(y)
            if is_nan32(x) or is_nan32(y):
                exp.append(None)
            else:
                exp.append(f16_rn(x) << 16 | f16_rn(y))    # "a ... stored in the upper half of d"
        compare(got, exp, [(a, 32), (b, 32)])
    R.case('cvt.rn.f16x2.f32 d, a, b (a -> upper half, b -> lower half)', f16x2)
    R.case('cvt.rn.bf16.f32 (ties to even, overflow)', unary('cvt_rn_bf16_f32', Fa,
                                                           lambda b: nan_check(0, 16) if is_nan32(b) else bf16_rn(b), 32, 16, 'u16'))

    def bf16x2():
        a = np.array(F, np.uint32)
        b = np.array(list(reversed(F)), np.uint32)
        got, = R.elem(S, 'cvt_rn_bf16x2_f32', [a, b], ['u32'])
        exp = [None if is_nan32(int(x)) or is_nan32(int(y)) else bf16_rn(int(x)) << 16 | bf16_rn(int(y)) for x, y in zip(a, b)]
        compare(got, exp, [(a, 32), (b, 32)])
    R.case('cvt.rn.bf16x2.f32 d, a, b (a -> upper half)', bf16x2)

    # ".relu clamps the result to 0 if negative; NaN results are converted to canonical NaN" (cvt.frnd2{.relu});
    # whether -0 counts as negative the ISA does not say: a -0 result is not checked
    def relu(h, fmt):
        exponent, mantissa = (0x7C00, 0x3FF) if fmt == 'f16' else (0x7F80, 0x7F)
        if h & exponent == exponent and h & mantissa:
            return 0x7FFF
        if h == 0x8000:
            return None
        return 0 if h & 0x8000 else h

    def relu_f16x2():
        a = np.array(F, np.uint32)
        b = np.array(list(reversed(F)), np.uint32)
        got, = R.elem(S, 'cvt_rn_relu_f16x2_f32', [a, b], ['u32'])
        exp = []
        for x, y in zip(a, b):
            hi = 0x7FFF if is_nan32(int(x)) else relu(f16_rn(int(x)), 'f16')
            lo = 0x7FFF if is_nan32(int(y)) else relu(f16_rn(int(y)), 'f16')
            exp.append(None if hi is None or lo is None else hi << 16 | lo)
        compare(got, exp, [(a, 32), (b, 32)])
    R.case('cvt.rn.relu.f16x2.f32: negative results 0, NaN the canonical NaN', relu_f16x2)
    R.case('cvt.rn.relu.bf16.f32: negative results 0, NaN the canonical NaN',
           unary('cvt_rn_relu_bf16_f32', Fa, lambda b: 0x7FFF if is_nan32(b) else relu(bf16_rn(b), 'bf16'), 32, 16, 'u16'))
    R.case('cvt.f32.bf16 (exact)', unary('cvt_f32_bf16', H,
                                         lambda h: nan_check(0) if (h & 0x7F80) == 0x7F80 and (h & 0x7F) else h << 16, 16, 32, 'u32'))
    for rnd in ('rzi', 'rni', 'rmi', 'rpi'):
        R.case('cvt.%s.s32.f32 (clamp, NaN -> 0)' % rnd, unary('cvt_%s_s32_f32' % rnd, Fa, lambda b, r=rnd: f2i(b, r, 32, True), 32, 32, 'u32'))
        R.case('cvt.%s.u32.f32 (clamp, NaN -> 0)' % rnd, unary('cvt_%s_u32_f32' % rnd, Fa, lambda b, r=rnd: f2i(b, r, 32, False), 32, 32, 'u32'))
    R.case('cvt.rzi.s64.f32 (NaN -> 1<<63)', unary('cvt_rzi_s64_f32', Fa, lambda b: f2i(b, 'rzi', 64, True), 32, 64, 'u64'))
    R.case('cvt.rzi.u64.f32 (NaN -> 1<<63)', unary('cvt_rzi_u64_f32', Fa, lambda b: f2i(b, 'rzi', 64, False), 32, 64, 'u64'))
    D = np.array([f64b(x) for x in [0.0, -0.0, 1.5, -1.5, 2147483647.9, 2147483648.0, -2147483648.9, -2147483649.0, 1e300,
                                    -1e300, 123456.789, -0.999]] + [0x7FF8000000000000, 0xFFF0000000000000, 0x7FF0000000000000,
                                                                    0x7FF0000000000001], np.uint64)
    R.case('cvt.rzi.s32.f64 (clamp, NaN -> 0x80000000 for an .f64 source)',
           unary('cvt_rzi_s32_f64', D, lambda b: f2i(b, 'rzi', 32, True, True), 64, 32, 'u32'))
    R.case('cvt.rzi.s16.f32 (clamp to 16 bits)', unary('cvt_rzi_s16_f32', Fa, lambda b: f2i(b, 'rzi', 16, True), 32, 16, 'u16'))

    def rni_ff(b):
        x = bf32(b)
        if math.isnan(x):
            return nan_check(0)
        if math.isinf(x):
            return b
        r = float(round(x))
        return f32b(math.copysign(r, x)) if r == 0 else f32b(r)
    R.case('cvt.rni.f32.f32 (round to integral, ties to even)', unary('cvt_rni_f32_f32', Fa, rni_ff, 32, 32, 'u32'))

    def sat_ff(b):
        x = bf32(b)
        if math.isnan(x):
            return 0                      # "NaN results are flushed to +0.0f"
        return f32b(min(max(x, 0.0), 1.0))
    Fs = np.array([b for b in F if b != 0x80000000], np.uint32)   # -0.0: sign of the clamped zero not stated
    R.case('cvt.sat.f32.f32 (clamp to [0, 1], NaN -> +0)', unary('cvt_sat_f32_f32', Fs, sat_ff, 32, 32, 'u32'))
    I = np.array([0, 1, M32, 0x7FFFFFFF, 0x80000000, 16777217, 16777219, 16777218, 33554435, 0x7FFFFFC0, 0xFFFFFF81,
                  0x80000001, 0xFFFFFFFE, 12345] + [int(x) for x in rng.integers(0, 1 << 32, 100, dtype=np.uint64)], np.uint32)

    def i2f_rn(v):
        return f32b(float(v))             # exact in double, then one rounding to f32 (ties to even)

    def i2f_rz(v):
        f = np.float32(float(v))
        if abs(int(f)) > abs(v):
            f = np.nextafter(f, np.float32(0))
        return f32b(f)
    R.case('cvt.rn.f32.s32', unary('cvt_rn_f32_s32', I, lambda b: i2f_rn(s32(b)), 32, 32, 'u32'))
    R.case('cvt.rn.f32.u32', unary('cvt_rn_f32_u32', I, lambda b: i2f_rn(b), 32, 32, 'u32'))
    R.case('cvt.rz.f32.s32', unary('cvt_rz_f32_s32', I, lambda b: i2f_rz(s32(b)), 32, 32, 'u32'))
    D2 = np.array([f64b(x) for x in [0.1, -0.1, 1e-40, 1e-45, 3.4028234663852886e38, 1.0000000596046448, 1.0000001788139343,
                                     -2.5e-39]] + [0x7FF8000000000000, 0xFFF0000000000000] +
                  [int(x) for x in (rng.standard_normal(50) * 1e10).view(np.uint64)], np.uint64)
    R.case('cvt.rn.f32.f64 (ties to even, f32 subnormals)', unary('cvt_rn_f32_f64', D2,
                                                                 lambda b: nan_check(0) if is_nan64(b) else f32b(np.float32(bf64(b))), 64, 32, 'u32'))
    R.case('cvt.f64.f32 (exact)', unary('cvt_f64_f32', Fa, lambda b: nan_check(0, 64) if is_nan32(b) else f64b(float(bf32(b))), 32, 64, 'u64'))
    # integer <-> integer: "Scalar Conversions" (sext / zext / chop) and "Operand Size Exceeding Instruction-Type Size"
    # (source: the low bits of the register are used; a wider destination register is sign-extended for signed
    # destination types and zero-extended for unsigned ones)
    II = np.array([0, 1, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, M32, 0x1234ABCD,
                   0xDEADBEEF, 0x12345680] + [int(x) for x in rng.integers(0, 1 << 32, 40, dtype=np.uint64)], np.uint32)
    LL = np.array([0, 1, M64, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000, 0xFFFFFFFF80000000, 0xFFFFFFFF7FFFFFFF,
                   0x8000000000000000, 0x7FFFFFFFFFFFFFFF, 0x123456789ABCDEF0] +
                  [int(x) for x in rng.integers(0, 1 << 63, 30, dtype=np.uint64)], np.uint64)
    widths = {'s8': 8, 'u8': 8, 's16': 16, 'u16': 16, 's32': 32, 'u32': 32, 's64': 64, 'u64': 64}

    def conv(d, a, sat=False):
        def f(v):
            aw, dw = widths[a], widths[d]
            x = sx(v, aw) if a[0] == 's' else v & ((1 << aw) - 1)      # the source value
            if sat:
                lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if d[0] == 's' else (0, (1 << dw) - 1)
                x = min(max(x, lo), hi)
            x &= (1 << dw) - 1                                          # chop / bit pattern of the dst type
            regw = 64 if dw == 64 else 32
            if d[0] == 's':
                x = sx(x, dw)
            return x & ((1 << regw) - 1)
        return f
    for d, a, src in [('s32', 's8', II), ('u32', 'u8', II), ('s32', 's16', II), ('u32', 'u16', II), ('u32', 's8', II),
                      ('s32', 'u16', II), ('s64', 's32', II), ('u64', 'u32', II), ('u64', 's32', II), ('s64', 'u32', II),
                      ('s8', 's32', II), ('u8', 's32', II), ('s16', 'u32', II), ('u16', 's32', II), ('u32', 'u64', LL),
                      ('s32', 's64', LL)]:
        ob = 64 if widths[d] == 64 else 32
        R.case('cvt.%s.%s (%d-bit registers)' % (d, a, 32 if src is II else 64),
               unary('cvt_%s_%s' % (d, a), src, conv(d, a), 32 if src is II else 64, ob, 'u64' if ob == 64 else 'u32'))
    for d, a, src in [('s8', 's32', II), ('u8', 's32', II), ('s16', 's32', II), ('u16', 'u32', II), ('u32', 's32', II),
                      ('s32', 'u32', II), ('s8', 'u32', II), ('u8', 'u32', II), ('s32', 's64', LL), ('u32', 's64', LL)]:
        R.case('cvt.sat.%s.%s (clamp to MININT..MAXINT of the destination)' % (d, a),
               unary('cvt_sat_%s_%s' % (d, a), src, conv(d, a, True), 32 if src is II else 64, 32, 'u32'))


# ------------------------------------------------------------------ integer
def tests_int(R, rng):
    S = 'int.ptx'
    edge32 = [0, 1, 2, 3, 7, 0x7FFFFFFF, 0x80000000, 0x80000001, M32, M32 - 1, 0x10000, 0xFFFF, 0x55555555, 0xAAAAAAAA]
    edge64 = [0, 1, 2, 3, M64, M64 - 1, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFF, 0x100000000,
              0x5555555555555555]

    def r32(n):
        return [int(x) for x in rng.integers(0, 1 << 32, n, dtype=np.uint64)]

    def r64(n):
        return [int(x) for x in rng.integers(0, 1 << 64, n, dtype=np.uint64)]

    def pairs(edge, rand, n):
        a = [x for x in edge for _ in edge] + rand(n)
        b = [y for _ in edge for y in edge] + rand(n)
        return a, b

    def binop(kern, a, b, fn, bits, desc, obits=None, skip=None, c=None):
        obits = obits or bits
        def run():
            keep = [i for i in range(len(a)) if not (skip and skip(a[i], b[i]))]
            A = np.array([a[i] for i in keep], np.uint64 if bits == 64 else np.uint32)
            B = np.array([b[i] for i in keep], np.uint64 if bits == 64 else np.uint32)
            ins = [A, B]
            if c is not None:
                ins.append(np.array([c[i] for i in keep], np.uint64 if c is not None and max(c) > M32 else np.uint32))
            got, = R.elem(S, kern, ins, ['u64' if obits == 64 else 'u32'])
            if c is None:
                exp = [fn(int(x), int(y)) for x, y in zip(A, B)]
            else:
                exp = [fn(int(x), int(y), int(z)) for x, y, z in zip(A, B, ins[2])]
            compare(got, exp, [(A, bits), (B, bits)] + ([(ins[2], 64 if ins[2].dtype == np.uint64 else 32)] if c is not None else []), obits)
        R.case(desc, run)

    def diverged_lanes_keep():
        # "State Spaces", .reg: each thread's own. Odd lanes compute, even lanes (half of every warp) skip:
        # theirs must come back as they were
        a = np.arange(1000, 1096, dtype=np.uint32)
        got_int, got_f32 = R.elem(S, 'diverged_lanes_keep', [a], ['u32', 'u32'])
        odd = [i % 2 == 1 for i in range(len(a))]
        compare(got_int, [((((int(x) + 1000) * 3) ^ 0x55) * 5 + 7) & M32 if o else int(x) for x, o in zip(a, odd)],
                [(a, 32)])
        compare(got_f32.view(np.float32).astype(np.float64).astype(np.int64),
                [2 * int(x) + 2 if o else int(x) for x, o in zip(a, odd)], [(a, 32)])
    R.case('lanes a branch leaves out keep their registers (integer add, mul.lo, xor, mad.lo; f32 fma, add)',
           diverged_lanes_keep)

    a, b = pairs(edge32, r32, 300)
    b = [y if y else 5 for y in b]
    # "Integer Arithmetic Instructions: div" (d = a / b; b == 0 is unspecified and not tested; for .s32 the quotient
    # of the C-like pseudo-code truncates toward zero; MININT / -1 is not stated and not tested)
    binop('div_u32', a, b, lambda x, y: x // y, 32, 'div.u32')
    binop('div_s32', a, b, lambda x, y: int(abs(s32(x)) // abs(s32(y))) * (1 if (s32(x) < 0) == (s32(y) < 0) else -1), 32,
          'div.s32 (truncation toward zero)', skip=lambda x, y: x == 0x80000000 and y == M32)
    binop('rem_u32', a, b, lambda x, y: x % y, 32, 'rem.u32')
    # "rem": "The behavior for negative numbers is machine-dependent" -> only non-negative operands for .s32
    binop('rem_s32', a, b, lambda x, y: x % y, 32, 'rem.s32 (non-negative operands)',
          skip=lambda x, y: s32(x) < 0 or s32(y) <= 0)
    a6, b6 = pairs(edge64, r64, 200)
    b6 = [y if y else 7 for y in b6]
    binop('div_u64', a6, b6, lambda x, y: x // y, 64, 'div.u64')
    binop('div_s64', a6, b6, lambda x, y: int(abs(s64(x)) // abs(s64(y))) * (1 if (s64(x) < 0) == (s64(y) < 0) else -1), 64,
          'div.s64 (truncation toward zero)', skip=lambda x, y: x == 0x8000000000000000 and y == M64)
    binop('rem_u64', a6, b6, lambda x, y: x % y, 64, 'rem.u64')
    # "Integer Arithmetic Instructions: mul": t = a * b (2n bits); .lo = t<n-1..0>, .hi = t<2n-1..n>, .wide = t
    a, b = pairs(edge32, r32, 300)
    binop('mul_lo_u32', a, b, lambda x, y: x * y, 32, 'mul.lo.u32')
    binop('mul_hi_u32', a, b, lambda x, y: (x * y) >> 32, 32, 'mul.hi.u32')
    binop('mul_hi_s32', a, b, lambda x, y: (s32(x) * s32(y)) >> 32, 32, 'mul.hi.s32')
    binop('mul_wide_s32', a, b, lambda x, y: s32(x) * s32(y), 32, 'mul.wide.s32', obits=64)
    binop('mul_wide_u32', a, b, lambda x, y: x * y, 32, 'mul.wide.u32', obits=64)
    a6, b6 = pairs(edge64, r64, 200)
    binop('mul_hi_u64', a6, b6, lambda x, y: (x * y) >> 64, 64, 'mul.hi.u64')
    binop('mul_hi_s64', a6, b6, lambda x, y: (s64(x) * s64(y)) >> 64, 64, 'mul.hi.s64')
    binop('mul_lo_u64', a6, b6, lambda x, y: x * y, 64, 'mul.lo.u64')
    # "Integer Arithmetic Instructions: mad": .lo: t<n-1..0> + c, .hi: t<2n-1..n> + c, .wide: t + c
    c = r32(len(a))
    binop('mad_lo_s32', a, b, lambda x, y, z: s32(x) * s32(y) + z, 32, 'mad.lo.s32', c=c)
    binop('mad_hi_s32', a, b, lambda x, y, z: ((s32(x) * s32(y)) >> 32) + s32(z), 32, 'mad.hi.s32', c=c)
    binop('mad_hi_u32', a, b, lambda x, y, z: ((x * y) >> 32) + z, 32, 'mad.hi.u32', c=c)
    c6 = r64(len(a6))
    binop('mad_lo_u64', a6, b6, lambda x, y, z: x * y + z, 64, 'mad.lo.u64', c=c6)
    binop('mad_hi_u64', a6, b6, lambda x, y, z: ((x * y) >> 64) + z, 64, 'mad.hi.u64', c=c6)
    c64 = r64(len(a))
    binop('mad_wide_s32', a, b, lambda x, y, z: s32(x) * s32(y) + z, 32, 'mad.wide.s32', obits=64, c=c64)

    # "Integer Arithmetic Instructions: bfe": pos = b & 0xff, len = c & 0xff, msb = 31/63;
    # sbit = (unsigned || len == 0) ? 0 : a[min(pos+len-1, msb)]; d[i] = (i < len && pos+i <= msb) ? a[pos+i] : sbit
    def bfe(x, pos, ln, bits, signed):
        pos, ln = pos & 0xFF, ln & 0xFF
        msb = bits - 1
        sbit = 0 if (not signed or ln == 0) else (x >> min(pos + ln - 1, msb)) & 1
        d = 0
        for i in range(bits):
            bit = ((x >> (pos + i)) & 1) if (i < ln and pos + i <= msb) else sbit
            d |= bit << i
        return d
    pos = [int(v) for v in rng.integers(0, 70, 300)] + [0, 31, 32, 63, 64, 255, 256 + 3, 0x1FF, 5, 5]
    ln = [int(v) for v in rng.integers(0, 70, 300)] + [0, 1, 1, 1, 32, 8, 4, 8, 0x100 + 4, 0xFFFFFF08]
    # b and c "are restricted to the 8-bit value range 0..255": the pseudo-code's & 0xff, which the emulator
    # follows. Past 255 an H100 does not mask them in the 64-bit forms (ptxas expands those into shifts; measured:
    # bfe.u64 with pos 259, len 4 gave 0): on a GPU those forms are held to the range the ISA restricts them to.
    in_range = [i for i, (p, l) in enumerate(zip(pos, ln)) if not R.gpu or (p <= 0xFF and l & M32 <= 0xFF)]
    xs32 = r32(len(pos))
    xs64 = r64(len(pos))
    for t in ('u32', 's32'):
        binop('bfe_' + t, xs32, pos, lambda x, p, l, t=t: bfe(x, p, l, 32, t[0] == 's'), 32,
              'bfe.%s (pos/len clamping, sign bit)' % t, c=ln)
    for t in ('u64', 's64'):
        def run(t=t):
            A = np.array([xs64[i] for i in in_range], np.uint64)
            P = np.array([pos[i] for i in in_range], np.uint32)
            L = np.array([ln[i] & M32 for i in in_range], np.uint32)
            got, = R.elem(S, 'bfe_' + t, [A, P, L], ['u64'])
            compare(got, [bfe(int(x), int(p), int(l), 64, t[0] == 's') for x, p, l in zip(A, P, L)], [(A, 64), (P, 32), (L, 32)], 64)
        R.case('bfe.%s (pos/len clamping, sign bit)' % t, run)

    # "bfi": pos = c & 0xff, len = d & 0xff; f = b; for (i = 0; i < len && pos+i <= msb; i++) f[pos+i] = a[i]
    def bfi(x, y, p, l, bits):
        p, l = p & 0xFF, l & 0xFF
        f = y
        i = 0
        while i < l and p + i <= bits - 1:
            f = (f & ~(1 << (p + i))) | (((x >> i) & 1) << (p + i))
            i += 1
        return f

    def bfi_run(bits):
        def run():
            use = range(len(pos)) if bits == 32 else in_range
            n = len(use)
            A = np.array(r32(n) if bits == 32 else r64(n), np.uint32 if bits == 32 else np.uint64)
            B = np.array(r32(n) if bits == 32 else r64(n), np.uint32 if bits == 32 else np.uint64)
            P = np.array([pos[i] for i in use], np.uint32)
            L = np.array([ln[i] & M32 for i in use], np.uint32)
            got, = R.elem(S, 'bfi_b%d' % bits, [A, B, P, L], ['u32' if bits == 32 else 'u64'])
            compare(got, [bfi(int(x), int(y), int(p), int(l), bits) for x, y, p, l in zip(A, B, P, L)],
                    [(A, bits), (B, bits), (P, 32), (L, 32)], bits)
        return run
    R.case('bfi.b32 (pos/len clamping)', bfi_run(32))
    R.case('bfi.b64 (pos/len clamping)', bfi_run(64))

    # "Data Movement and Conversion Instructions: prmt"
    MODES = {'f4e': [(3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)],
             'b4e': [(5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)],
             'rc8': [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
             'ecl': [(3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)],
             'ecr': [(0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)],
             'rc16': [(1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)]}   # (d.b3, d.b2, d.b1, d.b0)

    def prmt(x, y, c, mode=None):
        t = (y << 32) | x
        byte = lambda k: (t >> (8 * k)) & 0xFF
        d = 0
        for j in range(4):
            if mode is None:
                sel = (c >> (4 * j)) & 0xF
                v = byte(sel & 7)
                if sel & 8:
                    v = 0xFF if v & 0x80 else 0
            else:
                v = byte(MODES[mode][c & 3][3 - j])
            d |= v << (8 * j)
        return d
    pa, pb = r32(300), r32(300)
    pc = r32(300)
    binop('prmt', pa, pb, lambda x, y, z: prmt(x, y, z), 32, 'prmt.b32 (generic form, sign replication)', c=pc)
    for m in MODES:
        binop('prmt_' + m, pa, pb, lambda x, y, z, m=m: prmt(x, y, z, m), 32, 'prmt.b32.%s' % m, c=pc)

    # "Logic and Shift Instructions: shf": n = .clamp ? min(c, 32) : c & 0x1f; [b:a] is a 64-bit value;
    # shf.l: upper 32 bits of [b:a] << n; shf.r: lower 32 bits of [b:a] >> n
    sa, sb = r32(200), r32(200)
    sc = [int(v) for v in rng.integers(0, 40, 190)] + [0, 31, 32, 33, 63, 64, 100, 0x80000000, M32, 0x21]
    for dr in ('l', 'r'):
        for m in ('clamp', 'wrap'):
            def f(x, y, z, dr=dr, m=m):
                n = min(z, 32) if m == 'clamp' else z & 0x1F
                v = (y << 32) | x
                return ((v << n) >> 32) if dr == 'l' else (v >> n)
            binop('shf_%s_%s' % (dr, m), sa, sb, f, 32, 'shf.%s.%s.b32' % (dr, m), c=sc)
    # "shl" / "shr": shift amounts greater than the register width N are clamped to N
    sh = [int(v) for v in rng.integers(0, 40, 150)] + [0, 1, 31, 32, 33, 63, 64, 65, 255, 256, 0x80000000, M32]
    xs = r32(len(sh))
    binop('shl_b32', xs, sh, lambda x, n: x << min(n, 32), 32, 'shl.b32 (shift >= 32 -> 0)')
    binop('shr_u32', xs, sh, lambda x, n: x >> min(n, 32), 32, 'shr.u32 (shift >= 32 -> 0)')
    binop('shr_s32', xs, sh, lambda x, n: s32(x) >> min(n, 32), 32, 'shr.s32 (shift >= 32 -> sign bits)')
    xl = r64(len(sh))

    def sh64(kern, fn, desc):
        def run():
            A = np.array(xl, np.uint64)
            B = np.array(sh, np.uint32)
            got, = R.elem(S, kern, [A, B], ['u64'])
            compare(got, [fn(int(x), int(n)) for x, n in zip(A, B)], [(A, 64), (B, 32)], 64)
        R.case(desc, run)
    sh64('shl_b64', lambda x, n: x << min(n, 64), 'shl.b64 (shift >= 64 -> 0)')
    sh64('shr_u64', lambda x, n: x >> min(n, 64), 'shr.u64 (shift >= 64 -> 0)')
    sh64('shr_s64', lambda x, n: s64(x) >> min(n, 64), 'shr.s64 (shift >= 64 -> sign bits)')

    def sh16(kern, fn, desc):
        def run():
            A = np.array([int(v) & 0xFFFF for v in xs], np.uint16)
            B = np.array(sh, np.uint32)
            got, = R.elem(S, kern, [A, B], ['u16'])
            compare(got, [fn(int(x), int(n)) for x, n in zip(A, B)], [(A, 16), (B, 32)], 16)
        R.case(desc, run)
    sh16('shl_b16', lambda x, n: x << min(n, 16), 'shl.b16 (shift >= 16 -> 0)')
    sh16('shr_s16', lambda x, n: sx(x, 16) >> min(n, 16), 'shr.s16 (shift >= 16 -> sign bits)')

    # clz / popc / brev ("Integer Arithmetic Instructions: clz / popc / brev")
    u1 = np.array(edge32 + [1 << k for k in range(32)] + r32(100), np.uint32)
    l1 = np.array(edge64 + [1 << k for k in range(64)] + r64(100), np.uint64)

    def un(kern, src, ib, ob, fn, desc):
        def run():
            got, = R.elem(S, kern, [src], ['u64' if ob == 64 else 'u32'])
            compare(got, [fn(int(x)) for x in src], [(src, ib)], ob)
        R.case(desc, run)
    un('clz_b32', u1, 32, 32, lambda x: 32 - x.bit_length(), 'clz.b32 (clz(0) = 32)')
    un('clz_b64', l1, 64, 32, lambda x: 64 - x.bit_length(), 'clz.b64 (clz(0) = 64)')
    un('popc_b32', u1, 32, 32, lambda x: bin(x).count('1'), 'popc.b32')
    un('popc_b64', l1, 64, 32, lambda x: bin(x).count('1'), 'popc.b64')
    un('brev_b32', u1, 32, 32, lambda x: int('{:032b}'.format(x)[::-1], 2), 'brev.b32')
    un('brev_b64', l1, 64, 64, lambda x: int('{:064b}'.format(x)[::-1], 2), 'brev.b64')

    # ld/st of 8- and 16-bit integers, and ptxrun's u8, s8 and s16 buffers in and out ("Data Movement and
    # Conversion Instructions: ld": .u8 zero-extends into the 32-bit register, .s8 and .s16 sign-extend)
    def widen_small():
        count = 300
        x = np.array([0, 1, 127, 128, 255] + [int(v) for v in rng.integers(0, 256, count - 5)], np.uint8)
        y = np.array([0, -1, 127, -128, 5] + [int(v) for v in rng.integers(-128, 128, count - 5)], np.int8)
        z = np.array([0, -1, 32767, -32768, 7] + [int(v) for v in rng.integers(-32768, 32768, count - 5)], np.int16)
        wide, wide_path = R.out('s32', count)
        low, low_path = R.out('u8', count)
        R.run(S, 'widen_small', (count + 127) // 128, 128, [R.inp(x), R.inp(y), R.inp(z), wide, low, 'u32:%d' % count])
        got_wide, got_low = np.load(wide_path), np.load(low_path)
        want = [int(a) + int(b) + int(c) for a, b, c in zip(x, y, z)]
        if got_wide.dtype != np.int32 or got_low.dtype != np.uint8:
            raise Fail('written as %s and %s, not int32 and uint8' % (got_wide.dtype, got_low.dtype))
        bad = [i for i in range(count) if int(got_wide[i]) != want[i] or int(got_low[i]) != want[i] & 0xFF]
        if bad:
            i = bad[0]
            raise Fail('%d of %d wrong; [%d] %d + %d + %d: got %d and %d' % (len(bad), count, i, x[i], y[i], z[i],
                                                                           got_wide[i], got_low[i]))
    R.case('ld.u8, ld.s8, ld.s16, st.u8 through u8, s8, s16 buffers in and u8, s32 out', widen_small)

    # "Integer Arithmetic Instructions: bfind": the position of the most significant non-sign bit (a negative
    # signed input is complemented first: its most significant 0), 0xffffffff when there is none; .shiftamt gives
    # msb - position instead (still 0xffffffff for none)
    def bfind(x, bits, signed, shiftamt):
        if signed and x >> (bits - 1) & 1:
            x = ~x & ((1 << bits) - 1)
        if x == 0:
            return M32
        return (bits - 1) - (x.bit_length() - 1) if shiftamt else x.bit_length() - 1
    n1 = np.array([(-(1 << k)) & M32 for k in range(32)] + [((1 << k) - 1) ^ M32 for k in range(32)], np.uint32)
    n2 = np.array([(-(1 << k)) & M64 for k in range(64)] + [((1 << k) - 1) ^ M64 for k in range(64)], np.uint64)
    for bits, src in ((32, np.concatenate([u1, n1])), (64, np.concatenate([l1, n2]))):
        for signed in (False, True):
            for shiftamt in (False, True):
                kern = 'bfind%s_%s%d' % ('_shiftamt' if shiftamt else '', 's' if signed else 'u', bits)
                un(kern, src, bits, 32, lambda x, b=bits, sg=signed, sa=shiftamt: bfind(x, b, sg, sa),
                   kern.replace('_', '.').replace('bfind.shiftamt', 'bfind.shiftamt') + ' (none found: 0xffffffff)')

    # "Integer Arithmetic Instructions: dp4a / dp2a": c plus the products of a's bytes (dp2a: a's two 16-bit halves)
    # and b's bytes (dp2a: bytes 0, 1 for .lo, 2, 3 for .hi), each zero- or sign-extended as its type says, in 32 bits
    def parts(x, width, count, signed, first=0):
        vals = [(x >> (width * (first + i))) & ((1 << width) - 1) for i in range(count)]
        return [sx(v, width) if signed else v for v in vals]
    da = [x for x in edge32 for _ in range(3)] + r32(300)
    db = [edge32[(i * 5) % len(edge32)] for i in range(3 * len(edge32))] + r32(300)
    dc = [edge32[(i * 3) % len(edge32)] for i in range(3 * len(edge32))] + r32(300)
    for at in ('u32', 's32'):
        for bt in ('u32', 's32'):
            def dp4a(x, y, z, at=at, bt=bt):
                return (z + sum(p * q for p, q in zip(parts(x, 8, 4, at == 's32'), parts(y, 8, 4, bt == 's32')))) & M32
            binop('dp4a_%s_%s' % (at, bt), da, db, dp4a, 32, 'dp4a.%s.%s' % (at, bt), c=dc)
            for mode in ('lo', 'hi'):
                def dp2a(x, y, z, at=at, bt=bt, mode=mode):
                    return (z + sum(p * q for p, q in zip(parts(x, 16, 2, at == 's32'),
                                                          parts(y, 8, 2, bt == 's32', 0 if mode == 'lo' else 2)))) & M32
                binop('dp2a_%s_%s_%s' % (mode, at, bt), da, db, dp2a, 32, 'dp2a.%s.%s.%s' % (mode, at, bt), c=dc)
    # "Logic and Shift Instructions: lop3": d[i] = immLut bit number (a[i] << 2 | b[i] << 1 | c[i])
    la, lb, lc = r32(200), r32(200), r32(200)
    for lut in (0x96, 0xE8, 0xF0, 0xCC, 0xAA, 0x01, 0x80, 0xFE, 0x6A, 0x1B):
        def f(x, y, z, lut=lut):
            d = 0
            for i in range(32):
                idx = ((x >> i) & 1) << 2 | ((y >> i) & 1) << 1 | ((z >> i) & 1)
                d |= ((lut >> idx) & 1) << i
            return d
        binop('lop3_%02x' % lut, la, lb, f, 32, 'lop3.b32 immLut=0x%02x' % lut, c=lc)


# ------------------------------------------------------------------ setp / selp / min / max
FCMP = {
    # "Floating Point Comparisons": ordered ops are false if either operand is NaN, unordered ones true
    'eq': lambda a, b: a == b, 'ne': lambda a, b: a != b, 'lt': lambda a, b: a < b, 'le': lambda a, b: a <= b,
    'gt': lambda a, b: a > b, 'ge': lambda a, b: a >= b,
}


def fcmp(op, x, y):
    n = math.isnan(x) or math.isnan(y)
    if op == 'num':
        return not n
    if op == 'nan':
        return n
    if op.endswith('u'):
        return n or FCMP[op[:-1]](x, y)
    return (not n) and FCMP[op](x, y)


def one_error_line(p, *words):
    """ptxrun `p` failed as an error must: exit 1 and one line on stderr, holding every one of `words`."""
    lines = p.stderr.strip().splitlines()
    if p.returncode != 1 or len(lines) != 1 or any(w not in lines[0] for w in words):
        raise Fail('exit %d, stderr %r' % (p.returncode, p.stderr.strip()[:300]))


def refused_at_load(R, line, words):
    """A case: ptxrun on a kernel holding `line` (PTX line 10) exits 1 with one line naming the line and saying
    `words`, before anything runs."""
    def run():
        path = R.path('refused').replace('.npy', '.ptx')
        with open(path, 'w') as f:
            f.write('.version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n'
                    '  .reg .b32 %r<4>;\n  .reg .b16 %h<4>;\n  mov.u32 %r1, 1;\n  mov.u16 %h1, 1;\n'
                    '  ' + line + '\n  ret;\n}\n')
        p = R.launch(path, 'k', 1, 1, [])
        one_error_line(p, words, '.ptx:10:')
    return run


def tests_brx(R, rng):
    """PTX ISA 9.0, "Control Flow Instructions: brx.idx", "Control Flow Directives: .branchtargets": a lane whose
    guard holds goes to entry `index` of the list (lanes of one warp to different entries diverge, and meet again
    at the join); an index past the list's end is undefined (an error here); names are resolved at load time."""
    S = 'brx.ptx'

    def switch():
        n = 256
        x = np.array([i % 6 for i in range(64)] + [int(v) for v in rng.integers(0, 6, n - 64)], np.uint32)
        y = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        out, path = R.out('u32', n)
        R.run(S, 'brx_switch', n // 128, 128, [R.inp(x), R.inp(y), out, 'u32:%d' % n])
        cases = [lambda v: (2 * v) & M32, lambda v: (v + 100) & M32, lambda v: 7, lambda v: v ^ 0xFF]
        want = [cases[int(i)](int(v)) if i < 4 else 57005 for i, v in zip(x, y)]
        compare(np.load(path), want, [(x, 32), (y, 32)])
    R.case('brx.idx: each lane to its list entry (four ways and a false guard in one warp), joined at bar.sync',
           switch)

    def past_the_end():
        x = np.array([0, 1] * 8 + [2] + [0] * 15, np.uint32)
        out, _ = R.out('u32', 32)
        p = R.launch(S, 'brx_unguarded', 1, 32, [R.inp(x), R.inp(x), out, 'u32:32'])
        one_error_line(p, 'index 2 is past the 2 labels', 'thread (16,0,0)')
    R.case('brx.idx with an index past its list: an error naming the thread, not a jump anywhere', past_the_end)

    def in_range():
        x = np.array([1] * 32, np.uint32)
        out, path = R.out('u32', 32)
        R.run(S, 'brx_unguarded', 1, 32, [R.inp(x), R.inp(x), out, 'u32:32'])
        compare(np.load(path), [2] * 32, [(x, 32)])
    R.case('brx.idx.uni, every lane to entry 1', in_range)
    def aligned(x, strict):
        def run():
            out, path = R.out('u32', 32)
            p = R.launch(S, 'brx_aligned', 1, 32, [R.inp(np.array(x, np.uint32)), out],
                         env={'EMU_CONVERGENCE': 'strict'} if strict else None)
            if strict and len(set(x)) > 1:
                if p.returncode != 1 or 'not converged at this .aligned ldmatrix' not in p.stderr:
                    raise Fail('exit %d, stderr %r' % (p.returncode, p.stderr.strip()[:300]))
                return
            if p.returncode != 0:
                raise Fail('exit %d, stderr %r' % (p.returncode, p.stderr.strip()[:300]))
            # ldmatrix .x1 gives lane l the l-th 32-bit word of the 8x8 tile, which holds l; plus 1 or 2 by entry
            compare(np.load(path), [lane + 1 + int(x[lane]) for lane in range(32)], [(np.array(x), 32)])
        return run
    R.case('brx.idx to two entries, met again by a branch: not converged at an .aligned op (strict)',
           aligned([i % 2 for i in range(32)], True))
    R.case('brx.idx to two entries, met again by a branch: the join reconverges it (default)',
           aligned([i % 2 for i in range(32)], False))
    R.case('brx.idx with every lane to one entry: still converged at an .aligned op (strict)', aligned([1] * 32, True))
    R.case('brx.idx naming no .branchtargets list before it is refused at load time',
           refused_at_load(R, 'brx.idx %r1, $L_nowhere;', 'no .branchtargets list'))
    R.case('a .branchtargets list naming an undefined label is refused at load time',
           refused_at_load(R, '$L_t: .branchtargets $L_missing;', 'names undefined label'))


def tests_calls(R, rng):
    """The CUDA runtime's device-side printf and assert as nvcc calls them (CUDA C++ Programming Guide,
    "Formatted Output": vprintf(format, arguments packed each at a multiple of its size), returning the number of
    arguments; "Assertion": __assertfail stops the kernel). The expected text is Python's %-formatting of the same
    values, which follows C's for these conversions."""
    S = 'calls.ptx'
    fmt = "lane %d: %5u|%-4x|%s|%08X|%o|%c|%.3f|%e|%g|%ld|%llx|%%\n"

    def printf_all():
        out, path = R.out('u32', 4)
        p = R.run(S, 'printf_all', 1, 4, [out])
        want = ''.join(fmt.replace('%ld', '%d').replace('%llx', '%x') %
                       (t, t * 1000 + 7, t * 17, 'emu', 0xBEEF + t, 8 + t, 65 + t, t * 1.25, t * 12345.678,
                        (t + 1.0) * 0.0001, -t * 10000000000, 0x123456789ABCDEF0 + t) for t in range(4))
        if p.stdout != want:
            raise Fail('printed %r, expected %r' % (p.stdout[:300], want[:300]))
        compare(np.load(path), [12] * 4, [])
    R.case('printf through vprintf: d u x s X o c f e g ld llx %% with flags, width, precision, padding; returns 12',
           printf_all)

    def assertion():
        x = np.array([1, -2, 3, -4], np.int32)
        p = R.launch(S, 'assert_nonnegative', 1, 4, [R.inp(x)])
        one_error_line(p, 'thread (1,0,0): assertion `x >= 0` failed (calls.cu:42, in void check(int *))')
    R.case('__assertfail: the first thread whose assertion fails stops the kernel with one error line', assertion)

    def holds():
        R.run(S, 'assert_nonnegative', 1, 4, [R.inp(np.array([1, 0, 3, 7], np.int32))])
    R.case('an assertion that holds: the kernel runs to its end', holds)

    def percent_n():
        p = R.launch(S, 'printf_n', 1, 1, [])
        if p.returncode != 1 or "conversion '%n'" not in p.stderr:
            raise Fail('exit %d, stderr %r' % (p.returncode, p.stderr.strip()[:300]))
    R.case('printf with %n: an error naming the conversion, not a guess', percent_n)
    R.case('a call of a function the module does not declare is refused at load time, naming it',
           refused_at_load(R, 'call.uni my_function, ();', "call of 'my_function': no function of that name"))


def c_rem(a, b):
    """C's %: the remainder of the division truncated toward zero."""
    return int(math.fmod(a, b))


def s32(v):
    v &= M32
    return v - (1 << 32) if v >> 31 else v


def refused_module(R, text, words, line):
    """A case: ptxrun on a whole module exits 1 with one line naming PTX line `line` and saying `words`."""
    def run():
        path = R.path('refused').replace('.npy', '.ptx')
        with open(path, 'w') as f:
            f.write('.version 9.0\n.target sm_80\n.address_size 64\n' + text)
        p = R.launch(path, 'k', 1, 1, [])
        one_error_line(p, words, '.ptx:%d:' % line)
    return run


def nvcc_cases(R, rng, S, how):
    """The kernels of funcs.cu as nvcc compiled them (funcs.ptx: -O3; funcs_g.ptx: -G, no inlining, every
    value in local memory), checked against that C++ source's meaning."""
    x = np.concatenate([rng.integers(-300, 700, 28), [0, 1, -1, 3]]).astype(np.int32)

    def direct():
        o, po = R.out('s32', 160)
        f, pf = R.out('f32', 32)
        d, pd = R.out('f64', 32)
        R.run(S, 'direct_calls', 1, 32, [R.inp(x), o, f, d])
        out, t = np.load(po), range(32)
        compare(out.view(np.uint32)[:32], [int(x[i]) + i for i in t], [(x.view(np.uint32), 32)], what='add: ')
        compare(out.view(np.uint32)[32:64], [int(x[i]) & 0xffff for i in t], [(x.view(np.uint32), 32)],
                what='a struct returned, .lo: ')
        compare(out.view(np.uint32)[64:96], [(int(x[i]) & M32) >> 16 for i in t], [(x.view(np.uint32), 32)],
                what='a struct returned, .hi: ')
        compare(out.view(np.uint32)[96:160], [v for i in t for v in (int(x[i]), 2 * int(x[i]))],
                [(np.repeat(x, 2).view(np.uint32), 32)], what='a void function storing through a pointer: ')
        # x * b + a + c with b = t / 4 and small integers: exact in binary32, whatever the contraction
        want_f = np.array([float(x[i]) * (0.25 * i) + float(x[i]) + 0.5 for i in t], np.float32)
        compare(np.load(pf).view(np.uint32), [int(v) for v in want_f.view(np.uint32)], [(x.view(np.uint32), 32)],
                what='a float returned from a struct passed by value: ')
        want_d = (x.astype(np.float64) * 0.5).view(np.uint64)
        compare(np.load(pd).view(np.uint64), [int(v) for v in want_d], [(x.view(np.uint32), 32)], bits=64,
                what='a double returned: ')
    R.case(how + 'direct calls: .param arguments and return values, a struct by value, a struct/float/double returned, '
           'a void function', direct)

    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    def layered(n, k):
        below = layered(n - 1, k + 1) if n > 0 else 0
        return below + n * 10 + ((n + k) & 7)

    def recursion(env=None):
        def run():
            o, po = R.out('s32', 96)
            R.run(S, 'recursion', 1, 32, [R.inp(x), o], env=env)
            out = np.load(po).view(np.uint32)
            compare(out[:32], [math.factorial((int(v) & M32) % 13) & M32 for v in x], [(x.view(np.uint32), 32)],
                    what='factorial: ')
            compare(out[32:64], [fib(c_rem(int(v), 16)) for v in x], [(x.view(np.uint32), 32)], what='fibonacci: ')
            compare(out[64:96], [layered(c_rem(int(v), 8), i) for i, v in enumerate(x)], [(x.view(np.uint32), 32)],
                    what='a local array per activation: ')
        return run
    R.case(how + 'recursion: factorial, fibonacci (each lane its own depth), a .local array per activation', recursion())
    for seed in (1, 2):
        R.case(how + 'recursion, lanes run in random order (EMU_INTERLEAVE=%d): the same results' % seed,
               recursion({'EMU_INTERLEAVE': str(seed)}))

    def pointers():
        op = rng.integers(0, 5, 32).astype(np.int32)
        o, po = R.out('s32', 64)
        R.run(S, 'pointers', 1, 32, [R.inp(op), R.inp(x), o])
        out = np.load(po).view(np.uint32)
        fns = (lambda v: 2 * v, lambda v: 3 * v, lambda v: -v)
        compare(out[:32], [fns[int(op[i]) % 3](int(x[i])) for i in range(32)], [(op.view(np.uint32), 32)],
                what='a call table in global memory: ')
        compare(out[32:], [(3 if int(v) & 1 else 2) * int(v) for v in x], [(x.view(np.uint32), 32)],
                what='a selected pointer: ')
    R.case(how + 'indirect calls through a .callprototype: a call table of function names, a selected pointer', pointers)

    def divergent():
        o, po = R.out('s32', 64)
        R.run(S, 'divergent', 1, 32, [R.inp(x), o])
        out = np.load(po).view(np.uint32)
        want = [fib(c_rem(int(v), 12)) if int(v) & 1 else fib(c_rem(int(v), 9)) + 1000 for v in x]
        compare(out[:32], want, [(x.view(np.uint32), 32)], what='values: ')
    R.case(how + 'lanes calling from two call sites at different times, to different depths', divergent)

    def printing():
        v = (np.arange(8) * 1.5).astype(np.float32)
        p = R.run(S, 'printing', 1, 8, [R.inp(v)])
        want = sorted('thread %d says %.2f' % (t, v[t]) for t in range(1, 8, 2))
        if sorted(p.stdout.splitlines()) != want:
            raise Fail('printed %r, expected the lines %r' % (p.stdout[:300], want))
    R.case(how + 'printf inside a function (vprintf called from a .func)', printing)


def tests_functions(R, rng):
    """Device functions the compiler did not inline. PTX ISA 9.0, section 7.1 "Function Declarations and Definitions"
    (.func with (return values), parameters, prototypes before definitions), 5.1.6.4 "Device Function Parameters"
    (.param: read with ld.param, return values written with st.param; .reg), 9.7.12.5 "call" (direct, and indirect
    through a function's address with a .callprototype or .calltargets list; "Arguments are pass-by-value"; a
    target that does not match is undefined), 9.7.12.6 "ret" ("A divergent return suspends threads until all
    threads are ready to return to the caller"), 6.4.4 "Labels and Function Names as Operands" (mov of a function's
    name, a call table initialized with function names). funcs.ptx is nvcc's PTX of funcs.cu (the expectations are
    that C++ source's meaning); funcs_hand.ptx is written by hand for what nvcc does not emit."""
    H = 'funcs_hand.ptx'
    for S, how in (('funcs.ptx', ''), ('funcs_g.ptx', 'nvcc -G: ')):
        nvcc_cases(R, rng, S, how)

    xs = np.concatenate([rng.integers(0, 1 << 20, 24), [0, 1, 2, 3, 4, 5, 7, 8]]).astype(np.uint32)

    def reg_params():
        o, po = R.out('u32', 64)
        R.run(H, 'reg_params', 1, 32, [R.inp(xs), o])
        out = np.load(po)
        compare(out[:32], [int(v) * 7 + 3 for v in xs], [(xs, 32)], what='madd: ')
        compare(out[32:], [math.gcd(int(v), 84) for v in xs], [(xs, 32)], what='gcd: ')
    R.case('.reg parameters and return value, an immediate argument; a recursive gcd defined after the kernel', reg_params)

    def targets():
        o, po = R.out('u32', 32)
        R.run(H, 'targets', 1, 32, [R.inp(xs), o])
        compare(np.load(po), [(3 if v & 1 else 2) * int(v) for v in xs], [(xs, 32)])
    R.case('an indirect call through mov of a function name and a .calltargets list', targets)

    def steps(n):
        if n < 4:
            return 100
        s = 0
        while n >= 4:
            s, n = s + 1, n >> 1
        return s

    def divergent_ret():
        o, po = R.out('u32', 128)
        R.run(H, 'divergent_ret', 1, 32, [R.inp(xs), o])
        out = np.load(po)
        compare(out[:32], [steps(int(v)) for v in xs], [(xs, 32)], what='steps: ')
        compare(out[32:64], [M32] * 32, [(xs, 32)], what='the active mask right after the call: ')
        compare(out[64:96], [steps(int(v) + 64) if i & 1 else 7 for i, v in enumerate(xs)], [(xs, 32)],
                what='a guarded call: ')
        compare(out[96:], [M32] * 32, [(xs, 32)], what='the active mask after the guarded call: ')
    R.case('divergent rets (two rets, different paths): every lane is back after the call; a guarded call',
           divergent_ret)

    def exit_inside():
        o, po = R.out('u32', 32)
        R.run(H, 'exit_inside', 1, 32, [o])
        compare(np.load(po), [1 if t >= 16 else 2 for t in range(32)], [])
    R.case('exit inside a function ends the thread', exit_inside)

    def barrier_inside():
        v = rng.integers(0, 1 << 30, 64).astype(np.uint32)
        o, po = R.out('u32', 64)
        R.run(H, 'barrier_inside', 1, 64, [R.inp(v), o])
        compare(np.load(po), [int(v[t ^ 32]) for t in range(64)], [(v, 32)])
    R.case('bar.sync inside a function, on a module-scope .shared array', barrier_inside)

    def handed_over():
        ptr, pp = R.out('u64', 1)
        R.run(H, 'store_pointer', 1, 1, [ptr])
        o, po = R.out('u32', 32)
        R.run(H, 'call_stored', 1, 32, [R.inp(np.load(pp)), o])
        compare(np.load(po), [2 * t for t in range(32)], [])
    R.case("a function's address stored by one kernel and called through by another", handed_over)

    def link_budget():
        # one function of 4,000 instructions reached by 1,000 kernels: 20 million tokens read into kernels
        path = R.path('budget').replace('.npy', '.ptx')
        lines = ['.version 9.0', '.target sm_80', '.address_size 64', '.func f ()', '{', '  .reg .b32 %s<2>;']
        lines += ['  add.u32 %s1, %s1, 1;'] * 4000 + ['  ret;', '}']
        for i in range(1000):
            lines += ['.visible .entry k%d()' % i, '{', '  call.uni f, ();', '  ret;', '}']
        with open(path, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        p = R.launch(path, 'k0', 1, 1, [], timeout=60)
        one_error_line(p, 'more than 16777216 tokens')
    R.case('functions read into many kernels past the limit: one line, not a quadratic parse', link_budget)

    def counters():
        # targets: 10 instructions, the call, each half of the warp's callee (2 instructions: one group each),
        # 3 more; control: the call, the two groups' rets, the kernel's ret (Nsight's smsp__inst_executed counts
        # each group a diverged warp issues)
        o, _ = R.out('u32', 32)
        p = R.run(H, 'targets', 1, 32, ['--counters', R.inp(xs), o])
        text = p.stdout + p.stderr
        want = '18 warp instructions, %d thread instructions' % (10 * 32 + 32 + 4 * 16 + 3 * 32)
        if want not in text or 'control %.1f%%' % (100.0 * 4 / 18) not in text:
            raise Fail('expected %r and control %.1f%% in %r' % (want, 100.0 * 4 / 18, text[:500]))
    R.case('counters: call and ret are control instructions, counted per lane group like branches', counters)

    def error(kernel, words, thread='0,0,0'):
        def run():
            p = R.launch(H, kernel, 1, 32, [])
            one_error_line(p, words, 'kernel %s, PTX line' % kernel, 'thread (%s)' % thread)
        return run
    R.case('an indirect call through the address of a variable: an error naming the thread',
           error('bad_pointer', 'not the address of a function of the module'))
    R.case('an indirect call of a function not in its .calltargets list: an error',
           error('not_listed', "not in the call's .calltargets list"))
    R.case("an indirect call of a function whose parameters are not the prototype's: an error",
           error('wrong_prototype', "whose parameters are not the call's prototype"))
    R.case('a runaway recursion (thread 5 only) is a stack overflow naming the thread and the limit',
           error('runaway', 'stack overflow', '5,0,0'))

    k = '.visible .entry k()\n{\n'
    R.case('a call of a function declared and never defined is refused at load time',
           refused_module(R, '.func f ();\n' + k + '  call.uni f, ();\n  ret;\n}\n', 'declares it but does not define', 7))
    R.case('a call with fewer arguments than the function has parameters is refused at load time',
           refused_module(R, '.func f (.param .b32 a)\n{\n  ret;\n}\n' + k + '  call.uni f, ();\n  ret;\n}\n',
                          'takes 0 return value(s) and 1 parameter(s)', 10))
    R.case('a .param argument of another size than the parameter is refused at load time',
           refused_module(R, '.func f (.param .b32 a)\n{\n  ret;\n}\n' + k +
                          '  {\n  .param .b64 p;\n  call.uni f, (p);\n  }\n  ret;\n}\n', 'has 4 bytes', 12))
    R.case('a function defined twice is refused at load time',
           refused_module(R, '.func f ()\n{\n  ret;\n}\n.func f ()\n{\n  ret;\n}\n', 'defined twice', 8))
    R.case('a definition that disagrees with the declaration before it is refused at load time',
           refused_module(R, '.func f (.param .b32 a);\n.func f (.param .b64 a)\n{\n  ret;\n}\n', 'another signature', 5))
    R.case('an .extern .func other than the runtime\'s is refused at load time (no separate compilation)',
           refused_module(R, '.extern .func g ();\n', 'separate compilation', 4))
    R.case('a .shared variable declared inside a function is refused at load time',
           refused_module(R, '.func f ()\n{\n  .shared .b32 s;\n  ret;\n}\n' + k + '  call.uni f, ();\n  ret;\n}\n',
                          'declared in function', 6))
    R.case('a .calltargets naming something that is not a function is refused at load time',
           refused_module(R, k + '  .reg .b64 %rd<2>;\nL: .calltargets nothing;\n  ret;\n}\n', 'no function declared', 7))
    R.case('an indirect call without a list of targets is refused at load time',
           refused_module(R, k + '  .reg .b64 %rd<2>;\n  call %rd1, ();\n  ret;\n}\n', 'needs a .callprototype', 7))


def tests_carry(R, rng):
    """PTX ISA 9.0, "Extended-Precision Integer Arithmetic Instructions": add.cc / addc / sub.cc / subc / mad.cc /
    madc. CC.CF is one bit per thread: the .cc forms write the carry out (for sub, the borrow out), the c forms add
    it in (subc subtracts it). Chained over words they are multi-word arithmetic, which is what is checked: each
    kernel in carry.ptx computes a 128- or 64-bit result word by word, then reads the last CC.CF back."""
    S = 'carry.ptx'
    n = 256

    def edge_words(bits):
        top = (1 << bits) - 1
        return [0, 1, top, top - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1]

    def operands(bits):
        """n pairs of 128-bit numbers as words of `bits`, the first ones made of edge words (all ones, carries that
        ripple through every word, borrows likewise), the rest random."""
        per = 128 // bits
        edge = edge_words(bits)
        a = [[edge[(i + j) % len(edge)] for j in range(per)] for i in range(36)]
        b = [[edge[(i // 6 + j) % len(edge)] for j in range(per)] for i in range(36)]
        # a carry (a borrow) that enters words whose sum is all ones (whose difference is zero) and so must
        # leave them again: 0x..ff + 1 and 0x..00 - 1 across every word
        top = (1 << bits) - 1
        a += [[top] * per, [0] * per, [0] + [7] * (per - 1), [top] + [0] * (per - 1)]
        b += [[1] + [0] * (per - 1), [1] + [0] * (per - 1), [1] + [7] * (per - 1), [1] + [top] * (per - 1)]
        a += [[int(x) for x in rng.integers(0, 1 << bits, per, dtype=np.uint64)] for _ in range(n - len(a))]
        b += [[int(x) for x in rng.integers(0, 1 << bits, per, dtype=np.uint64)] for _ in range(n - len(b))]
        return a, b

    def number(words, bits):
        return sum(w << (bits * j) for j, w in enumerate(words))

    def launch(kernel, a, b, bits):
        dtype = np.uint64 if bits == 64 else np.uint32
        out, path = R.out('u64' if bits == 64 else 'u32', n * (256 // bits))
        R.run(S, kernel, (n + 127) // 128, 128, [R.inp(np.array(a, dtype).ravel()), R.inp(np.array(b, dtype).ravel()),
                                                 out, 'u32:%d' % n])
        return np.load(path).view(dtype).reshape(n, 256 // bits)

    def check(got, want, what):
        bad = [i for i in range(n) if [int(x) for x in got[i][:len(want[i])]] != want[i]]
        if bad:
            i = bad[0]
            raise Fail('%d of %d wrong; %s: got %s, expected %s' % (len(bad), n, what(i), [hex(int(x)) for x in got[i][:len(want[i])]],
                                                                   [hex(x) for x in want[i]]))

    def add128(kernel, bits):
        def run():
            a, b = operands(bits)
            got = launch(kernel, a, b, bits)
            per = 128 // bits
            want = []
            for x, y in zip(a, b):
                total = number(x, bits) + number(y, bits)
                want.append([(total >> (bits * j)) & ((1 << bits) - 1) for j in range(per)] + [total >> 128])
            check(got, want, lambda i: 'a %s + b %s' % (hex(number(a[i], bits)), hex(number(b[i], bits))))
        return run
    R.case('add.cc, addc.cc, addc: 128-bit sums of u32 words, the carry rippling through all four', add128('add128_u32', 32))
    R.case('add.cc.u64, addc.cc.u64, addc.u64: 128-bit sums of u64 words', add128('add128_u64', 64))

    def sub128():
        a, b = operands(32)
        got = launch('sub128_s32', a, b, 32)
        want = []
        for x, y in zip(a, b):
            difference = (number(x, 32) - number(y, 32)) % (1 << 128)
            borrow = number(x, 32) < number(y, 32)
            want.append([(difference >> (32 * j)) & M32 for j in range(4)] + [M32 if borrow else 0])
        check(got, want, lambda i: 'a %s - b %s' % (hex(number(a[i], 32)), hex(number(b[i], 32))))
    R.case('sub.cc.s32, subc.cc.s32, subc.s32: 128-bit differences, the borrow out as 0 - CC.CF', sub128)

    def mad_wide(kernel, signed):
        def run():
            a, b = operands(32)  # A's words are the product's a and b and the addend's two words; B is unused
            got = launch(kernel, a, b, 32)
            want = []
            for a_, b_, c0, c1 in a:
                product = (s32(a_) * s32(b_) if signed else a_ * b_) % (1 << 64)
                low = (product & M32) + c0                      # mad.lo.cc: t<31..0> + c0, the carry out
                high = (product >> 32) + c1 + (low >> 32)       # madc.hi.cc: t<63..32> + c1 + CC.CF
                want.append([low & M32, high & M32, 0, 0, high >> 32])
            check(got, want, lambda i: 'a, b, c0, c1 = %s' % [hex(x) for x in a[i]])
        return run
    R.case('mad.lo.cc.u32, madc.hi.cc.u32: a * b + c in 64 bits, and its carry out', mad_wide('mad_wide_u32', False))
    R.case('mad.lo.cc.s32, madc.hi.cc.s32: the signed product\'s words', mad_wide('mad_wide_s32', True))

    def before_cc():
        a, b = operands(32)
        out, _ = R.out('u32', n * 8)
        p = R.launch(S, 'addc_before_cc', 1, 32, [R.inp(np.array(a, np.uint32).ravel()),
                                                  R.inp(np.array(b, np.uint32).ravel()), out, 'u32:32'])
        one_error_line(p, 'addc reads CC.CF', 'addc_before_cc')
    R.case('addc before any .cc instruction: CC.CF has no value, an error in one line', before_cc)

    # "add.cc.type / mad{.hi,.lo}.cc.type: .type = { .u32, .s32, .u64, .s64 }": anything else fails at load time
    R.case('mul.cc is refused at load time',
           refused_at_load(R, 'mul.lo.cc.u32 %r2, %r1, %r1;', '.cc is for add, sub and mad'))
    R.case('add.cc.u16 is refused at load time',
           refused_at_load(R, 'add.cc.u16 %h2, %h1, %h1;', 'takes .u32, .s32, .u64 or .s64'))
    R.case('mad.cc without .hi or .lo is refused at load time',
           refused_at_load(R, 'mad.cc.u32 %r2, %r1, %r1, %r1;', 'mad takes .hi or .lo'))


def tests_b128(R, rng):
    """PTX ISA 9.0, "ld", "st", "mov" with .b128 (PTX ISA 8.3, sm_70 or higher): a .b128 register moves 16 bytes at
    a 16-byte aligned address ("Addresses as Operands": naturally aligned), and mov packs or unpacks it as two .b64
    or four .b32 parts, the first element the lowest bits (the semantics "mov" gives its vector forms, d = a.x |
    a.y << 32 | ...). Each 16-byte value below is checked as those rules make it of A's words."""
    S = 'b128.ptx'
    threads = 64

    def moves():
        a = rng.integers(0, 1 << 32, threads * 4, dtype=np.uint64).astype(np.uint32)
        a[:8] = [0, M32, 0x80000000, 1, M32, M32, M32, M32]  # all-ones halves and the sign bits, carried whole
        out, path = R.out('u32', threads * 16)
        R.run(S, 'b128_moves', 1, threads, [R.inp(a), out])
        got = np.load(path).view(np.uint32).reshape(threads, 16)
        words = a.reshape(threads, 4)  # thread t's four words, lowest first
        for t in range(threads):
            w = [int(x) for x in words[t]]
            nxt = [int(x) for x in words[(t + 1) % threads]]
            want = w[2:4] + w[0:2] + w[::-1] + w + nxt
            if [int(x) for x in got[t]] != want:
                raise Fail('thread %d: got %s, expected %s' % (t, [hex(int(x)) for x in got[t]], [hex(x) for x in want]))
    R.case('ld/st.global.b128 and ld/st.shared.b128; mov.b128 unpacking into and packing from two .b64 and four '
           '.b32 parts, and a plain copy', moves)

    def misaligned():
        a = np.zeros(8, np.uint32)
        out, _ = R.out('u32', 4)
        p = R.launch(S, 'b128_misaligned', 1, 1, [R.inp(a), out])
        one_error_line(p, 'align', 'b128_misaligned')
    R.case('ld.global.b128 at an 8-byte aligned address: an error in one line', misaligned)

    # "Fundamental Types" lists where .b128 goes; a .b128 register elsewhere, and a vector of .b128, fail at load
    R.case('a .b128 register as an add operand is refused at load time',
           refused_at_load(R, '.reg .b128 %q<2>; add.u32 %r2, %q1, 1;', 'a .b128 register is an operand of ld, st'))
    R.case('ld.v2.b128 is refused at load time',
           refused_at_load(R, 'ld.global.v2.b128 {%r1, %r2}, [%r1];', '.b128 does not come in vectors'))


def tests_setp(R, rng):
    S = 'setp.ptx'
    sp = [f32b(v) for v in [0.0, -0.0, 1.0, -1.0, 2.5, float('inf'), float('-inf')]] + [0x7FC00000, 0xFFC00000, 0x7F800001,
                                                                                         0x00000001, 0x80000001]
    a = [x for x in sp for _ in sp] + rand_f32(rng, 100)
    b = [y for _ in sp for y in sp] + rand_f32(rng, 50) + [0] * 50
    b[-50:] = a[-50:]          # equal pairs
    A, B = np.array(a, np.uint32), np.array(b, np.uint32)
    for op in ('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'equ', 'neu', 'ltu', 'leu', 'gtu', 'geu', 'num', 'nan'):
        def run(op=op):
            p, q = R.elem(S, 'setp_%s_f32' % op, [A, B], ['u32', 'u32'])
            e = [1 if fcmp(op, bf32(int(x)), bf32(int(y))) else 0 for x, y in zip(A, B)]
            compare(p, e, [(A, 32), (B, 32)], what='p: ')
            compare(q, [1 - v for v in e], [(A, 32), (B, 32)], what='q: ')
        R.case('setp.%s.f32 p|q (NaN, +-0, inf, subnormal operands)' % op, run)
    spd = [f64b(v) for v in [0.0, -0.0, 1.0, -1.0, float('inf')]] + [0x7FF8000000000000, 0x7FF0000000000001]
    Ad = np.array([x for x in spd for _ in spd], np.uint64)
    Bd = np.array([y for _ in spd for y in spd], np.uint64)
    for op in ('eq', 'lt', 'gtu', 'nan'):
        def run(op=op):
            p, = R.elem(S, 'setp_%s_f64' % op, [Ad, Bd], ['u32'])
            compare(p, [1 if fcmp(op, bf64(int(x)), bf64(int(y))) else 0 for x, y in zip(Ad, Bd)], [(Ad, 64), (Bd, 64)])
        R.case('setp.%s.f64' % op, run)
    # "Integer and Bit-Size Comparisons"
    ia = [0, 1, M32, 0x7FFFFFFF, 0x80000000, 5]
    IA = np.array([x for x in ia for _ in ia], np.uint32)
    IB = np.array([y for _ in ia for y in ia], np.uint32)
    for op, t, fn in [('lt', 's32', lambda x, y: s32(x) < s32(y)), ('lo', 'u32', lambda x, y: x < y),
                      ('ge', 's32', lambda x, y: s32(x) >= s32(y)), ('hs', 'u32', lambda x, y: x >= y),
                      ('gt', 'u32', lambda x, y: x > y)]:
        def run(op=op, t=t, fn=fn):
            p, = R.elem(S, 'setp_%s_%s' % (op, t), [IA, IB], ['u32'])
            compare(p, [1 if fn(int(x), int(y)) else 0 for x, y in zip(IA, IB)], [(IA, 32), (IB, 32)])
        R.case('setp.%s.%s' % (op, t), run)
    # BoolOp form: p = BoolOp(t, c), q = BoolOp(!t, c)
    C = np.array([int(v) for v in rng.integers(0, 2, len(A))], np.uint32)

    def boolop(kern, cmp, bop, negc, desc):
        def run():
            p, q = R.elem(S, kern, [A, B, C], ['u32', 'u32'])
            ep, eq = [], []
            for x, y, c in zip(A, B, C):
                t = fcmp(cmp, bf32(int(x)), bf32(int(y)))
                cv = (not c) if negc else bool(c)
                ep.append(1 if bop(t, cv) else 0)
                eq.append(1 if bop(not t, cv) else 0)
            compare(p, ep, [(A, 32), (B, 32), (C, 32)], what='p: ')
            compare(q, eq, [(A, 32), (B, 32), (C, 32)], what='q: ')
        R.case(desc, run)
    boolop('setp_lt_and_f32', 'lt', lambda t, c: t and c, False, 'setp.lt.and.f32 p|q, a, b, c')
    boolop('setp_ge_or_not_f32', 'ge', lambda t, c: t or c, True, 'setp.ge.or.f32 p|q, a, b, !c')
    # "Comparison and Selection Instructions: selp": d = c ? a : b
    for kern in ('selp_b32', 'selp_f32'):
        def run(kern=kern):
            d, = R.elem(S, kern, [A, B, C], ['u32'])
            compare(d, [int(x) if c else int(y) for x, y, c in zip(A, B, C)], [(A, 32), (B, 32), (C, 32)])
        R.case(kern.replace('_', '.') + ' d, a, b, c', run)

    # "Floating Point Instructions: min / max": NaN inputs are ignored unless both are NaN (.NaN: any NaN input gives
    # a NaN); with two zeros, -0.0 < +0.0
    def mm(op, x, y, nanmode, width):
        isn = is_nan32 if width == 32 else is_nan64
        fx, fy = (bf32(x), bf32(y)) if width == 32 else (bf64(x), bf64(y))
        if isn(x) and isn(y) or (nanmode and (isn(x) or isn(y))):
            return nan_check(0, width)
        if isn(x):
            return y
        if isn(y):
            return x
        if fx == 0 and fy == 0:
            neg = (x >> (width - 1)) & 1, (y >> (width - 1)) & 1
            if op == 'min':
                return x if neg[0] else y
            return y if neg[0] else x
        return (x if fx < fy else y) if op == 'min' else (x if fx > fy else y)
    for op in ('min', 'max'):
        for nanmode in (False, True):
            def run(op=op, nanmode=nanmode):
                d, = R.elem(S, '%s%s_f32' % (op, '_NaN' if nanmode else ''), [A, B], ['u32'])
                compare(d, [mm(op, int(x), int(y), nanmode, 32) for x, y in zip(A, B)], [(A, 32), (B, 32)])
            R.case('%s%s.f32 (NaN operands, +0/-0)' % (op, '.NaN' if nanmode else ''), run)

        def run(op=op):
            d, = R.elem(S, '%s_f64' % op, [Ad, Bd], ['u64'])
            compare(d, [mm(op, int(x), int(y), False, 64) for x, y in zip(Ad, Bd)], [(Ad, 64), (Bd, 64)], 64)
        R.case('%s.f64 (NaN operands, +0/-0)' % op, run)


# ------------------------------------------------------------------ vote / activemask / redux / match
def tests_vote(R, rng):
    S = 'vote.ptx'

    def data(kind):
        if kind == 'random':
            x = rng.integers(0, 2, 32).astype(np.uint32)
        elif kind == 'all':
            x = np.full(32, 3, np.uint32)
        else:
            x = np.zeros(32, np.uint32)
        v = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
        m = rng.integers(1, 5, 32).astype(np.uint32)
        return x, v, m

    def red(vals, op):
        if op == 'add':
            return sum(vals) & M32
        if op == 'mins':
            return min(s32(v) for v in vals) & M32
        if op == 'maxs':
            return max(s32(v) for v in vals) & M32
        if op == 'minu':
            return min(vals)
        if op == 'maxu':
            return max(vals)
        r = {'and': M32, 'or': 0, 'xor': 0}[op]
        for v in vals:
            r = r & v if op == 'and' else (r | v if op == 'or' else r ^ v)
        return r

    for kind in ('random', 'all', 'none'):
        def run(kind=kind):
            x, v, m = data(kind)
            o, p = R.out('u32', 32 * 16)
            R.run(S, 'vote_warp', 1, 32, [R.inp(x), R.inp(v), R.inp(m), o])
            got = np.load(p).view(np.uint32).reshape(32, 16)
            pr = [int(t) != 0 for t in x]
            vals = [int(t) for t in v]
            ballot = sum(1 << l for l in range(32) if pr[l])
            errs = []
            for l in range(32):
                exp = {0: int(all(pr)), 1: int(any(pr)), 2: int(all(pr) or not any(pr)), 3: ballot, 4: ballot ^ M32,
                       7: red(vals, 'add'), 8: red(vals, 'mins'), 9: red(vals, 'maxs'), 10: red(vals, 'minu'),
                       11: red(vals, 'maxu'), 12: red(vals, 'and'), 13: red(vals, 'or'), 14: red(vals, 'xor'),
                       15: sum(1 << j for j in range(32) if m[j] == m[l])}
                names = ['vote.all', 'vote.any', 'vote.uni', 'ballot(p)', 'ballot(!p)', 'activemask', 'activemask',
                         'redux.add.u32', 'redux.min.s32', 'redux.max.s32', 'redux.min.u32', 'redux.max.u32',
                         'redux.and', 'redux.or', 'redux.xor', 'match.any']
                for k, e in exp.items():
                    if int(got[l][k]) != e:
                        errs.append('lane %d %s: expected %s got %s' % (l, names[k], hx(e), hx(got[l][k])))
                # "activemask": bit i set iff lane i is active -> the own bit is set, and inside the branch only
                # lanes that took the same side can be active
                same = sum(1 << j for j in range(32) if pr[j] == pr[l])
                for k in (5, 6):
                    if not (int(got[l][k]) >> l) & 1:
                        errs.append('lane %d activemask (word %d) %s lacks its own bit' % (l, k, hx(got[l][k])))
                if int(got[l][6]) & ~same:
                    errs.append('lane %d activemask in branch %s has lanes of the other side (%s)' % (l, hx(got[l][6]), hx(same)))
            if errs:
                raise Fail('%d wrong; %s' % (len(errs), '; '.join(errs[:4])))
        R.case('vote.sync all/any/uni/ballot, activemask, redux.sync add/min/max/and/or/xor, match.any (%s predicates)'
               % kind, run)

    for kind in ('different', 'equal'):
        def mall(kind=kind):
            m = rng.integers(1, 5, 32).astype(np.uint32) if kind == 'different' else np.full(32, 9, np.uint32)
            o, p = R.out('u32', 32 * 4)
            R.run('match_all.ptx', 'match_all', 1, 32, [R.inp(m), o])
            got = np.load(p).view(np.uint32).reshape(32, 4)
            same = len(set(m.tolist())) == 1
            exp = [M32 if same else 0, int(same), M32, 1]
            errs = ['lane %d word %d: expected %s got %s' % (l, k, hx(exp[k]), hx(got[l][k]))
                    for l in range(32) for k in range(4) if int(got[l][k]) != exp[k]]
            if errs:
                raise Fail('%d wrong; %s' % (len(errs), '; '.join(errs[:4])))
        R.case('match.all.sync.b32 d|p (%s values)' % kind, mall)

    def exited():
        x, v, m = data('random')
        x[:16] = 1
        x[20] = 0                 # an exited lane with a false predicate must not matter
        x[3] = 1
        o, p = R.out('u32', 32 * 8)
        R.run(S, 'vote_exited', 1, 32, [R.inp(x), R.inp(v), R.inp(m), o])
        got = np.load(p).view(np.uint32).reshape(32, 8)
        act = range(16)
        pr = [int(x[l]) != 0 for l in act]
        vals = [int(v[l]) for l in act]
        errs = []
        for l in act:
            exp = [int(all(pr)), int(any(pr)), int(all(pr) or not any(pr)), sum(1 << j for j in act if pr[j]),
                   red(vals, 'add'), sum(1 << j for j in act if m[j] == m[l]), red(vals, 'maxu'), int(all(pr))]
            for k in range(8):
                if int(got[l][k]) != exp[k]:
                    errs.append('lane %d word %d: expected %s got %s' % (l, k, hx(exp[k]), hx(got[l][k])))
        if errs:
            raise Fail('%d wrong; %s' % (len(errs), '; '.join(errs[:4])))
    R.case('vote/redux/match with membermask 0xffffffff after lanes 16-31 exited (only non-exited threads count)', exited)

    def split():
        x, v, m = data('random')
        o, p = R.out('u32', 32 * 4)
        R.run(S, 'vote_split', 1, 32, [R.inp(x), R.inp(v), R.inp(m), o])
        got = np.load(p).view(np.uint32).reshape(32, 4)
        errs = []
        for l in range(32):
            grp = [j for j in range(32) if j % 2 == l % 2]
            exp = [sum(1 << j for j in grp if x[j]), red([int(v[j]) for j in grp], 'add'),
                   sum(1 << j for j in grp if m[j] == m[l]), int(any(x[j] for j in grp))]
            for k in range(4):
                if int(got[l][k]) != exp[k]:
                    errs.append('lane %d word %d: expected %s got %s' % (l, k, hx(exp[k]), hx(got[l][k])))
        if errs:
            raise Fail('%d wrong; %s' % (len(errs), '; '.join(errs[:4])))
    R.case('vote/redux/match in divergent halves with membermask 0x55555555 / 0xaaaaaaaa', split)


# ------------------------------------------------------------------ barriers and atomics
def tests_bar_atom(R, rng):
    S = 'bar_atom.ptx'

    def atom_add_subnormal():
        # a = 2^-130, b = 3 * 2^-130: both subnormal in f32, and so is their sum 2^-128
        a, b = f32b(2.0 ** -130), f32b(3 * 2.0 ** -130)
        ab = np.array([a, b], dtype=np.uint32)
        g, g_out = R.inout(np.array([b], dtype=np.uint32))
        o, p = R.out('u32', 3)
        R.run(S, 'atom_add_f32_subnormal', 1, 1, [R.inp(ab), g, o])
        got = list(np.load(p).view(np.uint32)) + list(np.load(g_out).view(np.uint32))
        # global: inputs and result flushed (+0); shared: the exact subnormal sum; the old value as it was
        compare(np.array(got[:3], dtype=np.uint32), [0x00000000, f32b(2.0 ** -128), b], [(ab, 32)])
    R.case('atom.add.f32: global flushes subnormal inputs and results, shared keeps them', atom_add_subnormal)

    def cas_b16():
        buf = np.array([0xAAAA, 0xBBBB, 0x1234], dtype=np.uint16)
        g, g_out = R.inout(buf.view(np.float16))
        o, p = R.out('f16', 2)
        R.run(S, 'atom_cas_b16', 1, 1, [g, o])
        got = list(np.load(p).view(np.uint16)) + list(np.load(g_out).view(np.uint16))
        compare(np.array(got, dtype=np.uint32), [0x1234, 0xBEEF, 0xAAAA, 0xBBBB, 0xBEEF], [(np.arange(5), 16)])
    R.case('atom.cas.b16 on the last halfword of a buffer: swaps when equal, returns the old 16 bits', cas_b16)

    def rotate():
        a = rng.integers(0, 1 << 30, 128).astype(np.uint32)
        o, p = R.out('u32', 256)
        R.run(S, 'bar_rotate', 1, 128, [R.inp(a), o])
        got = np.load(p).view(np.uint32)
        x = [int(a[(t + 37) % 128]) for t in range(128)]
        exp = x + [(3 * x[127 - t] + (127 - t)) & M32 for t in range(128)]
        compare(got, exp, [(np.arange(256), 32)])
    R.case('bar.sync 0 with 4 warps exchanging through shared memory (3 barriers)', rotate)

    def reduce_():
        a = rng.integers(0, 1 << 32, 256, dtype=np.uint64).astype(np.uint32)
        o, p = R.out('u32', 1)
        R.run(S, 'bar_reduce', 1, 256, [R.inp(a), o])
        compare(np.load(p).view(np.uint32), [int(a.astype(np.uint64).sum()) & M32], [(np.zeros(1), 32)])
    R.case('bar.sync in a loop: tree reduction over 8 warps', reduce_)

    def named():
        a = rng.integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)
        o, p = R.out('u32', 128)
        R.run(S, 'bar_named', 1, 128, [R.inp(a), o])
        exp = []
        for t in range(128):
            base = 0 if t < 64 else 64
            exp.append(int(a[base + (t - base + 1) % 64]))
        compare(np.load(p).view(np.uint32), exp, [(np.arange(128), 32)])
    R.case('bar.sync a, b with register barrier ids 1/2 and 64 threads each', named)

    def arrive():
        a = rng.integers(0, 1 << 30, 32).astype(np.uint32)
        o, p = R.out('u32', 32)
        R.run(S, 'bar_arrive', 1, 64, [R.inp(a), o])
        compare(np.load(p).view(np.uint32), [(2 * int(a[31 - l]) + 1) & M32 for l in range(32)], [(np.arange(32), 32)])
    R.case('bar.arrive 3, 64 (producer warp) / bar.sync 3, 64 (consumer warp)', arrive)

    for kind in ('random', 'all ones'):
        def red(kind=kind):
            a = (rng.integers(0, 4, 96) if kind == 'random' else np.ones(96)).astype(np.uint32)
            o, p = R.out('u32', 96 * 3)
            R.run(S, 'bar_red', 1, 96, [R.inp(a), o])
            pr = [int(v) & 1 for v in a]
            exp = [sum(pr), int(all(pr)), int(any(pr))] * 96
            compare(np.load(p).view(np.uint32), exp, [(np.arange(288), 32)])
        R.case('bar.red.popc.u32 / bar.red.and.pred / bar.red.or.pred over 3 warps (%s)' % kind, red)

    def glob():
        grid, block = 4, 64
        n = grid * block
        v = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        fv = rng.integers(-50, 51, n).astype(np.float32)
        c0 = np.array([100, 0xDEAD, 0, 0, 0, M32, 5, 1000, 0, 0], np.uint32)
        d0 = np.array([1 << 40], np.uint64)
        ca, cp = R.inout(c0)
        da, dp = R.inout(d0)
        oa, op = R.out('u32', 2 * n)
        R.run(S, 'atom_global', grid, block, [ca, da, R.inp(v), R.inp(fv), oa])
        c = np.load(cp).view(np.uint32)
        d = np.load(dp).view(np.uint64)
        old = np.load(op).view(np.uint32).reshape(n, 2)
        vs = [int(t) for t in v]
        exp = [100 + n, None, min(0, min(s32(t) for t in vs)) & M32, max(0, max(s32(t) for t in vs)) & M32, max(vs),
               min(vs), (5 + sum(vs)) & M32, 1000 + 2 * n, n % 10, f32b(float(fv.astype(np.float64).sum()))]
        names = ['add 1', 'exch', 'min.s32', 'max.s32', 'max.u32', 'min.u32', 'add.u32', 'cas loop +2', 'inc limit 9',
                 'add.f32']
        errs = ['c[%d] (%s): expected %s got %s' % (k, names[k], hx(e), hx(c[k])) for k, e in enumerate(exp)
                if e is not None and int(c[k]) != e]
        if sorted(int(t) for t in old[:, 0]) != list(range(100, 100 + n)):
            errs.append('atom.add olds are not a permutation of 100..%d' % (100 + n - 1))
        if sorted([int(t) for t in old[:, 1]] + [int(c[1])]) != sorted([0xDEAD] + list(range(n))):
            errs.append('atom.exch olds + final value are not {0xdead} + all thread ids')
        if int(d[0]) != ((1 << 40) + sum(vs)) & M64:
            errs.append('add.u64: expected %s got %s' % (hx((1 << 40) + sum(vs), 64), hx(d[0], 64)))
        if errs:
            raise Fail('; '.join(errs[:5]))
    R.case('atom.global add/exch/min/max (.s32,.u32)/cas loop/inc/add.f32/add.u64 from 4 blocks', glob)

    def shared():
        o, p = R.out('u32', 2 + 200)
        R.run(S, 'atom_shared', 1, 200, [o])
        got = np.load(p).view(np.uint32)
        errs = []
        if int(got[0]) != 200:
            errs.append('atom.shared.add count: expected 200 got %d' % got[0])
        if int(got[1]) != 200 * 201 // 2:
            errs.append('atom.shared.cas sum: expected %d got %d' % (200 * 201 // 2, got[1]))
        if sorted(int(t) for t in got[2:]) != list(range(200)):
            errs.append('atom.shared.add olds are not a permutation of 0..199')
        if errs:
            raise Fail('; '.join(errs))
    R.case('atom.shared add / cas loop, 200 threads', shared)


# ---- half precision: fma, min, max ("Half Precision Floating-Point Instructions: fma", "Half Precision
# Comparison Instructions: min, max") ------------------------------------------------------------------
# f16: 11 significant bits, exponents -14..15; bf16: 8 significant bits, exponents -126..127.
HALF_FORMATS = {'f16': (11, -14, 15, 5), 'bf16': (8, -126, 127, 8)}
NAN16 = 0x7FFF  # the canonical f16 and bf16 NaN


def half_value(bits, fmt):
    """A finite half's exact value as a Fraction (None for Inf/NaN)."""
    p, emin, emax, ebits = HALF_FORMATS[fmt]
    man_bits = p - 1
    sign = -1 if bits & 0x8000 else 1
    e = (bits >> man_bits) & ((1 << ebits) - 1)
    man = bits & ((1 << man_bits) - 1)
    if e == (1 << ebits) - 1:
        return None
    if e == 0:
        return sign * Fraction(man, 1 << man_bits) * Fraction(2) ** emin
    return sign * (1 + Fraction(man, 1 << man_bits)) * Fraction(2) ** (e - ((1 << (ebits - 1)) - 1))


def half_round(q, fmt, negative_zero=False):
    """The exact rational q rounded once to nearest-even in the format, as bits."""
    p, emin, emax, ebits = HALF_FORMATS[fmt]
    bias = (1 << (ebits - 1)) - 1
    sign = 0x8000 if q < 0 or (q == 0 and negative_zero) else 0
    a = abs(q)
    if a == 0:
        return sign
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    quantum = Fraction(2) ** (e - (p - 1))
    n = a / quantum
    whole = n.numerator // n.denominator
    rest = n - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2):
        whole += 1
    if whole == 1 << p:
        whole, e = whole >> 1, e + 1
    if e > emax:
        return sign | (((1 << ebits) - 1) << (p - 1))  # infinity
    if whole < 1 << (p - 1):
        return sign | whole  # subnormal (e == emin)
    return sign | ((e + bias) << (p - 1)) | (whole - (1 << (p - 1)))


def half_is_subnormal(bits, fmt):
    p, _, _, ebits = HALF_FORMATS[fmt]
    return (bits >> (p - 1)) & ((1 << ebits) - 1) == 0 and bits & ((1 << (p - 1)) - 1)


def fma_expected(a, b, c, fmt, ftz):
    """fma.rn of three finite halves, one rounding of the exact a * b + c; .ftz flushes subnormal inputs and
    results to sign-preserving zero."""
    if ftz:
        a, b, c = (x & 0x8000 if half_is_subnormal(x, fmt) else x for x in (a, b, c))
    va, vb, vc = half_value(a, fmt), half_value(b, fmt), half_value(c, fmt)
    exact = va * vb + vc
    # an exact zero sum: +0 unless both the product and c are -0 or the sum of negatives (IEEE 754, 6.3)
    product_negative = (a ^ b) & 0x8000
    d = half_round(exact, fmt, negative_zero=exact == 0 and va * vb == 0 and vc == 0 and product_negative and c & 0x8000)
    if ftz and half_is_subnormal(d, fmt):
        d &= 0x8000
    return d


def double_rounding_traps(fmt, rng, count):
    """(a, b, c) where a * b is exactly halfway between two halves and c is so small beside it that a sum
    rounded first to binary64 (or binary32) loses it, and the tie then breaks the wrong way: one correct
    rounding goes away from the even neighbour, toward c."""
    p, emin, emax, _ = HALF_FORMATS[fmt]
    tiny = 1  # the smallest subnormal
    found = []
    for _ in range(20000):
        a = int(rng.integers(0x3C00 if fmt == 'f16' else 0x3F80, 0x4000 if fmt == 'f16' else 0x4000))
        b = int(rng.integers(0x3C00 if fmt == 'f16' else 0x3F80, 0x4000 if fmt == 'f16' else 0x4000))
        if fmt == 'bf16':  # scale the product far up, so that 2^-133 is ~2^-230 of it
            a = (a & 0x807F) | (0xB0 << 7)
        prod = half_value(a, fmt) * half_value(b, fmt)
        low = half_value(half_round(prod, fmt), fmt)
        if half_round(prod, fmt) & 1:
            continue  # want the even neighbour chosen by the tie, so that c must move it
        e = prod.numerator.bit_length() - prod.denominator.bit_length()
        if Fraction(2) ** e > prod:
            e -= 1
        ulp = Fraction(2) ** (e - (p - 1))
        if (prod / ulp) % 1 != Fraction(1, 2):
            continue
        direction = 0 if prod > low else 0x8000  # c pushes from the tie away from the even result
        found.append((a, b, tiny | direction))
        if len(found) == count:
            break
    return found


def tests_half(R, rng):
    S = 'half.ptx'

    def pack(lo, hi):
        return np.array([(h << 16) | l for l, h in zip(lo, hi)], dtype=np.uint32)

    def finite_halves(fmt, n):
        out = []
        while len(out) < n:
            x = int(rng.integers(0, 0x10000))
            if half_value(x, fmt) is not None:
                out.append(x)
        return out

    def fma_case(fmt, ftz, kernel, relu=False):
        def clamp(h):  # fma.rn.relu: "clamps the result to 0 if negative"; a -0 result is not checked
            return None if h == 0x8000 else 0 if h & 0x8000 else h

        def run():
            n = 192
            a, b, c = finite_halves(fmt, n), finite_halves(fmt, n), finite_halves(fmt, n)
            traps = double_rounding_traps(fmt, rng, 32)
            assert len(traps) >= 8, 'too few double-rounding cases found: %d' % len(traps)
            for i, (ta, tb, tc) in enumerate(traps):
                a[i], b[i], c[i] = ta, tb, tc
            if ftz:  # subnormal inputs, and products that land among the subnormals
                for i in range(40, 60):
                    a[i], b[i], c[i] = int(rng.integers(1, 0x400)) | (i % 2) << 15, 0x3C00, 0x0000
                for i in range(60, 80):
                    a[i], b[i], c[i] = 0x0C00 | int(rng.integers(0, 0x400)), 0x1000, 0x8000
            A, B, C = pack(a, a[::-1]), pack(b, b[::-1]), pack(c, c[::-1])
            if relu:  # NaN operands (a quiet one with a payload, a signalling one): the canonical NaN comes out
                nan = 0x7E01 if fmt == 'f16' else 0x7FC1
                A[n - 8:n - 4] = (nan << 16) | nan
                B[n - 4:] = ((nan | 0x8000) << 16) | (nan & ~0x40 if fmt == 'f16' else nan & ~0x40)
            got, = R.elem(S, kernel, [A, B, C], ['u32'])
            exp = []
            for i in range(n):
                halves = []
                for shift in (16, 0):
                    x, y, z = (int(v[i]) >> shift & 0xFFFF for v in (A, B, C))
                    if half_value(x, fmt) is None or half_value(y, fmt) is None:
                        halves.append(0x7FFF if relu else None)
                    else:
                        d = fma_expected(x, y, z, fmt, ftz)
                        halves.append(clamp(d) if relu else d)
                exp.append(None if None in halves else halves[0] << 16 | halves[1])
            compare(got, exp, [(A, 32), (B, 32), (C, 32)], what=kernel + ': ')
        return run

    R.case('fma.rn.f16x2: one rounding of the exact a*b+c, ties that a wider intermediate would break',
           fma_case('f16', False, 'fma_rn_f16x2'))
    R.case('fma.rn.ftz.f16x2: subnormal inputs and results flushed to sign-preserving zero',
           fma_case('f16', True, 'fma_rn_ftz_f16x2'))
    R.case('fma.rn.bf16x2: one rounding of the exact a*b+c (c 2^-230 of the product)',
           fma_case('bf16', False, 'fma_rn_bf16x2'))
    R.case('fma.rn.relu.f16x2: negative results 0, NaN operands the canonical NaN',
           fma_case('f16', False, 'fma_rn_relu_f16x2', relu=True))
    R.case('fma.rn.relu.bf16x2: negative results 0, NaN operands the canonical NaN',
           fma_case('bf16', False, 'fma_rn_relu_bf16x2', relu=True))
    R.case('add.relu.f16 is refused at load time (.relu is fma\'s and cvt\'s)',
           refused_at_load(R, 'add.rn.relu.f16 %h2, %h1, %h1;', '.relu is for fma on f16'))
    R.case('cvt.rn.relu.f32.f16 is refused at load time', refused_at_load(R, 'cvt.rn.relu.f32.f16 %r2, %h1;',
                                                                          '.relu is for f32 to f16'))

    def min_max_case(fmt, kernel, is_min, nan_wins):
        def run():
            one, two = (0x3C00, 0x4000) if fmt == 'f16' else (0x3F80, 0x4000)
            qnan, other_nan = (0x7E00, 0xFE01) if fmt == 'f16' else (0x7FC0, 0xFFC1)
            pairs = [(0x0000, 0x8000), (0x8000, 0x0000), (qnan, one), (one, qnan), (qnan, other_nan),
                     (one, two), (two, one), (0x8000 | one, one), (0x0000, 0x0000), (0x8000, 0x8000)]
            pairs += [tuple(finite_halves(fmt, 2)) for _ in range(54)]

            def expected(x, y):
                vx, vy = half_value(x, fmt), half_value(y, fmt)
                if vx is None or vy is None:  # a NaN (the pairs hold no infinities)
                    if nan_wins or (vx is None and vy is None):
                        return NAN16
                    return y if vx is None else x
                if vx == vy:  # -0.0 < +0.0
                    neg = x if x & 0x8000 else y
                    pos = y if x & 0x8000 else x
                    return neg if is_min else pos
                return x if (vx < vy) == is_min else y
            lo = [p[0] for p in pairs]
            hi = [p[1] for p in pairs]
            X, Y = pack(lo, hi), pack(hi, lo)
            got, = R.elem(S, kernel, [X, Y], ['u32'])
            exp = [(expected(hi[i], lo[i]) << 16) | expected(lo[i], hi[i]) for i in range(len(pairs))]
            compare(got, exp, [(X, 32), (Y, 32)], what=kernel + ': ')
        return run

    R.case('min.f16x2: a NaN yields the other, both NaN the canonical NaN, -0 < +0',
           min_max_case('f16', 'min_f16x2', True, False))
    R.case('max.f16x2: likewise', min_max_case('f16', 'max_f16x2', False, False))
    R.case('min.NaN.f16x2: any NaN yields the canonical NaN', min_max_case('f16', 'min_NaN_f16x2', True, True))
    R.case('max.NaN.f16x2: likewise', min_max_case('f16', 'max_NaN_f16x2', False, True))
    R.case('min.bf16x2: as min.f16x2', min_max_case('bf16', 'min_bf16x2', True, False))
    R.case('max.NaN.bf16x2: as max.NaN.f16x2', min_max_case('bf16', 'max_NaN_bf16x2', False, True))


def tests_sreg(R, rng):
    def clock():
        o, p = R.out('u64', 64)
        R.run('sreg.ptx', 'clock_advances', 1, 32, [o])
        got = np.load(p).view(np.uint64)
        if not all(0 < int(d) < 1000 for d in got[:32]):
            raise Fail('%%clock64 read around ten adds moved by %s (want more than 0)' % list(got[:4]))
        if not all(int(n) >= 1 for n in got[32:]):
            raise Fail('the spin on %%clock64 polled %s times' % list(got[32:36]))
    R.case('%clock64 advances as the warp executes: a timing read sees time pass, a spin on it ends', clock)


def tests_progress(R, rng):
    def handoff():
        flag, flag_out = R.inout(np.zeros(1, dtype=np.uint32))
        o, p = R.out('u32', 1)
        R.run('progress.ptx', 'lane_handoff', 1, 32, [flag, o])
        compare(np.load(p).view(np.uint32), [7], [(np.zeros(1), 32)])
    R.case('lane 0 spins on a flag lane 1 of its warp sets (at a higher pc): both make progress', handoff)

    def livelock():
        flag, _ = R.inout(np.zeros(1, dtype=np.uint32))
        o, _ = R.out('u32', 1)
        p = R.launch('progress.ptx', 'everyone_spins', 1, 64, [flag, o], env={'EMU_LIVELOCK': '200000'})
        one_error_line(p, 'livelock', 'warp 1 at PTX line')
    R.case('every thread spins on a flag nobody sets: a livelock, reported in one line, not a hang', livelock)

    def two_sites():
        x = rng.integers(0, 1 << 30, 32).astype(np.uint32)
        o, p = R.out('u32', 32)
        R.run('progress.ptx', 'warp_sync_two_sites', 1, 32, [R.inp(x), o])
        compare(np.load(p).view(np.uint32), [int(x[l ^ 1]) for l in range(32)], [(x, 32)])
    R.case('bar.warp.sync reached from two call sites by even and odd lanes: one barrier, then a swap', two_sites)

    def explore(kernel, block, make_input, right, what):
        def run():
            x = make_input()
            outs = {}
            for seed in [None] + list(range(1, 17)):
                o, p = R.out('u32', 16 if kernel == 'lanes_unsynced' else block)
                env = {'EMU_RACECHECK': '0', 'EMU_INITCHECK': '0'}
                if seed is not None:
                    env['EMU_INTERLEAVE'] = str(seed)
                q = R.launch('progress.ptx', kernel, 1, block, [R.inp(x), o], timeout=60, env=env)
                if q.returncode != 0:
                    raise Fail('seed %s: exit %d: %s' % (seed, q.returncode, q.stderr.strip()[:200]))
                outs[seed] = np.load(p).view(np.uint32)
            if not np.array_equal(outs[None], right(x)):
                raise Fail('the default schedule does not give %s' % what)
            if all(np.array_equal(outs[seed], right(x)) for seed in range(1, 17)):
                raise Fail('no seed of 16 showed another order than the default one')
        return run
    R.case("EMU_INTERLEAVE runs a diverged warp's lane groups in random order (lanes read unsynced stores)",
           explore('lanes_unsynced', 32, lambda: rng.integers(2, 1 << 30, 16).astype(np.uint32),
                   lambda x: x, 'the writers first'))
    R.case('EMU_INTERLEAVE lands a cp.async early, at any moment before its wait',
           explore('read_before_copy_wait', 64, lambda: rng.integers(2, 1 << 30, 256).astype(np.uint32),
                   lambda x: np.ones(64, dtype=np.uint32), 'the value stored before the copy'))


def tests_tiles(R, rng):
    def tiles():
        x = rng.integers(0, 1 << 20, 32).astype(np.uint32)
        o, p = R.out('u32', 96)
        R.run('vote.ptx', 'tile_collectives', 1, 32, [R.inp(x), o])
        exp = []
        for lane in range(32):
            exp.append(int(x[lane ^ 1]))
        for lane in range(32):
            tile = range(0, 16) if lane < 16 else range(16, 32)
            exp.append(sum(1 << t for t in tile if x[t] & 1))
        for lane in range(32):
            tile = range(0, 16) if lane < 16 else range(16, 32)
            exp.append(int(sum(int(x[t]) for t in tile)) & M32)
        compare(np.load(p).view(np.uint32), exp, [(np.arange(96), 32)])
    R.case('shfl/vote/redux.sync by two 16-lane tiles at once, each with its own member mask', tiles)


# ------------------------------------------------------------------ f32 special functions, testp, rarer instructions
def tests_misc(R, rng):
    """misc.ptx: each instruction against its definition in the PTX ISA (the section in the PTX file)."""
    S = 'misc.ptx'
    F = np.array([x & M32 for x in SPECIAL_F32 + rand_f32(rng, 200)] +
                 [0x7F800000, 0xFF800000, 0x7FC00000, 0x00000001, 0x807FFFFF, 0x00800000], np.uint32)
    f32 = F.view(np.float32)

    def run(kern, ins, expected, what=''):
        def check():
            got, = R.elem(S, kern, ins, ['u32'])
            compare(got, expected, [(x, 32) for x in ins], 32, what)
        return check

    with np.errstate(all='ignore'):
        # "sqrt.rn", "rcp.rn": IEEE 754 square root and reciprocal, rounded to nearest even; NaN for a
        # negative (nonzero) input or a NaN
        def ieee(values):
            return [nan_check(0) if math.isnan(v) else f32b(v) for v in values]
        R.case('sqrt.rn.f32 (correctly rounded, -0 -> -0, negative -> NaN)', run('sqrt_rn_f32', [F], ieee(np.sqrt(f32))))
        R.case('rcp.rn.f32 (correctly rounded, 1/+-0 -> +-inf, 1/inf -> 0)',
               run('rcp_rn_f32', [F], ieee(np.float32(1) / f32)))
        # "abs": the magnitude; "copysign d, a, b": a's sign bit on b's value
        R.case('abs.f32 (the sign bit cleared; NaN stays NaN)',
               run('abs_f32', [F], [nan_check(0) if is_nan32(int(b)) else int(b) & 0x7FFFFFFF for b in F]))
        B = np.roll(F, 7)
        R.case('copysign.f32 d, a, b (a\'s sign bit, b\'s value)',
               run('copysign_f32', [F, B], [nan_check(0) if is_nan32(int(b)) else (int(a) & 0x80000000) |
                                            (int(b) & 0x7FFFFFFF) for a, b in zip(F, B)]))

        # the .approx functions: the ISA bounds each one's error; the correctly rounded value is within every
        # such bound, and the emulator must give it to within 2 ulp (not a model of one GPU's approximation). A GPU
        # is held to the ISA's bound itself, where it is looser (`isa`: the error allowed at exact value e)
        def near(exact, isa=None):
            def ok(g, e=exact):
                if math.isnan(e):
                    return is_nan32(g)
                if math.isinf(e) or e == 0:
                    return g == f32b(e)
                if R.gpu and isa:
                    return abs(bf32(g) - e) <= isa(e)
                want = f32b(e)
                return (g >> 31) == (want >> 31) and abs((g & 0x7FFFFFFF) - (want & 0x7FFFFFFF)) <= 2
            ok.desc = 'within %s of %r' % ('the ISA\'s bound' if R.gpu and isa else '2 ulp', exact)
            return ok

        def sin_cos_bound(e):  # "[-2pi .. 2pi]: 2^-20.5" absolute ("sin", "cos")
            return 2.0 ** -20.5

        def lg2_bound(x):  # "2^-22 [absolute] when the input operand is in the range (0.5, 2)", else relative
            return lambda e: 2.0 ** -22 * (1 if 0.5 < x < 2 else abs(e))

        def tanh_bound(e):  # "The maximum relative error over the entire floating point range is 2^-11"
            return 2.0 ** -11 * abs(e)
        X = f32.astype(np.float64)
        small = np.array([x for x in F if abs(bf32(int(x))) <= 100 or not math.isfinite(bf32(int(x)))], np.uint32)
        Xs = small.view(np.float32).astype(np.float64)
        trig = np.array([f32b(v) for v in rng.uniform(-math.pi, math.pi, 200)] + [f32b(0.0), f32b(-0.0)], np.uint32)
        Xt = trig.view(np.float32).astype(np.float64)
        R.case('ex2.approx.f32 (2^x; NaN -> NaN, -inf -> +0, +inf -> +inf)',
               run('ex2_approx_f32', [small], [near(math.nan if math.isnan(x) else math.inf if x >= 128 else
                                                    float(np.float32(2.0 ** x))) for x in Xs]))
        pos = np.array([x for x in F if bf32(int(x)) > 0 and math.isfinite(bf32(int(x)))], np.uint32)
        R.case('lg2.approx.f32 (log2 x, positive normal and subnormal x)',
               run('lg2_approx_f32', [pos], [near(math.log2(v), lg2_bound(v)) for v in pos.view(np.float32).astype(np.float64)]))
        R.case('sin.approx.f32 on [-pi, pi]', run('sin_approx_f32', [trig], [near(math.sin(x), sin_cos_bound) for x in Xt]))
        R.case('cos.approx.f32 on [-pi, pi]', run('cos_approx_f32', [trig], [near(math.cos(x), sin_cos_bound) for x in Xt]))
        R.case('tanh.approx.f32', run('tanh_approx_f32', [small], [near(math.tanh(x), tanh_bound) if math.isfinite(x) else
                                                                    nan_check(0) if math.isnan(x) else
                                                                    (lambda g, s=math.copysign(1.0, x): g == f32b(s))
                                                                    for x in Xs]))
        R.case('rsqrt.approx.f32 (positive x)', run('rsqrt_approx_f32', [pos], [near(1.0 / math.sqrt(v)) for v in
                                                                                 pos.view(np.float32).astype(np.float64)]))
        R.case('rcp.approx.f32 (normal x)', run('rcp_approx_f32', [pos], [near(1.0 / v) for v in
                                                                           pos.view(np.float32).astype(np.float64)]))

        # "testp": finite, infinite, number (not NaN), notanumber, normal, subnormal; "As a special case, positive
        # and negative zero are considered normal numbers"
        kinds = {'finite': lambda v: math.isfinite(v), 'infinite': lambda v: math.isinf(v),
                 'number': lambda v: not math.isnan(v), 'notanumber': lambda v: math.isnan(v),
                 'normal': lambda v: math.isfinite(v) and (abs(v) >= 2.0 ** -126 or v == 0),
                 'subnormal': lambda v: v != 0 and abs(v) < 2.0 ** -126}
        for kind, holds in kinds.items():
            R.case('testp.%s.f32' % kind, run('testp_%s_f32' % kind, [F], [int(holds(float(v))) for v in X]))

    # integers: "sad d, a, b, c": c + |a - b|; "mul24.lo/.hi": bits 31..0 / 47..16 of the 48-bit product of
    # the low 24 bits (sign-extended for .s32); "mad24.lo": + c; "cnot": 1 if a is 0, else 0; "slct d, a, b, c":
    # a if c >= 0 (for .f32, -0 >= 0), else b
    A = np.array(rng.integers(0, 1 << 32, 256, dtype=np.uint64), np.uint32)
    Bv = np.array(rng.integers(0, 1 << 32, 256, dtype=np.uint64), np.uint32)
    C = np.array(rng.integers(0, 1 << 32, 256, dtype=np.uint64), np.uint32)
    A[:4], Bv[:4] = [0, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF], [0xFFFFFFFF, 0, 0x7FFFFFFF, 0x80000000]
    R.case('sad.u32', run('sad_u32', [A, Bv, C], [(int(c) + abs(int(a) - int(b))) & M32 for a, b, c in zip(A, Bv, C)]))
    R.case('sad.s32', run('sad_s32', [A, Bv, C], [(int(c) + abs(s32(int(a)) - s32(int(b)))) & M32
                                                  for a, b, c in zip(A, Bv, C)]))
    R.case('mul24.lo.u32', run('mul24_lo_u32', [A, Bv], [((int(a) & 0xFFFFFF) * (int(b) & 0xFFFFFF)) & M32
                                                         for a, b in zip(A, Bv)]))
    R.case('mul24.hi.s32', run('mul24_hi_s32', [A, Bv], [((sx(int(a) & 0xFFFFFF, 24) * sx(int(b) & 0xFFFFFF, 24)) >> 16)
                                                         & M32 for a, b in zip(A, Bv)]))
    R.case('mad24.lo.s32', run('mad24_lo_s32', [A, Bv, C], [(sx(int(a) & 0xFFFFFF, 24) * sx(int(b) & 0xFFFFFF, 24) +
                                                             int(c)) & M32 for a, b, c in zip(A, Bv, C)]))
    Z = A.copy()
    Z[::3] = 0
    R.case('cnot.b32', run('cnot_b32', [Z], [int(z == 0) for z in Z]))
    Cf = np.array([f32b(v) for v in rng.uniform(-2, 2, 250)] + [f32b(0.0), f32b(-0.0), 0x00000001, 0x80000001,
                                                                0x7F800000, 0xFF800000], np.uint32)
    R.case('slct.u32.f32 (c >= 0, -0 counts as >= 0)',
           run('slct_u32_f32', [A[:len(Cf)], Bv[:len(Cf)], Cf],
               [int(a) if bf32(int(c)) >= 0 else int(b) for a, b, c in zip(A, Bv, Cf)]))
    R.case('slct.u32.s32', run('slct_u32_s32', [A, Bv, C], [int(a) if s32(int(c)) >= 0 else int(b)
                                                          for a, b, c in zip(A, Bv, C)]))
    # "nanosleep": a hint; the thread goes on
    R.case('nanosleep (a hint: the thread goes on)', run('nanosleep_copy', [A], [int(a) for a in A]))
    # "red": the atomic reduction into memory, no value returned
    R.case('red.global.add.u32', run('red_add_u32', [A, Bv], [(int(a) + int(b)) & M32 for a, b in zip(A, Bv)]))
    # "isspacep": whether a generic address is in the state space; "prefetch": a hint
    R.case('isspacep.global/.shared/.local of a global and a shared address (after a prefetch)',
           run('isspacep_kinds', [A[:64]], [0x21] * 64))
    R.case('pmevent (a hint: the thread goes on)', run('pmevent_copy', [A], [int(a) for a in A]))

    # "trap": the thread's execution is aborted, and with it the launch, which reports it
    def trap():
        x = np.arange(64, dtype=np.uint32)
        x[40] = 7
        x[7] = 8
        out, _ = R.out('u32', 64)
        p = R.launch(S, 'trap_at_7', 1, 64, [R.inp(x), out, 'u32:64'])
        text = (p.stdout + p.stderr).strip()
        if p.returncode != 1 or 'trap' not in text or 'thread (40,0,0)' not in text:
            raise Fail('exit %d, %s' % (p.returncode, text[-300:]))
    R.case('trap (the trapping thread is named, the launch fails)', trap)

    # "wmma.load / wmma.mma / wmma.store": D = A * B + C, whatever the fragments hold in between; small integers
    # make every product and sum exact, so D is known to the bit
    def wmma():
        a = rng.integers(-8, 9, (16, 16)).astype(np.float16)
        b = rng.integers(-8, 9, (16, 16)).astype(np.float16)
        c = rng.integers(-100, 101, (16, 16)).astype(np.float32)
        d, dp = R.out('f32', 256)
        R.run(S, 'wmma_e2e', 1, 32, [R.inp(a.ravel()), R.inp(np.ascontiguousarray(b.T).ravel()), R.inp(c.ravel()), d])
        got, want = np.load(dp).reshape(16, 16), (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
        if not np.array_equal(got, want):
            i, j = np.argwhere(got != want)[0]
            raise Fail('D[%d][%d] = %r, want %r' % (i, j, got[i, j], want[i, j]))
    R.case('wmma.load.a.row / .b.col / .c.row, wmma.mma.row.col.f32.f32, wmma.store.d.row (m16n16k16)', wmma)


def main():
    R = Runner(*ptxrun_cases.command_line(__doc__))
    rng = np.random.default_rng(20240611)
    R.assemble_each()
    for fam in (tests_mma, tests_ldmatrix, tests_cp_async, tests_shfl, tests_cvt, tests_int, tests_setp, tests_vote,
                tests_bar_atom, tests_half, tests_sreg, tests_progress, tests_tiles, tests_carry, tests_b128, tests_brx, tests_calls,
                tests_functions, tests_misc):
        fam(R, rng)
    return R.summary('emu_isa')


if __name__ == '__main__':
    sys.exit(main())
