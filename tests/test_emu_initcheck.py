"""initcheck: a kernel that reads memory nothing has written is stopped with one line naming the read.

Global memory counts as written once the host copied or set it (cudaMemcpy, cudaMemset; here ptxrun's
in: buffers) or a kernel stored to it; shared memory, once a thread of the block stored to it or a
cp.async / bulk copy landed in it; a thread's .local memory, once that thread stored to it (it starts
every block as poison, so nothing of an earlier block's thread shows through). EMU_INITCHECK=0 turns
the check off, and then the same kernels run. Registers are not initchecked, but they too start every
block as poison: no block reads a register an earlier block wrote.

Run as: test_emu_initcheck.py PATH_TO_PTXRUN WORK_DIR
"""
import os
import subprocess
import sys

import numpy as np

ptxrun, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
PTX = """
.version 9.0
.target sm_90
.address_size 64
.shared .align 4 .b8 tile[128];

// out[i] = in[i] + 1: reads its input, writes its output
.visible .entry copy_plus_one(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<2>; .reg .b64 %rd<6>; .reg .f32 %f<3>;
  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4]; add.f32 %f2, %f1, 0f3F800000; st.global.f32 [%rd5], %f2;
  ret;
}

// every thread reads the shared word of the thread after it, but only even threads wrote theirs
.visible .entry shared_half_written(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .f32 %f<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x; and.b32 %r2, %r1, 1; setp.ne.s32 %p1, %r2, 0;
  mov.u32 %r3, tile; shl.b32 %r4, %r1, 2; add.s32 %r5, %r3, %r4;
  @!%p1 st.shared.f32 [%r5], 0f3F800000;
  bar.sync 0;
  add.s32 %r6, %r1, 1; and.b32 %r6, %r6, 31; shl.b32 %r7, %r6, 2; add.s32 %r7, %r3, %r7;
  ld.shared.f32 %f1, [%r7];
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.f32 [%rd3], %f1;
  ret;
}

// even threads store their global word, then every thread reads its own, a coalesced read: thread 1's is the
// first nobody wrote
.visible .entry global_half_written(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<2>; .reg .b32 %r<3>; .reg .b64 %rd<4>; .reg .f32 %f<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x; and.b32 %r2, %r1, 1; setp.ne.s32 %p1, %r2, 0;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;
  @!%p1 st.global.f32 [%rd3], 0f3F800000;
  bar.sync 0;
  ld.global.f32 %f1, [%rd3];
  st.global.f32 [%rd3], %f1;
  ret;
}

// every thread stores its global word (one coalesced store), then reads the next thread's: each word was written
.visible .entry global_written_then_rotated(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<6>; .reg .f32 %f<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x; cvt.rn.f32.u32 %f1, %r1;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.f32 [%rd3], %f1;
  bar.sync 0;
  add.s32 %r2, %r1, 1; and.b32 %r2, %r2, 31; mul.wide.u32 %rd4, %r2, 4; add.s64 %rd5, %rd1, %rd4;
  ld.global.f32 %f2, [%rd5];
  bar.sync 0;
  st.global.f32 [%rd3], %f2;
  ret;
}

// every thread copies its input word into shared memory with cp.async (one warp's copies, checked together
// where they all lie in bounds: sync.c), waits for it, and stores it out
.visible .entry cp_async_copy(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<6>; .reg .f32 %f<2>;
  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
  mov.u32 %r2, tile; shl.b32 %r3, %r1, 2; add.s32 %r2, %r2, %r3;
  cp.async.ca.shared.global [%r2], [%rd4], 4;
  cp.async.wait_all;
  ld.shared.f32 %f1, [%r2];
  st.global.f32 [%rd5], %f1;
  ret;
}

// block 0's threads store to their .local word, then every thread reads its own: block 1's never wrote
.visible .entry local_before_write(.param .u64 in, .param .u64 out)
{
  .local .align 4 .b8 scratch[8];
  .reg .pred %p<2>; .reg .b32 %r<4>; .reg .b64 %rd<6>; .reg .f32 %f<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x; setp.ne.s32 %p1, %r1, 0;
  mov.u64 %rd2, scratch;
  @!%p1 st.local.f32 [%rd2], 0f40400000;
  ld.local.f32 %f1, [%rd2];
  mov.u32 %r2, %tid.x; mad.lo.s32 %r3, %r1, 32, %r2;
  mul.wide.u32 %rd3, %r3, 4; add.s64 %rd4, %rd1, %rd3; st.global.f32 [%rd4], %f1;
  ret;
}

// Registers start every block as poison too. Block 0 writes %f1 = 3.0 before its store, block 1 reaches the
// store without writing it: past a guarded write, around a branch, and where a loop reads the register it
// writes later. Block 1 must store poison (NaN), not the 3.0 block 0 left in the same host registers.
.visible .entry register_guarded_write(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<2>; .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .f32 %f<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x; setp.ne.s32 %p1, %r1, 0;
  @!%p1 mov.f32 %f1, 0f40400000;
  mov.u32 %r2, %tid.x; mad.lo.s32 %r3, %r1, 32, %r2;
  mul.wide.u32 %rd2, %r3, 4; add.s64 %rd3, %rd1, %rd2; st.global.f32 [%rd3], %f1;
  ret;
}

.visible .entry register_branched_write(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<2>; .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .f32 %f<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x; setp.ne.s32 %p1, %r1, 0;
  @%p1 bra SKIP;
  mov.f32 %f1, 0f40400000;
SKIP:
  mov.u32 %r2, %tid.x; mad.lo.s32 %r3, %r1, 32, %r2;
  mul.wide.u32 %rd2, %r3, 4; add.s64 %rd3, %rd1, %rd2; st.global.f32 [%rd3], %f1;
  ret;
}

// each pass copies %f1, then writes it: block 0's second pass copies the 3.0 its first wrote, block 1 leaves
// after its first
.visible .entry register_loop_carried(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<3>; .reg .b32 %r<5>; .reg .b64 %rd<4>; .reg .f32 %f<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x; setp.ne.s32 %p1, %r1, 0;
  mov.u32 %r4, 0;
LOOP:
  mov.f32 %f2, %f1;
  @%p1 bra DONE;
  mov.f32 %f1, 0f40400000;
  add.u32 %r4, %r4, 1; setp.lt.u32 %p2, %r4, 2;
  @%p2 bra LOOP;
DONE:
  mov.u32 %r2, %tid.x; mad.lo.s32 %r3, %r1, 32, %r2;
  mul.wide.u32 %rd2, %r3, 4; add.s64 %rd3, %rd1, %rd2; st.global.f32 [%rd3], %f2;
  ret;
}

// every thread but the last stores its shared word, then the whole warp reads the last one's: one word for
// all (a broadcast), which nobody wrote
.visible .entry shared_broadcast_unwritten(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<4>; .reg .f32 %f<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x; setp.eq.s32 %p1, %r1, 31;
  mov.u32 %r3, tile; shl.b32 %r4, %r1, 2; add.s32 %r5, %r3, %r4;
  @!%p1 st.shared.f32 [%r5], 0f3F800000;
  bar.sync 0;
  ld.shared.f32 %f1, [tile+124];
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.f32 [%rd3], %f1;
  ret;
}
"""
path = os.path.join(work, "initcheck.ptx")
with open(path, "w") as f:
    f.write(PTX)
