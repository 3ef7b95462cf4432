#!/usr/bin/env python3
"""The PTX emulator's Hopper tests: wgmma, shared-memory matrix descriptors, mbarrier, bulk copies, TMA.

Usage: python3 tests/test_emu_hopper.py PTXRUN WORK_DIR
       python3 tests/test_emu_hopper.py --gpu WORK_DIR      the PTX cases on a GPU (tests/ptxrun_gpu.py)

Runs the hand-written kernels in tests/emu_hopper/*.ptx with ptxrun and compares every output with values
computed here from the NVIDIA PTX ISA (9.0) text (notes: the section named by each family below); builds
tests/emu_hopper/tma_test.cu and runs it on a GPU where one answers and on the emulator (libcudaemu.so next to
PTXRUN, preloaded). The emulator's code is not a source of expectations.

What the ISA makes undefined is an error (tests/emu_hopper/wgmma_misuse.ptx): a wgmma.mma_async without a
wgmma.fence before it, lanes or warps giving different descriptors, warps of the warpgroup that skip it, a
block with fewer warps than the warpgroup, a swizzled matrix off its pattern with base offset 0, an
accumulator touched before the wgmma.wait_group that covers it. What it leaves unspecified is not
asserted:
  - the tensor cores' summation order: every operand is k/4 with |k| <= 8 and K <= 64, so every product and
    partial sum is exact in f32 and D is compared bit for bit;
  - which lane elect.sync elects: only "exactly one, from the member mask, and every member sees its laneid".
Prints one line per case (PASS / FAIL / SKIP / INFO) and a summary; exits 0 only if no case fails.
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxrun_cases  # noqa: E402
import ptxrun_gpu  # noqa: E402
from ptxrun_cases import Fail  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
HOP_DIR = os.path.join(HERE, 'emu_hopper')
DEADLOCK_TIMEOUT = 60


class Runner(ptxrun_cases.Runner):
    def __init__(self, ptxrun, work, gpu=None):
        super().__init__(ptxrun, os.path.join(work, 'emu_hopper'), HOP_DIR, gpu)


# ---------------------------------------------------------------------------------------------------------------
# wgmma: PTX ISA 9.0 "Asynchronous Multiply-and-Accumulate Instruction: wgmma.mma_async", "Matrix Fragments for
# wgmma.mma_async.m64nNk16" (figures 148/149), "Shared Memory Matrix Layout", "Strides", "Canonical Layouts",
# "Matrix Descriptor Format".

SWIZZLE_CODE = {0: 0, 128: 1, 64: 2, 32: 3}   # descriptor bits 63..62


def swizzle(lin, sw):
    """16-byte-chunk XOR of the canonical layouts' Swizzle<log2(sw/16),4,3> on the byte address (the same pattern
    TMA writes, CUDA Programming Guide "TMA Swizzle"). The tiles sit at 1024-byte aligned bases."""
    if sw == 0:
        return lin
    return lin ^ (((lin >> 7) & (sw // 16 - 1)) << 4)


class Tile:
    """Where element (r, k) of an R x K operand (r = m for A, n for B) lives in shared memory.
    major 'k': K-major (imm-trans = 0); 'mn': M-/N-major (imm-trans = 1). sw: 0 (none), 32, 64, 128."""

    def __init__(self, major, sw, R, K, variant=''):
        self.major, self.sw, self.R, self.K = major, sw, R, K
        w = sw // 2   # f16/bf16 elements per swizzle-width row
        if major == 'k' and sw == 0:
            if variant == 'mninner':    # core matrices of one K column adjacent, K columns LBO apart
                self.sbo, self.lbo = 128, (R // 8) * 128
            else:                       # core matrices of one 8-row group adjacent along K
                self.lbo, self.sbo = 128, (K // 8) * 128
            self.size = R * K * 2
            self.step = 2 * self.lbo
        elif major == 'k':
            self.lbo = 16               # "not used, assumed 1" (encoded 1)
            self.sbo = 8 * sw * (2 if variant == 'padsbo' else 1)
            self.kbs = (R // 8) * self.sbo        # next swizzle-atom column along K
            self.size = -(-K // w) * self.kbs
            self.step = 32 if w > 16 else self.kbs
            assert w == 16 or K <= w
        elif sw == 0:                   # MN-major interleave: mn blocks of 8 SBO apart, k blocks of 8 LBO apart
            self.sbo, self.lbo = 128, (R // 8) * 128
            self.size = R * K * 2
            self.step = 2 * self.lbo
        else:                           # MN-major swizzled: mn blocks of w LBO apart, k blocks of 8 SBO apart
            assert R % w == 0
            self.sbo = 8 * sw
            self.lbo = (K // 8) * self.sbo
            self.size = (R // w) * self.lbo
            self.step = 2 * self.sbo

    def addr(self, r, k):
        sw, w = self.sw, self.sw // 2
        if self.major == 'k':
            if sw == 0:
                lin = (r >> 3) * self.sbo + (r & 7) * 16 + (k >> 3) * self.lbo + (k & 7) * 2
            else:
                lin = (k // w) * self.kbs + (r >> 3) * self.sbo + (r & 7) * sw + (k % w) * 2
        else:
            if sw == 0:
                lin = (r >> 3) * self.sbo + (r & 7) * 2 + (k >> 3) * self.lbo + (k & 7) * 16
            else:
                lin = (r // w) * self.lbo + (r % w) * 2 + (k >> 3) * self.sbo + (k & 7) * sw
        return swizzle(lin, sw)

    def template(self):
        """Descriptor with start address 0: LBO, SBO (>> 4, 14 bits), swizzle mode; base offset 0."""
        return ((((self.lbo & 0x3FFFF) >> 4) << 16) | (((self.sbo & 0x3FFFF) >> 4) << 32)
                | (SWIZZLE_CODE[self.sw] << 62))

    def place(self, img, rel, bits):
        """bits: R x K uint16 (element (r, k)). Each address must be written once."""
        seen = set()
        for r in range(self.R):
            for k in range(self.K):
                a = rel + self.addr(r, k)
                assert a not in seen and a % 2 == 0 and a + 2 <= rel + self.size, (r, k, a)
                seen.add(a)
                img[a:a + 2] = np.frombuffer(np.uint16(bits[r, k]).tobytes(), np.uint8)


def rand_vals(rng, shape):
    return rng.integers(-8, 9, size=shape).astype(np.float64) / 4.0


def to_bits(vals, dt):
    if dt == 'f16':
        return vals.astype(np.float16).view(np.uint16)
    return (vals.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)   # bf16: exact for k/4


def frag_rc(N):
    """(row, col) of accumulator d_i of thread tid: arrays [128, N/2]."""
    tid = np.arange(128)[:, None]
    i = np.arange(N // 2)[None, :]
    w, lane = tid >> 5, tid & 31
    g, t = lane >> 2, lane & 3
    row = 16 * w + g + 8 * ((i >> 1) & 1)
    col = 8 * (i >> 2) + 2 * t + (i & 1)
    return row, col


def a_regs(abits, steps):
    """A register fragments (rows 16w+g(+8), cols 2t(+8)(+1)): uint32 [steps, 128, 4]."""
    out = np.zeros((steps, 128, 4), np.uint32)
    for s in range(steps):
        for tid in range(128):
            w, lane = tid >> 5, tid & 31
            g, t = lane >> 2, lane & 3
            for j in range(4):
                row = 16 * w + g + 8 * (j & 1)
                col = 16 * s + 2 * t + 8 * (j >> 1)
                out[s, tid, j] = int(abits[row, col]) | (int(abits[row, col + 1]) << 16)
    return out


def image(tiles):
    """tiles: list of (Tile, bits). Returns (uint8 image filled with 0xff, list of rel offsets)."""
    rels, off = [], 0
    for t, _ in tiles:
        rels.append(off)
        off += -(-t.size // 1024) * 1024
    img = np.full(off, 0xFF, np.uint8)   # unused bytes are f16/bf16 NaN: a wrong address shows
    for (t, bits), rel in zip(tiles, rels):
        t.place(img, rel, bits)
    return img, rels


def check_d(got, want, N, what='D'):
    row, col = frag_rc(N)
    exp = want[row, col].astype(np.float32)
    got = got.reshape(128, N // 2)
    if np.array_equal(got.view(np.uint32), exp.view(np.uint32)):
        return
    bad = np.argwhere(got.view(np.uint32) != exp.view(np.uint32))
    tid, i = bad[0]
    raise Fail('%s: %d of %d accumulators wrong; first: thread %d d%d = %s (D[%d][%d]), want %s'
               % (what, len(bad), got.size, tid, i, got[tid, i], row[tid, i], col[tid, i], exp[tid, i]))


def wgmma_ss(R, name, kernel, N, K, dt, ta, tb, sign=1.0, scale_d=1, seed=0):
    (amaj, asw, avar), (bmaj, bsw, bvar) = ta, tb

    def fn():
        rng = np.random.default_rng(seed)
        A = rand_vals(rng, (64, K))
        B = rand_vals(rng, (K, N))
        C = rand_vals(rng, (64, N)) if scale_d else np.full((64, N), np.nan)
        at = Tile(amaj, asw, 64, K, avar)
        bt = Tile(bmaj, bsw, N, K, bvar)
        assert at.step * 0 == 0 and K % 16 == 0
        img, (rel_a, rel_b) = image([(at, to_bits(A, dt)), (bt, to_bits(B.T, dt))])
        row, col = frag_rc(N)
        cfrag = C[row, col].astype(np.float32)
        d_arg, d_path = R.out('f32', 128 * N // 2)
        args = [R.inp(img.view('<u4')), 'u32:%d' % (img.size // 4), R.inp(cfrag), d_arg,
                'u64:%d' % at.template(), 'u32:%d' % rel_a, 'u32:%d' % at.step,
                'u64:%d' % bt.template(), 'u32:%d' % rel_b, 'u32:%d' % bt.step,
                'u32:%d' % (K // 16), 'u32:%d' % scale_d]
        R.run('wgmma_ss.ptx', kernel, 1, 128, args, smem=img.size + 1024)
        want = sign * (A @ B) + (C if scale_d else 0.0)
        check_d(np.load(d_path), want, N)
        return 'm64n%dk16 x%d, A %s-major sw%d (LBO %d SBO %d), B %s-major sw%d (LBO %d SBO %d)%s' % (
            N, K // 16, amaj, asw, at.lbo, at.sbo, bmaj, bsw, bt.lbo, bt.sbo,
            '' if scale_d else ', scale-d false (C = NaN ignored)')
    R.case(name, fn)


def wgmma_rs(R, name, kernel, N, dt, tb, scale_d=1, seed=0):
    bmaj, bsw, bvar = tb
    K = 32   # the RS kernels issue two k16 steps with distinct A registers

    def fn():
        rng = np.random.default_rng(seed)
        A = rand_vals(rng, (64, K))
        B = rand_vals(rng, (K, N))
        C = rand_vals(rng, (64, N)) if scale_d else np.full((64, N), np.nan)
        bt = Tile(bmaj, bsw, N, K, bvar)
        img, (rel_b,) = image([(bt, to_bits(B.T, dt))])
        regs = a_regs(to_bits(A, dt), 2)
        row, col = frag_rc(N)
        d_arg, d_path = R.out('f32', 128 * N // 2)
        args = [R.inp(img.view('<u4')), 'u32:%d' % (img.size // 4), R.inp(regs.reshape(-1)),
                R.inp(C[row, col].astype(np.float32)), d_arg,
                'u64:%d' % bt.template(), 'u32:%d' % rel_b, 'u32:%d' % bt.step, 'u32:%d' % scale_d]
        R.run('wgmma_rs_n128.ptx' if N == 128 else 'wgmma_rs.ptx', kernel, 1, 128, args, smem=img.size + 1024)
        check_d(np.load(d_path), A @ B + (C if scale_d else 0.0), N)
        return 'm64n%dk16 x2, A from registers, B %s-major sw%d%s' % (
            N, bmaj, bsw, '' if scale_d else ', scale-d false')
    R.case(name, fn)


def wgmma_pipe(R):
    N, K = 64, 16

    def fn():
        rng = np.random.default_rng(7)
        A = rand_vals(rng, (64, K))
        B = rand_vals(rng, (K, N))
        C = rand_vals(rng, (64, N))
        at, bt = Tile('k', 0, 64, K), Tile('k', 128, N, K)
        img, (rel_a, rel_b) = image([(at, to_bits(A, 'f16')), (bt, to_bits(B.T, 'f16'))])
        row, col = frag_rc(N)
        d_arg, d_path = R.out('f32', 128 * N)
        args = [R.inp(img.view('<u4')), 'u32:%d' % (img.size // 4), R.inp(C[row, col].astype(np.float32)),
                d_arg, 'u64:%d' % at.template(), 'u32:%d' % rel_a, 'u32:0',
                'u64:%d' % bt.template(), 'u32:%d' % rel_b, 'u32:0']
        R.run('wgmma_pipe.ptx', 'pipe_f16_n64', 1, 128, args, smem=img.size + 1024)
        d = np.load(d_path).reshape(128, N)
        check_d(d[:, :N // 2].copy(), A @ B, N, 'group 1 after wait_group 1')
        check_d(d[:, N // 2:].copy(), A @ B + C, N, 'group 2 after wait_group 0')
        return 'two wgmma-groups; wait_group 1 completes the first, wait_group 0 the second'
    R.case('wgmma_pipe_wait_group', fn)


def wgmma_misuse_cases(R):
    # the last three never write their tiles (initcheck off): only the warpgroup's issue is under test
    unwritten = {'EMU_INITCHECK': '0'}
    for kernel, block, env, words in (('misuse_no_fence', 128, None, 'no wgmma.fence'),
                                      ('misuse_lane_descriptors', 128, None, 'gives the B descriptor'),
                                      ('misuse_swizzle_base', 128, None, 'base offset must then be 1'),
                                      ('misuse_read_before_wait', 128, None, 'in-flight wgmma.mma_async'),
                                      ('misuse_warps_skip', 128, unwritten, 'ended without executing this'),
                                      ('misuse_warp_descriptors', 128, unwritten, 'another warp of the warpgroup gave'),
                                      ('misuse_one_warp', 32, unwritten, 'belongs to a warpgroup')):
        def fn(kernel=kernel, block=block, env=env, words=words):
            o, _ = R.out('u32', 1)
            p = R.launch('wgmma_misuse.ptx', kernel, 1, block, [o], env=env)
            lines = (p.stdout + p.stderr).strip().splitlines()
            if p.returncode != 1 or len(lines) != 1 or words not in lines[0]:
                raise Fail('exit %d, want 1 and one line saying "%s": %s' % (p.returncode, words, ' | '.join(lines)))
            return lines[0][lines[0].find('): ') + 3:][:140] if '): ' in lines[0] else lines[0][:140]
        R.case('wgmma_' + kernel, fn)


def wgmma_cases(R):
    K0 = ('k', 0, '')
    wgmma_ss(R, 'wgmma_n128_none', 'ss_f16_n128', 128, 32, 'f16', K0, K0, seed=1)
    wgmma_ss(R, 'wgmma_n128_none_lbo_sbo_swapped', 'ss_f16_n128', 128, 32, 'f16',
             ('k', 0, 'mninner'), ('k', 0, 'mninner'), seed=2)
    wgmma_ss(R, 'wgmma_n128_sw32', 'ss_f16_n128', 128, 32, 'f16', ('k', 32, ''), ('k', 32, ''), seed=3)
    wgmma_ss(R, 'wgmma_n128_sw64', 'ss_f16_n128', 128, 32, 'f16', ('k', 64, ''), ('k', 64, ''), seed=4)
    wgmma_ss(R, 'wgmma_n128_sw128', 'ss_f16_n128', 128, 64, 'f16', ('k', 128, ''), ('k', 128, ''), seed=5)
    wgmma_ss(R, 'wgmma_n128_sw128_padded_sbo', 'ss_f16_n128', 128, 64, 'f16',
             ('k', 128, 'padsbo'), ('k', 128, 'padsbo'), seed=6)
    wgmma_ss(R, 'wgmma_n128_mixed_sw128_none', 'ss_f16_n128', 128, 32, 'f16', ('k', 128, ''), K0, seed=7)
    wgmma_ss(R, 'wgmma_n8_none', 'ss_f16_n8', 8, 32, 'f16', K0, K0, seed=8)
    wgmma_ss(R, 'wgmma_n8_sw128', 'ss_f16_n8', 8, 64, 'f16', ('k', 128, ''), ('k', 128, ''), seed=9)
    wgmma_ss(R, 'wgmma_n8_sw32', 'ss_f16_n8', 8, 16, 'f16', ('k', 32, ''), ('k', 32, ''), seed=10)
    wgmma_ss(R, 'wgmma_n64_sw64', 'ss_f16_n64', 64, 32, 'f16', ('k', 64, ''), ('k', 64, ''), seed=11)
    wgmma_ss(R, 'wgmma_n64_scale_d_false', 'ss_f16_n64', 64, 32, 'f16', ('k', 128, ''), ('k', 64, ''),
             scale_d=0, seed=12)
    wgmma_ss(R, 'wgmma_n128_negate_a', 'ss_f16_n128_nega', 128, 16, 'f16', K0, K0, sign=-1.0, seed=13)
    wgmma_ss(R, 'wgmma_n64_negate_a_and_b', 'ss_f16_n64_negab', 64, 64, 'f16', ('k', 128, ''), ('k', 128, ''),
             sign=1.0, seed=14)
    wgmma_ss(R, 'wgmma_bf16_n64_sw128', 'ss_bf16_n64', 64, 64, 'bf16', ('k', 128, ''), ('k', 128, ''), seed=15)
    wgmma_ss(R, 'wgmma_bf16_n128_b_nmajor_sw128', 'ss_bf16_n128_tb', 128, 64, 'bf16', ('k', 128, ''),
             ('mn', 128, ''), seed=16)
    wgmma_ss(R, 'wgmma_n128_b_nmajor_none', 'ss_f16_n128_tb', 128, 32, 'f16', K0, ('mn', 0, ''), seed=17)
    wgmma_ss(R, 'wgmma_n128_b_nmajor_sw64', 'ss_f16_n128_tb', 128, 32, 'f16', K0, ('mn', 64, ''), seed=18)
    wgmma_ss(R, 'wgmma_n128_b_nmajor_sw32', 'ss_f16_n128_tb', 128, 32, 'f16', K0, ('mn', 32, ''), seed=19)
    wgmma_unwritten_operand(R)
    wgmma_ss(R, 'wgmma_n64_a_mmajor_none', 'ss_f16_n64_ta', 64, 32, 'f16', ('mn', 0, ''), K0, seed=20)
    wgmma_ss(R, 'wgmma_n64_a_mmajor_sw128', 'ss_f16_n64_ta', 64, 32, 'f16', ('mn', 128, ''), ('k', 64, ''),
             seed=21)
    wgmma_ss(R, 'wgmma_n64_both_mnmajor_sw64_sw32', 'ss_f16_n64_tatb', 64, 32, 'f16', ('mn', 64, ''),
             ('mn', 32, ''), seed=22)
    wgmma_rs(R, 'wgmma_rs_n64_sw128', 'rs_f16_n64', 64, 'f16', ('k', 128, ''), seed=23)
    wgmma_rs(R, 'wgmma_rs_n128_none', 'rs_f16_n128', 128, 'f16', K0, seed=24)
    wgmma_rs(R, 'wgmma_rs_n64_b_nmajor_sw64', 'rs_f16_n64_tb', 64, 'f16', ('mn', 64, ''), seed=25)
    wgmma_rs(R, 'wgmma_rs_bf16_n8_scale_d_false', 'rs_bf16_n8', 8, 'bf16', K0, scale_d=0, seed=26)
    wgmma_pipe(R)


# ---------------------------------------------------------------------------------------------------------------
# mbarrier and bulk copies: PTX ISA 9.0 "Parallel Synchronization and Communication Instructions: mbarrier"
# (Phase Completion: pending arrivals == 0 and tx-count == 0; test_wait/try_wait .parity: True for the immediately
# preceding phase, False for the current incomplete one), "cp.async.bulk", "membar / fence".

PHASE_FLAGS = [  # (name, expected waitComplete) in the order mbar_phase stores them
    ('init: parity 0 (current phase 0)', 0), ('init: parity 1 (preceding)', 1),
    ('1 of 3 arrivals: parity 0', 0), ('1 of 3 arrivals: test_wait(state)', 0),
    ('3 of 3 arrivals: parity 0', 1), ('phase 1: parity 1', 0), ('test_wait(state of phase 0)', 1),
    ('try_wait parity 0 after completion', 1),
    ('arrivals done, tx 64 pending: parity 1', 0), ('tx 32 pending: parity 1', 0),
    ('tx 0: parity 1', 1), ('phase 2: parity 0', 0),
    ('expect_tx 16 + 3 arrivals: parity 0', 0), ('complete_tx 16: parity 0', 1), ('phase 3: parity 1', 0),
    ('complete_tx before expect_tx, 1 arrival: parity 1', 0), ('tx back to 0 + arrivals: parity 1', 1),
    ('phase 4: parity 0', 0), ('expected count 3 kept: 2 arrivals', 0), ('3rd arrival: parity 0', 1),
]


def wgmma_unwritten_operand(R):
    """initcheck of wgmma's shared-memory operands: the last 16 bytes of B's tile are never copied to shared
    memory, so the wgmma reads a chunk no thread wrote: one error line saying so."""
    def fn():
        rng = np.random.default_rng(20)
        K0 = ('k', 0, '')
        A, B = rand_vals(rng, (64, 16)), rand_vals(rng, (16, 8))
        at, bt = Tile(*K0[:2], 64, 16, K0[2]), Tile(*K0[:2], 8, 16, K0[2])
        img, (rel_a, rel_b) = image([(at, to_bits(A, 'f16')), (bt, to_bits(B.T, 'f16'))])
        copied = (rel_b + bt.size - 16) // 4  # words copied: all but B's last chunk
        d_arg, _ = R.out('f32', 128 * 8 // 2)
        args = [R.inp(img.view('<u4')), 'u32:%d' % copied, R.inp(np.zeros(128 * 4, np.float32)), d_arg,
                'u64:%d' % at.template(), 'u32:%d' % rel_a, 'u32:%d' % at.step,
                'u64:%d' % bt.template(), 'u32:%d' % rel_b, 'u32:%d' % bt.step, 'u32:1', 'u32:1']
        p = R.launch('wgmma_ss.ptx', 'ss_f16_n8', 1, 128, args, smem=img.size + 1024)
        lines = (p.stdout + p.stderr).strip().splitlines()
        with open(os.path.join(HOP_DIR, 'wgmma_ss.ptx')) as f:  # the kernel's wgmma: its PTX line
            ptx = f.read().splitlines()
        start = next(i for i, t in enumerate(ptx) if '.entry ss_f16_n8(' in t)
        at = 'PTX line %d,' % next(i + 1 for i in range(start, len(ptx)) if 'wgmma.mma_async' in ptx[i])
        words = 'that no thread of this block has written'
        if p.returncode != 1 or len(lines) != 1 or words not in lines[0] or at not in lines[0]:
            raise Fail('exit %d, want 1 and one line at %s saying "%s": %s' % (p.returncode, at, words,
                                                                             ' | '.join(lines)))
        return lines[0][lines[0].find('): ') + 3:][:140]
    R.case('wgmma_unwritten_operand', fn)


def mbarrier_cases(R):
    def phase():
        o, p = R.out('u32', len(PHASE_FLAGS))
        R.run('mbarrier_phase.ptx', 'mbar_phase', 1, 1, [o])
        got = np.load(p)
        bad = ['%s = %d (want %d)' % (n, g, w) for (n, w), g in zip(PHASE_FLAGS, got) if g != w]
        if bad:
            raise Fail('; '.join(bad))
        return '%d waitComplete values over phases 0..5 (arrive counts, expect_tx, complete_tx)' % len(PHASE_FLAGS)
    R.case('mbarrier_phase_parity', phase)

    def multi():
        o, p = R.out('u32', 128)
        R.run('mbarrier.ptx', 'mbar_multi', 1, 128, [o])
        got = np.load(p)
        if not np.all(got == 6):
            raise Fail('threads with a wrong neighbour value: %s' % np.nonzero(got != 6)[0][:8].tolist())
        return '128 threads, 6 phases, release-arrive / acquire-try_wait'
    R.case('mbarrier_128_threads_6_phases', multi)

    def prodcons():
        o, p = R.out('u32', 128)
        R.run('mbarrier.ptx', 'mbar_prodcons', 1, 128, [o])
        got = np.load(p)
        want = 7 * np.arange(128, dtype=np.uint32) + 3
        if not np.array_equal(got, want):
            raise Fail('out[%d] = %d, want %d' % ((i := int(np.argmax(got != want))), got[i], want[i]))
        return 'consumers wait first, producer waits on them, then produces'
    R.case('mbarrier_producer_consumer', prodcons)

    def g2s():
        src = np.random.default_rng(3).integers(0, 2**32, 128, dtype=np.uint64).astype(np.uint32)
        o, p = R.out('u32', 128)
        R.run('bulk.ptx', 'bulk_g2s', 1, 128, [R.inp(src), o])
        got = np.load(p)
        if not np.array_equal(got, src):
            raise Fail('word %d = %#x, want %#x' % ((i := int(np.argmax(got != src))), got[i], src[i]))
        return '2 x 256-byte cp.async.bulk completing 512 expected bytes'
    R.case('bulk_copy_global_to_shared_mbarrier', g2s)

    def s2g():
        o, p = R.out('u32', 128)
        R.run('bulk.ptx', 'bulk_s2g', 1, 128, [o])
        got = np.load(p)
        want = 3 * np.arange(128, dtype=np.uint32) + 1
        if not np.array_equal(got, want):
            raise Fail('word %d = %#x, want %#x' % ((i := int(np.argmax(got != want))), got[i], want[i]))
        return '512-byte cp.async.bulk shared -> global, bulk_group wait'
    R.case('bulk_copy_shared_to_global', s2g)


def deadlock_cases(R):
    for kernel, block, what in [('dl_wrong_parity', 1, 'try_wait on the current phase\'s parity, nobody arrives'),
                                ('dl_missing_arrivals', 64, '32 of 64 expected arrivals'),
                                ('dl_missing_bytes', 1, 'expect_tx 128 bytes, no copy')]:
        def fn(kernel=kernel, block=block, what=what):
            o, _ = R.out('u32', 1)
            p = R.launch('deadlock.ptx', kernel, 1, block, [o], timeout=DEADLOCK_TIMEOUT)
            text = (p.stdout + p.stderr).strip()
            if p.returncode == 0:
                raise Fail('exited 0; a phase that cannot complete must be reported')
            if 'deadlock' not in text.lower():
                raise Fail('exited %d without naming a deadlock: %s' % (p.returncode, ' | '.join(text.splitlines()[-2:])))
            return '%s -> "%s"' % (what, text.splitlines()[-1][:140])
        R.case('mbarrier_deadlock_' + kernel[3:], fn)


# ---------------------------------------------------------------------------------------------------------------
# elect.sync ("Parallel Synchronization and Communication Instructions: elect.sync") and setmaxnreg
# ("Miscellaneous Instructions: setmaxnreg").

def misc_cases(R):
    def elect(kernel, mask):
        o, p = R.out('u32', 128)
        R.run('misc.ptx', kernel, 1, 64, [o])
        got = np.load(p).reshape(64, 2)
        for w in range(2):
            lanes = [l for l in range(32) if mask >> l & 1]
            d = got[32 * w:32 * w + 32, 0]
            pr = got[32 * w:32 * w + 32, 1]
            leaders = [l for l in lanes if pr[l] == 1]
            if len(leaders) != 1 or any(pr[l] not in (0, 1) for l in lanes):
                raise Fail('warp %d: p true in lanes %s' % (w, leaders))
            if leaders[0] not in lanes or any(d[l] != leaders[0] for l in lanes):
                raise Fail('warp %d: leader lane %d, d = %s' % (w, leaders[0], sorted(set(d[lanes].tolist()))))
            others = [l for l in range(32) if not mask >> l & 1]
            if any(d[l] != 7 or pr[l] != 7 for l in others):
                raise Fail('warp %d: a lane outside the mask was changed' % w)
        return 'one leader per warp from mask %#x, every member gets its laneid' % mask
    R.case('elect_sync_full_warp', lambda: elect('elect_full', 0xFFFFFFFF))
    R.case('elect_sync_member_mask', lambda: elect('elect_partial', 0x55555555))

    def setmaxnreg():
        o, p = R.out('u32', 256)
        R.run('misc.ptx', 'setmaxnreg_wg', 1, 256, [o])
        got = np.load(p)
        want = np.arange(256, dtype=np.uint32) ** 2 + 5
        if not np.array_equal(got, want):
            raise Fail('out[%d] = %d, want %d' % ((i := int(np.argmax(got != want))), got[i], want[i]))
        return 'warpgroup 0 inc 216, warpgroup 1 dec 40; values survive'
    R.case('setmaxnreg_two_warpgroups', setmaxnreg)

    # "mbarrier.inval": the word is ordinary shared memory again; the object is not one until mbarrier.init
    def inval_reuse():
        o, p = R.out('u64', 1)
        R.run('misc.ptx', 'mbar_inval_reuse', 1, 1, [o])
        if int(np.load(p)[0]) != 1234567:
            raise Fail('read back %d, stored 1234567' % int(np.load(p)[0]))
        return 'init, inval, then a plain store and load of the word'
    R.case('mbarrier_inval_then_plain_memory', inval_reuse)

    def inval_then_arrive():
        o, _ = R.out('u64', 1)
        p = R.launch('misc.ptx', 'mbar_inval_then_arrive', 1, 1, [o])
        text = (p.stdout + p.stderr).strip()
        if p.returncode != 1 or 'mbarrier.init' not in text:
            raise Fail('exit %d: %s' % (p.returncode, ' | '.join(text.splitlines()[-2:])))
        return 'an arrive on an invalidated mbarrier -> "%s"' % text.splitlines()[-1][:120]
    R.case('mbarrier_inval_then_arrive_is_an_error', inval_then_arrive)


# ---------------------------------------------------------------------------------------------------------------
# The TMA end-to-end program (tma_test.cu).

def relay(R, tag, p):
    """Turn tma_test's 'PASS name: detail' / 'FAIL name: detail' lines into cases (its summary line starts with
    'PASS:' or 'FAIL:' and is skipped)."""
    seen = False
    for line in (p.stdout or '').strip().splitlines():
        status, _, rest = line.partition(' ')
        name, colon, detail = rest.partition(':')
        if status in ('PASS', 'FAIL') and colon and name.strip():
            R.report(status, '%s_%s' % (tag, name.strip()), detail.strip())
            seen = True
    if p.returncode != 0:
        text = ((p.stdout or '') + (p.stderr or '')).strip().splitlines()
        R.report('FAIL', tag, 'exit %d: %s' % (p.returncode, ' | '.join(text[-2:])))
    elif not seen:
        R.report('FAIL', tag, 'no case lines printed')


def tma_cases(R):
    nvcc = ptxrun_cases.find_tool('nvcc', 'NVCC')
    src = os.path.join(HOP_DIR, 'tma_test.cu')
    if not nvcc:
        R.report('SKIP', 'tma_build', 'no nvcc')
        return
    exe = os.path.join(R.work, 'tma_test')
    ptxdir = os.path.join(R.work, 'tma_ptx')
    os.makedirs(ptxdir, exist_ok=True)
    built = {}

    def build():
        p = subprocess.run([nvcc, '-std=c++17', '-O2', '-arch=sm_90a', '-cudart', 'shared', src, '-o', exe],
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise Fail(' | '.join((p.stdout + p.stderr).strip().splitlines()[-3:]))
        p = subprocess.run([nvcc, '-std=c++17', '-O2', '-arch=compute_90a', '-ptx', src, '-o',
                            os.path.join(ptxdir, 'tma_test.ptx')], capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise Fail(' | '.join((p.stdout + p.stderr).strip().splitlines()[-3:]))
        built['ok'] = True
        return 'nvcc -arch=sm_90a (+ PTX for compute_90a)'
    R.case('tma_build', build)
    if not built:
        return
    if ptxrun_gpu.gpu_answers():
        try:
            relay(R, 'tma_gpu', subprocess.run([exe], capture_output=True, text=True, timeout=300))
        except subprocess.TimeoutExpired:
            R.report('FAIL', 'tma_gpu', 'timed out')
    else:
        R.report('SKIP', 'tma_gpu', 'no GPU answers')
    lib = os.path.join(os.path.dirname(os.path.abspath(R.ptxrun)), 'libcudaemu.so')
    if not os.path.exists(lib):
        R.report('SKIP', 'tma_emu', 'no %s' % lib)
        return
    env = dict(os.environ, LD_PRELOAD=lib, EMU_PTX_PATH=ptxdir)
    try:
        relay(R, 'tma_emu', subprocess.run([exe], capture_output=True, text=True, timeout=300, env=env))
    except subprocess.TimeoutExpired:
        R.report('FAIL', 'tma_emu', 'timed out')

    # a box whose address is not 16-byte aligned ("Tensors: Tiled Mode: Bounding Box"): the launch stops, the error
    # naming the rule (an H100 stops it with an illegal instruction)
    for name in ('misaligned_2d_sw128', 'misaligned_1d'):
        def misaligned(name=name):
            p = subprocess.run([exe, name], capture_output=True, text=True, timeout=300, env=env)
            text = (p.stdout + p.stderr).strip()
            if p.returncode == 0 or 'Bounding Box must be 16-byte aligned' not in text:
                raise Fail('exit %d: %s' % (p.returncode, ' | '.join(text.splitlines()[-2:])))
            return 'stopped: ' + next(line for line in text.splitlines() if 'Bounding Box' in line)[:160]
        R.case('tma_emu_' + name, misaligned)


def main():
    R = Runner(*ptxrun_cases.command_line(__doc__))
    R.assemble_each('sm_90a')
    wgmma_cases(R)
    wgmma_misuse_cases(R)
    mbarrier_cases(R)
    deadlock_cases(R)
    misc_cases(R)
    if not R.gpu:  # tma_test runs on a GPU itself, where one answers, beside its run on the emulator
        tma_cases(R)
    return R.summary('emu_hopper')


if __name__ == '__main__':
    sys.exit(main())
