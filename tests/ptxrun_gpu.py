#!/usr/bin/env python3
"""ptxrun's twin on a real GPU: the same command line, the kernel run by the CUDA driver instead of the emulator.

    python3 tests/ptxrun_gpu.py FILE.ptx KERNEL --grid X[,Y,Z] --block X[,Y,Z] [--smem BYTES] ARG...

ARG as for ptxrun (emu/ptxrun.c): in:PATH.npy, out:PATH.npy:DTYPE:COUNT (poisoned, all bits set, before the
launch), inout:PATH.npy:OUT.npy, u32:V, s32:V, u64:V, f32:V. The driver compiles the PTX for the GPU it finds
(cuModuleLoadDataEx), so what the emulator's tests expect from the PTX ISA can be checked against hardware with
the same cases: `python3 tests/test_emu_isa.py --gpu WORK` runs every case through `Gpu.run` in one process
(one context, each PTX file compiled once). Only the CUDA driver (libcuda.so.1) and NumPy are needed.
Exit 0 when the kernel ran, 1 with one line when the driver refused it or it faulted, 2 for bad usage, 77 when
no GPU answers.
"""
import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np

DTYPES = {'f16': np.float16, 'f32': np.float32, 'f64': np.float64, 'u8': np.uint8, 's8': np.int8,
          'u16': np.uint16, 's16': np.int16, 'u32': np.uint32, 's32': np.int32, 'u64': np.uint64, 's64': np.int64}
# cuda.h's enumerators used here
CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 5, 6
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
LOG_BYTES = 8192


class GpuError(Exception):
    """The driver refused a call, or the kernel faulted: str() is the one line to print."""


class Usage(Exception):
    """A command line ptxrun would refuse."""


class Gpu:
    """One CUDA context on device 0, and the PTX modules it has loaded."""

    def __init__(self):
        try:
            self.cu = ctypes.CDLL('libcuda.so.1')
        except OSError as e:
            raise GpuError('no CUDA driver here (%s)' % e)
        self.check(self.cu.cuInit(0), 'cuInit')
        self.device = ctypes.c_int()
        self.check(self.cu.cuDeviceGet(ctypes.byref(self.device), 0), 'cuDeviceGet')
        self.context = ctypes.c_void_p()
        self.check(self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), self.device),
                   'cuDevicePrimaryCtxRetain')
        self.check(self.cu.cuCtxSetCurrent(self.context), 'cuCtxSetCurrent')
        self.modules = {}
        name = ctypes.create_string_buffer(256)
        self.check(self.cu.cuDeviceGetName(name, 256, self.device), 'cuDeviceGetName')
        self.name = name.value.decode()

    def check(self, status, what):
        if status != 0:
            text = ctypes.c_char_p()
            self.cu.cuGetErrorName(status, ctypes.byref(text))
            raise GpuError('%s: %s (%d)' % (what, text.value.decode() if text.value else 'unknown error', status))

    def module(self, path):
        """The PTX file compiled by the driver for this GPU, once per file."""
        if path not in self.modules:
            with open(path, 'rb') as f:
                image = f.read() + b'\0'
            log = ctypes.create_string_buffer(LOG_BYTES)
            options = (ctypes.c_int * 2)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            values = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(LOG_BYTES))
            handle = ctypes.c_void_p()
            status = self.cu.cuModuleLoadDataEx(ctypes.byref(handle), image, 2, options, values)
            if status != 0:
                first = log.value.decode(errors='replace').strip().splitlines()[:1]
                self.check(status, 'cuModuleLoadDataEx %s%s' % (path, ': ' + first[0] if first else ''))
            self.modules[path] = handle
        return self.modules[path]

    def reset(self):
        """After a fault the context is lost (CUDA's sticky errors): a fresh primary context for the next run."""
        self.modules = {}
        self.cu.cuDevicePrimaryCtxReset_v2(self.device)
        self.check(self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), self.device), 'cuDevicePrimaryCtxRetain')
        self.check(self.cu.cuCtxSetCurrent(self.context), 'cuCtxSetCurrent')

    def run(self, argv):
        """ptxrun's command line (without the program's name), run here: (exit status, what the kernel printed,
        error line)."""
        try:
            launch = parse(argv)
        except (Usage, ValueError, OSError) as e:  # a command line or a file ptxrun would refuse
            return 2, '', 'ptxrun_gpu: %s\n' % e
        try:
            return 0, printed_by(lambda: self.launch(*launch)), ''
        except GpuError as e:
            self.reset()
            return 1, '', 'ptxrun_gpu: %s\n' % e

    def launch(self, ptx, kernel, grid, block, smem, args):
        function = ctypes.c_void_p()
        self.check(self.cu.cuModuleGetFunction(ctypes.byref(function), self.module(ptx), kernel.encode()),
                   'cuModuleGetFunction %s' % kernel)
        if smem > 48 * 1024:  # above the default, a kernel must ask for its dynamic shared memory
            self.check(self.cu.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
                       'cuFuncSetAttribute')
        buffers, values = [], []
        try:
            for kind, value in args:
                if kind == 'scalar':  # each held in 8 bytes: the driver copies the parameter's own size
                    values.append(value)
                    continue
                array, out_path = value
                pointer = ctypes.c_uint64()
                size = ctypes.c_size_t(array.nbytes)  # size_t arguments: ctypes would pass a Python int as an int
                self.check(self.cu.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(max(array.nbytes, 1))),
                           'cuMemAlloc')
                buffers.append((pointer, array, out_path))
                if kind == 'out':
                    self.check(self.cu.cuMemsetD8_v2(pointer, 0xff, size), 'cuMemsetD8')
                else:
                    self.check(self.cu.cuMemcpyHtoD_v2(pointer, array.ctypes.data_as(ctypes.c_void_p), size),
                               'cuMemcpyHtoD')
                values.append(pointer)
            params = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p)
                                                                 for v in values])
            self.check(self.cu.cuLaunchKernel(function, *[ctypes.c_uint(x) for x in grid + block], ctypes.c_uint(smem),
                                              None, params, None), 'cuLaunchKernel')
            self.check(self.cu.cuCtxSynchronize(), 'kernel %s' % kernel)
            for pointer, array, out_path in buffers:
                if out_path:
                    self.check(self.cu.cuMemcpyDtoH_v2(array.ctypes.data_as(ctypes.c_void_p), pointer,
                                                       ctypes.c_size_t(array.nbytes)), 'cuMemcpyDtoH')
                    np.save(out_path, array)
        finally:
            for pointer, _, _ in buffers:
                self.cu.cuMemFree_v2(pointer)


