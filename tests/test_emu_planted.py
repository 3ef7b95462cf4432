#!/usr/bin/env python3
"""Planted bugs: does the PTX emulator catch them?

usage: test_emu_planted.py PTXRUN NVCC PLANTED_CU WORK_DIR

Compiles PLANTED_CU (tests/emu_planted/planted.cu) to PTX for compute_90 with -lineinfo, then for
each pair runs the correct kernel under ptxrun (it must exit 0 with the answer numpy gives) and its
broken twin (it must be caught: an error line with the expected words and exit 1, or -- for bugs
that only corrupt data -- an answer that differs from the right one). One line per check; exit 0
only if every correct kernel passes and every bug is caught.
"""
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxrun_cases  # noqa: E402

RUN_TIMEOUT = 60  # seconds for one ptxrun; a hang is a failure, not a pass

# "ptxrun: kernel K, PTX line N (file.cu:L), block (x,y,z) thread (x,y,z): <what> ..."
ERROR_RE = re.compile(r"ptxrun: kernel (?P<kernel>\w+), PTX line (?P<ptx>\d+)"
                      r"(?: \((?P<file>[^():]+):(?P<line>\d+)\))?"
                      r"(?:, block \((?P<block>[\d, ]+)\))?(?: thread \((?P<thread>[\d, ]+)\))?: (?P<what>.*)")


def marker_lines(cu_path):
    """Source line of each 'BUG: name' marker in planted.cu."""
    lines = {}
    with open(cu_path) as f:
        for number, text in enumerate(f, 1):
            m = re.search(r"BUG: (\w+)", text)
            if m:
                lines[m.group(1)] = number
    return lines