x = os.path.join(work, "x.npy")
np.save(x, np.arange(32, dtype=np.float32))
failures = []


def run(kernel, first, env=None, grid=1):
    return subprocess.run([ptxrun, path, kernel, "--grid", str(grid), "--block", "32", first,
                           f"out:{os.path.join(work, 'y.npy')}:f32:{32 * grid}"], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})))


def expect(label, result, code, words):
    ok = result.returncode == code and all(w in result.stderr for w in words)
    print(f"{'PASS' if ok else 'FAIL'} {label}: exit {result.returncode} {result.stderr.strip()[:160]}")
    if not ok:
        failures.append(label)


unwritten = f"out:{os.path.join(work, 'unwritten.npy')}:f32:32"
expect("input copied in by the host: runs", run("copy_plus_one", f"in:{x}"), 0, [])
expect("input nobody wrote: caught", run("copy_plus_one", unwritten), 1,
       ["read of global memory", "nothing has written", "byte 0 of the 128-byte"])
expect("the same with EMU_INITCHECK=0: runs", run("copy_plus_one", unwritten, {"EMU_INITCHECK": "0"}), 0, [])
# with racecheck off a warp's coalesced access is initchecked as one run of bytes (access.c): the same reports
expect("input nobody wrote, racecheck off: caught", run("copy_plus_one", unwritten, {"EMU_RACECHECK": "0"}), 1,
       ["read of global memory", "nothing has written", "byte 0 of the 128-byte"])