def printed_by(action):
    """What action() wrote to this process's standard output, as text: a kernel's printf reaches the host
    when the driver flushes the device's buffer (at cuCtxSynchronize), through the C library's stdout."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        try:
            action()
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        sink.seek(0)
        return sink.read().decode(errors='replace')


def dims(text):
    parts = text.split(',')
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise Usage('bad dimensions %r (positive integers X[,Y,Z])' % text)
    return [int(p) for p in parts] + [1] * (3 - len(parts))


def argument(text):
    """One kernel parameter as ptxrun reads it: ('scalar', c value) or (kind, (host array, path to write))."""
    kind, _, rest = text.partition(':')
    if kind == 'in':
        return 'in', (np.ascontiguousarray(np.load(rest)).ravel(), None)
    if kind == 'inout':
        path, _, out = rest.rpartition(':')
        return 'inout', (np.ascontiguousarray(np.load(path)).ravel(), out)
    if kind == 'out':
        path, dtype, count = rest.rsplit(':', 2)
        if dtype not in DTYPES or not count.isdigit() or int(count) == 0:
            raise Usage('bad output %r' % text)
        return 'out', (np.empty(int(count), DTYPES[dtype]), path)
    if kind in ('u32', 's32', 'u64'):
        number = int(rest, 0)
        return 'scalar', ctypes.c_uint64(number & ((1 << 64) - 1) if kind == 'u64' else number & 0xffffffff)
    if kind == 'f32':
        return 'scalar', ctypes.c_uint64(int(np.array(float(rest), np.float32).view(np.uint32)))
    raise Usage('unknown argument kind %r (in, out, inout, u32, s32, u64, f32)' % text)


def parse(argv):
    if len(argv) < 2:
        raise Usage('needs FILE.ptx and KERNEL')
    ptx, kernel, grid, block, smem, args = argv[0], argv[1], None, None, 0, []
    i = 2
    while i < len(argv):
        if argv[i] in ('--grid', '--block', '--smem'):
            if i + 1 >= len(argv):
                raise Usage('%s needs a value' % argv[i])
            if argv[i] == '--smem':
                smem = int(argv[i + 1])
            elif argv[i] == '--grid':
                grid = dims(argv[i + 1])
            else:
                block = dims(argv[i + 1])
            i += 2
            continue
        if argv[i].startswith('--'):
            raise Usage('%s is the emulator\'s alone (ptxrun)' % argv[i])
        args.append(argument(argv[i]))
        i += 1
    if grid is None or block is None:
        raise Usage('needs --grid and --block')
    return ptx, kernel, grid, block, smem, args


def gpu_answers():
    """Whether nvidia-smi sees a GPU (the tests' way of asking before they open the driver)."""
    try:
        return subprocess.run(['nvidia-smi', '-L'], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main():
    if len(sys.argv) >= 2 and sys.argv[1] in ('-h', '--help'):
        print(__doc__)
        return 0
    try:
        gpu = Gpu()
    except GpuError as e:
        print('ptxrun_gpu: no GPU answers (%s)' % e, file=sys.stderr)
        return 77
    status, out, err = gpu.run(sys.argv[1:])
    sys.stdout.write(out)
    sys.stderr.write(err)
    return status


if __name__ == '__main__':
    sys.exit(main())