class Runner(ptxrun_cases.Runner):
    """The shared runner (ptxrun_cases.py), judging a run as a planted bug's check does."""

    def __init__(self, ptxrun, ptx, work):
        super().__init__(ptxrun, work, os.path.dirname(ptx))
        self.ptx = os.path.basename(ptx)
        self.env = None  # extra environment for ptxrun (the emulator's options), or None

    def verdict(self, ok, name, detail):
        self.report("PASS" if ok else "FAIL", name, detail)

    def run_kernel(self, kernel, grid, block, inputs, outputs, scalars=()):
        """inputs: list of arrays; outputs: list of (dtype, count); scalars: list of 'u32:V' etc.
        Returns (rc, stderr text, list of output arrays or None, command); rc None: it hung."""
        args = [self.inp(a) for a in inputs]
        out_paths = []
        for dtype, count in outputs:
            arg, path = self.out(dtype, count)
            args.append(arg)
            out_paths.append(path)
        args += list(scalars)
        cmd = [self.ptxrun, self.ptx, kernel, "--grid", ptxrun_cases.dims(grid), "--block", ptxrun_cases.dims(block)]
        try:
            p = self.launch(self.ptx, kernel, grid, block, args, timeout=RUN_TIMEOUT, env=self.env)
        except subprocess.TimeoutExpired:
            return None, f"timed out after {RUN_TIMEOUT} s", None, cmd
        results = None
        if p.returncode == 0:
            try:
                results = [np.load(path) for path in out_paths]
            except (OSError, ValueError) as e:
                return p.returncode, p.stderr + f"\n(cannot read the outputs: {e})", None, cmd
        return p.returncode, p.stderr, results, cmd

    @staticmethod
    def cmdline(cmd):
        return " ".join(cmd)

    def expect_correct(self, name, kernel, grid, block, inputs, outputs, expected, scalars=()):
        rc, err, results, cmd = self.run_kernel(kernel, grid, block, inputs, outputs, scalars)
        if rc != 0:
            self.verdict(False, name, f"{kernel} should run cleanly but rc={rc}: {err.strip()} [{self.cmdline(cmd)}]")
            return
        got = results[0].reshape(expected.shape)
        if got.dtype != expected.dtype or not np.array_equal(got, expected):
            bad = np.argwhere(~(got == expected))
            first = tuple(bad[0]) if len(bad) else None
            self.verdict(False, name, f"{kernel} gives a wrong answer: {len(bad)} of {expected.size} elements differ, "
                        f"first at {first}: got {got[first] if first is not None else '?'} want "
                        f"{expected[first] if first is not None else '?'} [{self.cmdline(cmd)}]")
            return
        self.verdict(True, name, f"{kernel} exit 0, all {expected.size} elements right")

    def expect_wrong(self, name, kernel, grid, block, inputs, outputs, expected, scalars=()):
        """A data-corrupting bug: caught if the answer differs from the right one (or the emulator
        stops the kernel with an error line)."""
        rc, err, results, cmd = self.run_kernel(kernel, grid, block, inputs, outputs, scalars)
        if rc is None:
            self.verdict(False, name, f"{kernel}: {err} [{self.cmdline(cmd)}]")
            return
        if rc != 0:
            m = ERROR_RE.search(err)
            if rc == 1 and m and m.group("kernel") == kernel:
                self.verdict(True, name, f"{kernel} caught by an error line: {m.group(0).strip()}")
            else:
                self.verdict(False, name, f"{kernel} rc={rc} without a proper error line: {err.strip()} "
                            f"[{self.cmdline(cmd)}]")
            return
        got = results[0].reshape(expected.shape)
        differ = int(np.count_nonzero(~(got == expected)))
        if differ == 0:
            self.verdict(False, name, f"{kernel} NOT caught: exit 0 and the right answer [{self.cmdline(cmd)}]")
            return
        nan = int(np.count_nonzero(np.isnan(got))) if got.dtype.kind == "f" else 0
        self.verdict(True, name, f"{kernel} caught as a wrong answer: {differ} of {expected.size} elements differ"
                    + (f" ({nan} NaN, i.e. poison)" if nan else ""))

    def expect_error(self, name, kernel, grid, block, inputs, outputs, words, line=None, where=None, scalars=()):
        """Caught if ptxrun exits 1 with an error line for this kernel containing `words`, naming
        planted.cu:`line` (when given) and block/thread `where` (when given)."""
        rc, err, _, cmd = self.run_kernel(kernel, grid, block, inputs, outputs, scalars)
        if rc is None:
            self.verdict(False, name, f"{kernel}: {err} [{self.cmdline(cmd)}]")
            return
        if rc == 0:
            self.verdict(False, name, f"{kernel} NOT caught: exit 0 [{self.cmdline(cmd)}]")
            return
        m = ERROR_RE.search(err)
        problems = []
        if rc != 1:
            problems.append(f"rc={rc}, want 1")
        if not m:
            problems.append("no 'ptxrun: kernel K, PTX line N (...)...: what' error line")
        else:
            if m.group("kernel") != kernel:
                problems.append(f"names kernel {m.group('kernel')}")
            if words.lower() not in m.group("what").lower():
                problems.append(f"does not say '{words}'")
            if line is not None:
                # the line the error names, or (a race) the other access's line it names after it
                named = {int(n) for n in re.findall(r"planted\.cu:(\d+)", m.group("what"))}
                if m.group("file") is not None and os.path.basename(m.group("file")) == "planted.cu":
                    named.add(int(m.group("line")))
                if not named:
                    problems.append("names no planted.cu source line")
                elif not named & set(line if isinstance(line, (tuple, list)) else (line,)):
                    problems.append(f"names planted.cu:{sorted(named)}, want planted.cu:{line}")
            if where is not None:
                blk, thr = where
                if m.group("block") is None or m.group("block").replace(" ", "") != blk:
                    problems.append(f"names block ({m.group('block')}), want ({blk})")
                if m.group("thread") is None or m.group("thread").replace(" ", "") != thr:
                    problems.append(f"names thread ({m.group('thread')}), want ({thr})")
        if problems:
            self.verdict(False, name, f"{kernel}: {'; '.join(problems)}: {err.strip()} [{self.cmdline(cmd)}]")
        else:
            self.verdict(True, name, f"{kernel} caught: {m.group(0).strip()}")