for racecheck in ("1", "0"):
    result = run("global_written_then_rotated", f"in:{x}", {"EMU_RACECHECK": racecheck})
    y = np.load(os.path.join(work, "y.npy")) if result.returncode == 0 else None
    ok = y is not None and np.array_equal(y, (np.arange(32) + 1) % 32)
    print(f"{'PASS' if ok else 'FAIL'} a coalesced store marks every word written (EMU_RACECHECK={racecheck}): "
          f"exit {result.returncode} {result.stderr.strip()[:160]}")
    if not ok:
        failures.append(f"coalesced store marks (racecheck {racecheck})")
    expect(f"global words only even threads wrote (EMU_RACECHECK={racecheck}): thread 1 caught, byte 4",
           run("global_half_written", f"in:{x}", {"EMU_RACECHECK": racecheck}), 1,
           ["read of global memory", "byte 4 of the 128-byte", "thread (1,0,0)"])
for racecheck in ("1", "0"):
    result = run("cp_async_copy", f"in:{x}", {"EMU_RACECHECK": racecheck})
    y = np.load(os.path.join(work, "y.npy")) if result.returncode == 0 else None
    ok = y is not None and np.array_equal(y, np.arange(32))
    print(f"{'PASS' if ok else 'FAIL'} cp.async of words the host wrote (EMU_RACECHECK={racecheck}): "
          f"exit {result.returncode} {result.stderr.strip()[:160]}")
    if not ok:
        failures.append(f"cp.async of written words (racecheck {racecheck})")
    expect(f"cp.async of words nobody wrote (EMU_RACECHECK={racecheck}): caught",
           run("cp_async_copy", unwritten, {"EMU_RACECHECK": racecheck}), 1,
           ["PTX line 73", "read of global memory", "nothing has written", "byte 0 of the 128-byte", "thread (0,0,0)"])
expect("shared word no thread wrote: caught", run("shared_half_written", f"in:{x}"), 1,
       ["read of shared memory", "no thread of this block has written", "thread (0,0,0)"])
for racecheck in ("1", "0"):  # with racecheck off, the warp's flags are read as one run (access.c)
    expect(f"shared word no thread wrote, read by the whole warp (EMU_RACECHECK={racecheck}): caught",
           run("shared_broadcast_unwritten", f"in:{x}", {"EMU_RACECHECK": racecheck}), 1,
           ["read of shared memory", "no thread of this block has written", "thread (0,0,0)"])
expect("local word this thread never wrote (block 1): caught", run("local_before_write", f"in:{x}", grid=2), 1,
       ["read of local memory", "this thread has not written", "block (1,0,0)"])
result = run("local_before_write", f"in:{x}", {"EMU_INITCHECK": "0", "EMU_THREADS": "1"}, grid=2)
y = np.load(os.path.join(work, "y.npy")) if result.returncode == 0 else None
ok = y is not None and np.all(y[:32] == 3.0) and np.all(np.isnan(y[32:]))
print(f"{'PASS' if ok else 'FAIL'} the same with EMU_INITCHECK=0: block 1 reads poison, not block 0's 3.0: "
      f"{None if y is None else (y[0], y[32])}")
if not ok:
    failures.append("local poison per block")
for kernel in ("register_guarded_write", "register_branched_write", "register_loop_carried"):
    result = run(kernel, f"in:{x}", {"EMU_THREADS": "1"}, grid=2)  # one host thread: block 1 where block 0 ran
    y = np.load(os.path.join(work, "y.npy")) if result.returncode == 0 else None
    ok = y is not None and np.all(y[:32] == 3.0) and np.all(np.isnan(y[32:]))
    print(f"{'PASS' if ok else 'FAIL'} {kernel}: block 1 reads a poisoned register, not block 0's 3.0: "
          f"{result.stderr.strip()[:160] if y is None else (y[0], y[32])}")
    if not ok:
        failures.append(kernel)
print(f"test_emu_initcheck: {len(failures)} failures")
sys.exit(1 if failures else 0)