def main():
    if len(sys.argv) != 5:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    ptxrun, nvcc, cu, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    ptx = os.path.join(work, "planted.ptx")
    c = subprocess.run([nvcc, "-ptx", "-arch=compute_90", "-lineinfo", cu, "-o", ptx], capture_output=True, text=True)
    if c.returncode != 0:
        print(f"FAIL compile: {nvcc} -ptx failed:\n{c.stdout}{c.stderr}")
        return 1
    bug_line = marker_lines(cu)
    r = Runner(ptxrun, ptx, work)
    rng = np.random.default_rng(1234)

    # a. shared-memory block sum, with and without the barrier before reading another warp's data
    x = rng.integers(-8, 9, size=256).astype(np.float32)
    want = x.reshape(4, 64).sum(axis=1, dtype=np.float32)
    r.expect_correct("a.reduce ok", "reduce_ok", (4,), (64,), [x], [("f32", 4)], want)
    r.expect_wrong("a.reduce missing_sync", "reduce_missing_sync", (4,), (64,), [x], [("f32", 4)], want)

    # b. cp.async global->shared, with and without cp.async.wait_group
    x = rng.integers(-100, 100, size=256).astype(np.float32)
    t = np.arange(64)
    want = (2.0 * x.reshape(64, 4)[(t + 32) % 64]).astype(np.float32).reshape(256)
    r.expect_correct("b.cp_async ok", "cp_async_ok", (1,), (64,), [x], [("f32", 256)], want)
    r.expect_error("b.cp_async missing_wait", "cp_async_missing_wait", (1,), (64,), [x], [("f32", 256)],
                   "the copy is in flight")

    # c. guarded copy; the broken guard writes out[n], one element past the buffer (thread 100 = block 1, thread 36)
    n = 100
    x = rng.standard_normal(n).astype(np.float32)
    want = x + np.float32(1.0)
    r.expect_correct("c.copy ok", "copy_ok", (2,), (64,), [x], [("f32", n)], want, scalars=[f"u32:{n}"])
    r.expect_error("c.copy oob_store", "copy_oob_store", (2,), (64,), [x], [("f32", n)], "out-of-bounds",
                   line=bug_line["oob_store"], where=("1,0,0", "36,0,0"), scalars=[f"u32:{n}"])

    # d. ldmatrix.x4 transpose of a 16x16 b16 tile, with .trans and without
    x = (rng.permutation(256).astype(np.float16) / np.float16(4)).astype(np.float16)  # distinct values
    want = x.reshape(16, 16).T.copy()
    r.expect_correct("d.ldmatrix ok", "ldmatrix_ok", (1,), (32,), [x], [("f16", 256)], want)
    r.expect_wrong("d.ldmatrix wrong_trans", "ldmatrix_wrong_trans", (1,), (32,), [x], [("f16", 256)], want)

    # e. neighbour swap through shared memory; the broken one has __syncthreads in a branch of the even lanes
    x = rng.integers(1, 1000, size=32).astype(np.float32)
    want = x[np.arange(32) ^ 1]
    r.expect_correct("e.swap ok", "swap_ok", (1,), (32,), [x], [("f32", 32)], want)
    r.expect_error("e.swap divergent_barrier", "swap_divergent_barrier", (1,), (32,), [x], [("f32", 32)], "barrier",
                   line=bug_line["divergent_barrier"])

    # f. float4 loads from in + 4 (aligned) and in + 1 (misaligned)
    x = rng.standard_normal(4 * 32 + 8).astype(np.float32)
    r.expect_correct("f.vec_load ok", "vec_load_ok", (1,), (32,), [x], [("f32", 128)], x[4:132].copy())
    r.expect_error("f.vec_load misaligned", "vec_load_misaligned", (1,), (32,), [x], [("f32", 128)], "misaligned",
                   line=bug_line["misaligned"])

    # g. producer/consumer through named barrier 1; the broken consumer warp waits at barrier 2
    x = rng.integers(-50, 50, size=32).astype(np.float32)
    want = (np.float32(3.0) * x).astype(np.float32)
    r.expect_correct("g.named_barrier ok", "named_barrier_ok", (1,), (64,), [x], [("f32", 32)], want)
    r.expect_error("g.named_barrier deadlock", "named_barrier_deadlock", (1,), (64,), [x], [("f32", 32)], "deadlock")

    # h-k: races racecheck must name: both threads' lines, the address (the answer may even be right)
    x = rng.integers(-50, 50, size=256).astype(np.float32)
    t = np.arange(64)
    want = (x[(t + 32) % 64] + x[64 + (t + 32) % 64]).astype(np.float32)
    r.expect_correct("h.tiles ok", "tiles_ok", (1,), (64,), [x[:128]], [("f32", 64)], want)
    r.expect_error("h.tiles reuse_without_sync", "tiles_reuse_without_sync", (1,), (64,), [x[:128]], [("f32", 64)],
                   "racecheck", line=bug_line["reuse_without_sync"])
    want = x[:32][np.arange(32) ^ 1]
    r.expect_correct("i.lane_swap ok", "lane_swap_ok", (1,), (32,), [x[:32]], [("f32", 32)], want)
    r.expect_error("i.lane_swap no_syncwarp", "lane_swap_no_syncwarp", (1,), (32,), [x[:32]], [("f32", 32)],
                   "racecheck", line=bug_line["no_syncwarp"])
    want = x.reshape(4, 64)[:, (t + 32) % 64].sum(axis=0, dtype=np.float32)
    r.expect_correct("j.two_stage ok", "two_stage_ok", (1,), (64,), [x], [("f32", 64)], want)
    r.expect_error("j.two_stage stage_reused_early", "two_stage_reused_early", (1,), (64,), [x], [("f32", 64)],
                   "racecheck", line=bug_line["stage_reused_early"])
    want = x[32:64].copy()
    r.expect_correct("k.last_writer ok", "last_writer_ok", (1,), (64,), [x[:64]], [("f32", 32)], want)
    r.expect_error("k.last_writer write_write", "last_writer_write_write", (1,), (64,), [x[:64]], [("f32", 32)],
                   "racecheck", line=bug_line["write_write"])

    # l-m: strong accesses: atomics do not race with each other, but do with a plain store; a release and
    # an acquire order the data they guard, a plain load of the flag orders nothing
    values = rng.integers(0, 1000, size=64).astype(np.uint32)
    want = np.bincount(values % 32, minlength=32).astype(np.uint32)
    r.expect_correct("l.histogram ok", "histogram_ok", (1,), (64,), [values], [("u32", 32)], want)
    r.expect_error("l.histogram bins_not_zeroed_first", "histogram_unsynced", (1,), (64,), [values], [("u32", 32)],
                   "racecheck", line=bug_line["bins_not_zeroed_first"])
    x = rng.integers(-50, 50, size=32).astype(np.float32)
    r.expect_correct("m.message ok", "message_ok", (1,), (64,), [x], [("f32", 32)], x)
    r.expect_error("m.message plain_flag", "message_plain_flag", (1,), (64,), [x], [("f32", 32)], "racecheck",
                   line=bug_line["plain_flag"])

    # n: a warp spinning on a flag another warp sets: no hang, no race
    r.expect_correct("n.spin_wait ok", "spin_wait_ok", (1,), (64,), [x, np.zeros(1, dtype=np.uint32)],
                     [("f32", 32)], x)

    # o: a bulk copy's bytes are there once its mbarrier's phase says so, not after a barrier
    x = rng.integers(-50, 50, size=64).astype(np.float32)
    r.expect_correct("o.bulk_copy ok", "bulk_copy_ok", (1,), (64,), [x], [("f32", 64)], x)
    r.expect_error("o.bulk_copy skip_the_wait", "bulk_copy_skip_the_wait", (1,), (64,), [x], [("f32", 64)],
                   "bulk copy completing on the mbarrier", line=bug_line["skip_the_wait"])
    r.expect_error("o.bulk_copy unfenced_init", "bulk_copy_unfenced_init", (1,), (64,), [x], [("f32", 64)],
                   "may not see its mbarrier.init", line=bug_line["unfenced_init"])

    # p: a bulk copy to global memory reads its shared source until its wait says it has
    r.expect_correct("p.bulk_store ok", "bulk_store_ok", (1,), (64,), [x], [("f32", 64)], x)
    r.expect_error("p.bulk_store reused_before_read", "bulk_store_reused_before_read", (1,), (64,), [x],
                   [("f32", 64)], "asynchronous read still in flight", line=bug_line["reused_before_read"])

    # q: an .aligned ldmatrix after a loop whose trip count differs per lane: the default model reconverges
    # the warp where the loop ends; the strict one only at a synchronisation, so the twin without
    # __syncwarp() is an error there
    x = rng.standard_normal(256).astype(np.float16)  # low mantissa bits that differ: the trip counts
    bits = x.view(np.uint16)
    trips = bits[:32] & 7
    assert len(set(trips.tolist())) > 1
    sums = np.array([int(bits[:t].astype(np.uint64).sum()) for t in trips], dtype=np.uint32)
    want = np.concatenate([x.reshape(16, 16).T.reshape(-1).view(np.uint32), sums])
    for env in (None, {"EMU_CONVERGENCE": "strict"}):
        r.env = env
        mode = "strict" if env else "default"
        r.expect_correct(f"q.reconverged ok ({mode})", "reconverged_ldmatrix_ok", (1,), (32,), [x], [("u32", 160)],
                         want)
    r.env = None
    r.expect_correct("q.not_reconverged (default: the loop's end reconverges it)", "diverged_ldmatrix_not_reconverged",
                     (1,), (32,), [x], [("u32", 160)], want)
    r.env = {"EMU_CONVERGENCE": "strict"}
    r.expect_error("q.not_reconverged (strict)", "diverged_ldmatrix_not_reconverged", (1,), (32,), [x],
                   [("u32", 160)], "not converged", line=bug_line["not_reconverged"])
    r.env = None

    # r: device functions (PTX ISA 9.0, sections 9.7.12.5 "call" and 9.7.12.6 "ret"): a recursion with a base case
    # that misses is a stack overflow, named at the call; a call through a pointer that is no function's address
    # is undefined, an error naming the thread
    n = np.concatenate([rng.integers(0, 12, 31), [1]]).astype(np.int32)
    ways = [1, 2]  # ways(0) = 1, ways(1) = ways(0) + ways(-1) = 2
    for i in range(2, 16):
        ways.append(ways[-1] + ways[-2])
    want = np.array([ways[int(v)] for v in n], dtype=np.int32)
    r.expect_correct("r.recursion ok", "ways_recursion_ok", (1,), (32,), [n], [("s32", 32)], want)
    r.expect_error("r.recursion runaway_recursion", "ways_recursion_runaway", (1,), (32,), [n], [("s32", 32)],
                   "stack overflow", line=bug_line["runaway_recursion"])
    x = rng.integers(-1000, 1000, 32).astype(np.int32)
    want = np.where(np.arange(32) % 2 == 0, 2 * x, x * x).astype(np.int32)
    r.expect_correct("s.pointer_call ok", "pointer_call_ok", (1,), (32,), [x], [("s32", 32)], want)
    r.expect_error("s.pointer_call bad_pointer", "pointer_call_bad_pointer", (1,), (32,), [x], [("s32", 32)],
                   "not the address of a function", line=bug_line["bad_pointer"], where=("0,0,0", "7,0,0"))

    # t-v: races in global memory, within a block and between blocks (the answers are right in the emulator's
    # schedule); a launch that orders its blocks by a fence and an atomic ticket is not a race
    x = rng.integers(-50, 50, size=256).astype(np.float32)
    want = np.concatenate([x[:32], x[:32] + x[32:64]]).astype(np.float32)
    r.expect_correct("t.global_handoff ok", "global_handoff_ok", (1,), (64,), [x[:64]], [("f32", 64)], want)
    r.expect_error("t.global_handoff global_no_barrier", "global_handoff_no_barrier", (1,), (64,), [x[:64]],
                   [("f32", 64)], "racecheck", line=bug_line["global_no_barrier"])
    r.expect_correct("u.two_blocks ok", "two_blocks_ok", (2,), (64,), [x[:64]], [("f32", 64)], x[:64].copy())
    r.expect_error("u.two_blocks blocks_overlap", "two_blocks_overlap", (2,), (64,), [x[:64]], [("f32", 64)],
                   "two blocks of one launch", line=bug_line["blocks_overlap"])
    r.expect_error("u.two_blocks byte_of_other_block", "two_blocks_byte_of_other", (2,), (64,), [x[:64]],
                   [("f32", 64)], "two blocks of one launch",
                   line=(bug_line["blocks_overlap"], bug_line["byte_of_other_block"]))
    r.expect_correct("u.halves ok", "halves_ok", (2,), (64,), [x[:64]], [("f32", 64)], x[:64].copy())
    r.expect_error("u.halves word_over_halves", "halves_word_over_halves", (2,), (64,), [x[:64]], [("f32", 64)],
                   "two blocks of one launch", line=bug_line["word_over_halves"])
    zeros, ticket = np.zeros(4, dtype=np.float32), np.zeros(1, dtype=np.uint32)
    want = np.array([x.sum(dtype=np.float32)], dtype=np.float32)
    r.expect_correct("v.last_block ok", "last_block_ok", (4,), (64,), [x, zeros, ticket], [("f32", 1)], want)
    r.expect_error("v.last_block fence_dropped", "last_block_fence_dropped", (4,), (64,), [x, zeros, ticket],
                   [("f32", 1)], "two blocks of one launch", line=bug_line["fence_dropped"])

    # w: a message through fences and relaxed accesses, as the memory model allows it; without the reader's
    # fence, a race
    x = rng.integers(-50, 50, size=32).astype(np.float32)
    r.expect_correct("w.fenced_message ok", "fenced_message_ok", (1,), (64,), [x], [("f32", 32)], x)
    r.expect_error("w.fenced_message no_reader_fence", "fenced_message_no_reader_fence", (1,), (64,), [x],
                   [("f32", 32)], "racecheck", line=bug_line["no_reader_fence"])
    r.expect_error("w.fenced_message no_writer_fence", "fenced_message_no_writer_fence", (1,), (64,), [x],
                   [("f32", 32)], "racecheck", line=bug_line["no_writer_fence"])

    # x: a race on one byte, or one word, inside a 16-byte store, after bytes that race with nothing
    x = rng.integers(-50, 50, size=4).astype(np.float32)
    for space in ("shared", "global"):
        for part, first, ok in (("byte", 0x5, f"vector_{space}_ok"), ("word", 0x4, f"vector_{space}_word_ok")):
            r.expect_correct(f"x.byte_then_vector {space} {part} ok", ok, (1,), (64,), [x], [("f32", 4)], x)
            r.expect_error(f"x.byte_then_vector {space} {part}_in_vector", f"vector_{space}_{part}_race", (1,),
                           (64,), [x], [("f32", 4)], f"shared {first:#x} races" if space == "shared" else "racecheck",
                           line=bug_line["byte_in_vector"])

    # y-z: lanes of one warp are ordered where they meet, not by what other lanes of the warp do
    x = rng.integers(-50, 50, size=32).astype(np.float32)
    r.expect_correct("y.half_warps ok", "half_warps_ok", (1,), (32,), [x], [("f32", 32)], x[np.arange(32) ^ 1])
    r.expect_error("y.half_warps other_half", "half_warps_other_half", (1,), (32,), [x], [("f32", 32)], "racecheck",
                   line=bug_line["other_half"])
    r.expect_correct("z.fence_between ok", "fence_between_ok", (1,), (32,), [x], [("f32", 1)], x[1:2])
    r.expect_error("z.fence_between fence_between", "fence_between_lanes", (1,), (32,), [x], [("f32", 1)],
                   "racecheck", line=bug_line["fence_between"])

    # aa: a release and an acquire order the lanes that make them, not a third lane of the warp
    r.expect_correct("aa.lane_message ok", "lane_message_ok", (1,), (32,), [x], [("f32", 1)], x[1:2])
    r.expect_error("aa.lane_message no_acquire", "lane_message_no_acquire", (1,), (32,), [x], [("f32", 2)],
                   "racecheck", line=bug_line["no_acquire"])

    # bb: the bytes of a word stored apart, then the whole word, then one byte of it
    x = rng.integers(0, 255, size=4).astype(np.uint32)
    word = int(x[0] | x[1] << 8 | x[2] << 16 | x[3] << 24)
    want = np.array([word + 0x01010101, word, x[1] + 1], dtype=np.uint32)
    for space in ("shared", "global"):
        r.expect_correct(f"bb.bytes_and_word {space} ok", f"bytes_{space}_ok", (1,), (64,), [x], [("u32", 3)], want)
        r.expect_error(f"bb.bytes_and_word {space} bytes_then_word", f"bytes_{space}_then_word", (1,), (64,), [x],
                       [("u32", 3)], "racecheck", line=bug_line["bytes_then_word"])
        r.expect_error(f"bb.bytes_and_word {space} word_then_byte", f"bytes_{space}_word_then_byte", (1,), (64,),
                       [x], [("u32", 3)], "racecheck", line=bug_line["word_then_byte"])

    # cc: one lane of a warp reads past the end of the block's shared memory, the others inside it
    x = rng.standard_normal(64).astype(np.float32)
    r.expect_correct("cc.shared_edge ok", "shared_edge_ok", (1,), (64,), [x], [("f32", 64)], np.roll(x, -1))
    r.expect_error("cc.shared_edge past_end", "shared_edge_past_end", (1,), (64,), [x], [("f32", 64)],
                   "out-of-bounds shared", line=bug_line["shared_past_end"], where=("0,0,0", "37,0,0"))

    return r.summary("emu_planted")


if __name__ == "__main__":
    sys.exit(main())
