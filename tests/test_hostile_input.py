"""Hostile input to ptxrun and the PTX parser: every case ends in one printable line on stderr and a
non-zero exit, within seconds, never a crash, a hang or a wrong answer with exit 0; and the valid
kernels among them run.

Each case is one a fuzzing campaign found (tests/fuzz/, tests/README.md), in one of these classes:
  sizes    a size, count or index from the PTX, a .npy header or the command line, unchecked
  labels   a label defined twice, a register, variable, parameter or kernel declared twice, a branch
           to a label that does not exist: refused, naming the line
  numbers  numbers read without a check (--smem abc as 0) or negated with undefined behaviour
  lines    an error that echoed raw input (a newline) and so was not one line
  speed    a kernel with many distinct constants, parsed in linear time

Run as: test_hostile_input.py PATH_TO_PTXRUN WORK_DIR
"""
import os
import resource
import subprocess
import sys
import time

import numpy as np

ptxrun, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
failures = []
HEAD = ".version 9.0\n.target sm_90\n.address_size 64\n"
# out[tid] = tid: a valid kernel the cases below change one thing in
BODY = """{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
"""


def write(name, text, mode="w"):
    path = os.path.join(work, name)
    with open(path, mode) as f:
        f.write(text)
    return path


def run(args, timeout=20):
    start = time.monotonic()
    try:
        r = subprocess.run([ptxrun] + args, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, b"", time.monotonic() - start
    return r.returncode, r.stderr, time.monotonic() - start


def one_line(stderr):
    """One line, ended by a newline, of printable ASCII."""
    return stderr.endswith(b"\n") and stderr.count(b"\n") == 1 and all(32 <= c < 127 for c in stderr[:-1])


def refused(name, args, fragment, exit_code=None):
    """ptxrun refuses: exit 1 or 2, one line on stderr containing fragment."""
    code, err, took = run(args)
    text = err.decode("latin-1").strip()
    if code is None:
        failures.append(f"{name}: still running after 20 s (a hang)")
    elif code < 0:
        failures.append(f"{name}: killed by signal {-code}: {text[:300]}")
    elif code == 0:
        failures.append(f"{name}: accepted (exit 0); expected an error containing '{fragment}'")
    elif exit_code is not None and code != exit_code:
        failures.append(f"{name}: exit {code}, expected {exit_code}: {text[:300]}")
    elif not one_line(err):
        failures.append(f"{name}: the error is not one printable line: {err[:300]!r}")
    elif fragment not in text:
        failures.append(f"{name}: expected '{fragment}' in: {text}")


def kernel(name, body=BODY, params="(.param .u64 out)", directives="", head=HEAD, extra=""):
    return write(name + ".ptx", f"{head}{extra}.visible .entry k{params}{directives}\n{body}")


def runs(name, ptx, block=32, expect=None):
    """ptxrun runs kernel k of ptx with one out buffer and exit 0, and out holds expect (default tid)."""
    out = os.path.join(work, name + "_out.npy")
    code, err, _ = run([ptx, "k", "--grid", "1", "--block", str(block), f"out:{out}:u32:{block}"])
    if code != 0:
        failures.append(f"{name}: a valid kernel was refused (exit {code}): {err.decode('latin-1').strip()[:300]}")
        return
    got = np.load(out)
    want = np.arange(block, dtype=np.uint32) if expect is None else np.asarray(expect, dtype=np.uint32)
    if not np.array_equal(got, want):
        failures.append(f"{name}: wrong result {got[:8]} (expected {want[:8]})")


def launch(ptx, *extra):
    return [ptx, "k", "--grid", "1", "--block", "32", f"out:{os.path.join(work, 'o.npy')}:u32:32", *extra]


# ---- sizes ----------------------------------------------------------------------------------------
refused("file_index_2^31", launch(kernel("file31", extra='.file 2147483648 "a.cu"\n')), ".file needs an index")
refused("file_index_1e9", launch(kernel("file1e9", extra='.file 1000000000 "a.cu"\n')), ".file needs an index")
refused("reg_count_2e9", launch(kernel("regs", body=BODY.replace("%r<4>", "%r<2000000000>"))),
        "a register count must be an integer from 0 to 262144")
refused("global_array_2^40", launch(kernel("global", extra=".global .align 4 .b8 big[1099511627776];\n")),
        ".global variable 'big' is larger than")
refused("global_array_wraps", launch(kernel("global_wrap", extra=".global .b32 w[4611686018427387904][4];\n")),
        ".global variable 'w' is larger than")
refused("param_array_2^32", launch(kernel("param", params="(.param .u64 out, .param .align 4 .b8 p[4294967296])")),
        "parameter's array size must be an integer")
refused("local_array_2^40",
        launch(kernel("local", body=BODY.replace("ret;", ".local .align 4 .b8 depot[1099511627776];\n  ret;"))),
        ".local variable 'depot' is larger than")
refused("local_total", launch(kernel("local_total", body=BODY.replace(
    "ret;", ".local .b8 a[400000];\n  .local .b8 b[400000];\n  ret;"))), "bytes of .local memory per thread")
# A block whose .local memory the host cannot give (1024 threads x 500,000 bytes, under an address-space
# limit of 768 MiB): one line saying so, never a warp run on a missing depot
local_big = kernel("local_big", body=BODY.replace("ret;", ".local .align 4 .b8 depot[500000];\n  ret;"))
limited = subprocess.run([ptxrun, local_big, "k", "--grid", "1", "--block", "1024",
                          f"out:{os.path.join(work, 'o_big.npy')}:u32:1024"], capture_output=True, timeout=60,
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20)))
if limited.returncode != 1 or not one_line(limited.stderr) or b"out of host memory for a block" not in limited.stderr:
    failures.append(f"local_out_of_host_memory: exit {limited.returncode}: {limited.stderr[:300]!r}")
refused("shared_total", launch(kernel("shared_total", body=BODY.replace(
    "ret;", ".shared .b8 s1[200000];\n  .shared .b8 s2[200000];\n  ret;"))), "bytes of static shared memory")
# .b128: ld and st of a register that is not .b128 (8 bytes would be moved as 16), and the atomics the emulator
# does not run, refused at load naming the instruction
refused("ld_b128_of_b64", launch(kernel("ld_b128_of_b64", body=BODY.replace(
    "ret;", "ld.global.b128 %rd2, [%rd1];\n  ret;"))), "its value must be a .b128 register")
refused("atom_exch_b128", launch(kernel("atom_exch_b128", body=BODY.replace(
    "ret;", ".reg .b128 %q<2>;\n  atom.global.exch.b128 %q1, [%rd1], %q0;\n  ret;"))), "atom.global.exch.b128")
# a memory access of no bytes: ld, st, atom and red of .pred (not a type they take), atom without a type
refused("ld_pred", launch(kernel("ld_pred", body=BODY.replace(
    "ret;", ".reg .pred %p<2>;\n  ld.global.pred %p1, [%rd1];\n  ret;"))), ".pred is not a type ld or st takes")
refused("st_pred", launch(kernel("st_pred", body=BODY.replace(
    "ret;", ".reg .pred %p<2>;\n  st.global.pred [%rd1], %p1;\n  ret;"))), ".pred is not a type ld or st takes")
refused("atom_pred", launch(kernel("atom_pred", body=BODY.replace(
    "ret;", ".reg .pred %p<3>;\n  atom.global.exch.pred %p1, [%rd1], %p2;\n  ret;"))),
    ".pred is not a type atom or red takes")
refused("atom_untyped", launch(kernel("atom_untyped", body=BODY.replace(
    "ret;", "atom.global.add %r2, [%rd1], %r1;\n  ret;"))), "'atom.global.add' needs a type")
refused("align_not_power_of_two", launch(kernel("align3", extra=".global .align 3 .b8 g[4];\n")),
        "is not a power of two")
for count, why in [("4611686018427387904", "2^62 f32: 2^64 bytes, wraps to 0"),
                   ("4611686018427387905", "wraps to 4 bytes"), ("18446744073709551615", "2^64-1")]:
    refused(f"out_count_{count}", [kernel("out_count"), "k", "--grid", "1", "--block", "32",
                                   f"out:{os.path.join(work, 'o.npy')}:f32:{count}"], "bad element count", 2)


def npy(name, shape_text, data=b""):
    """A .npy v1.0 file with the given shape text and data bytes."""
    d = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape_text
    total = (10 + len(d) + 1 + 63) // 64 * 64
    header = d.ljust(total - 10 - 1) + "\n"
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + (total - 10).to_bytes(2, "little") + header.encode() + data)
    return path


IN_PTX = kernel("in_kernel", params="(.param .u64 in, .param .u64 out)")
for name, shape in [("npy_2^62", "(4611686018427387904,)"), ("npy_2^32x2^32x2", "(4294967296, 4294967296, 2)"),
                    ("npy_2^40_no_data", "(1099511627776,)")]:
    refused(name, [IN_PTX, "k", "--grid", "1", "--block", "32", f"in:{npy(name + '.npy', shape, b'1234')}",
                   f"out:{os.path.join(work, 'o.npy')}:u32:32"], "shape")
refused("ptx_is_a_directory", [work, "k", "--grid", "1", "--block", "32"], "is not a regular file", 1)
refused("ptx_with_nul", launch(write("nul.ptx", HEAD + "\0.entry k() {}\n")), "NUL byte")
# .maxntid's product past int: a maximum, so it limits nothing beyond the device's 1024 threads (16 *
# 268435457 is 2^32 + 16, which an int product wrapped to 16, refusing a launch of 32)
runs("maxntid_product_overflow", kernel("maxntid", directives="\n.maxntid 16, 268435457, 1"))
runs("maxntid_product_2^32", kernel("maxntid32", directives="\n.maxntid 65536, 65536, 1"))
runs("maxntid_plain", kernel("maxntid_plain", directives="\n.maxntid 32, 1, 1"))
refused("maxntid_exceeded", launch(kernel("maxntid_small", directives="\n.maxntid 16, 1, 1")), "maxntid")
refused("reqntid_too_many", launch(kernel("reqntid", directives="\n.reqntid 65536, 65536, 1")),
        ".reqntid asks for more than 1024 threads")

# ---- labels and declarations ----------------------------------------------------------------------
LOOP = """{
  .reg .pred %p<2>; .reg .b32 %r<4>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x; mov.u32 %r2, 0;
AGAIN:
  add.s32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, 3;
  @%p1 bra AGAIN;
AGAIN:
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
"""
refused("label_twice_loop", launch(kernel("label_loop", body=LOOP)),
        "label 'AGAIN' is defined twice (first at line 9)")
# with the first definition winning, this stored 7 (the skipped store) instead of the tid
SKIP = BODY.replace("st.global.u32 [%rd3], %r1;", """bra DONE;
DONE:
  mov.u32 %r1, 7;
DONE:
  st.global.u32 [%rd3], %r1;""")
refused("label_twice_wrong_result", launch(kernel("label_wrong", body=SKIP)), "label 'DONE' is defined twice")
refused("undefined_label", launch(kernel("no_label", body=BODY.replace("ret;", "bra NOWHERE;\n  ret;"))),
        "branch to undefined label 'NOWHERE'")
refused("register_twice", launch(kernel("reg_twice", body=BODY.replace(".reg .b64 %rd<4>;",
                                                                       ".reg .b64 %rd<4>; .reg .b32 %r2;"))),
        "register '%r2' is declared twice in the same scope")
runs("register_in_inner_scope", kernel("reg_inner", body=BODY.replace("ret;", "{ .reg .b32 %r2; mov.u32 %r2, 1; }\n  ret;")))
refused("variable_twice", launch(kernel("var_twice", extra=".global .b32 g;\n.global .b32 g;\n")),
        "variable 'g' is declared twice")
refused("local_twice", launch(kernel("local_twice", body=BODY.replace(
    "ret;", ".local .b32 l;\n  .local .b32 l;\n  ret;"))), "variable 'l' is declared twice")
refused("param_twice", launch(kernel("param_twice", params="(.param .u64 out, .param .u64 out)")),
        "parameter 'out' is declared twice")
refused("kernel_twice", launch(kernel("kernel_twice", extra=f".visible .entry k(.param .u64 out)\n{BODY}")),
        "kernel 'k' is defined twice")

# ---- numbers --------------------------------------------------------------------------------------
refused("smem_not_a_number", launch(kernel("smem")) + ["--smem", "abc"], "bad --smem 'abc'", 2)
refused("smem_too_large", launch(kernel("smem")) + ["--smem", "1000000"], "bad --smem", 2)
refused("smem_negative", launch(kernel("smem")) + ["--smem", "-1"], "bad --smem", 2)
refused("literal_past_64_bits", launch(kernel("lit65", body=BODY.replace("%tid.x", "18446744073709551616"))),
        "does not fit in 64 bits")
refused("f32_literal_9_digits", launch(kernel("f32_9", body=BODY.replace("%tid.x", "0f3F80000000"))),
        "malformed number")
# -2^63 is INT64_MIN, negated modulo 2^64 (no signed overflow; the UBSan build checks that): high word 2^31
runs("literal_int64_min", kernel("int64min", body=BODY.replace("st.global.u32 [%rd3], %r1;", """.reg .b64 %m;
  mov.b64 %m, -9223372036854775808; shr.u64 %m, %m, 32; cvt.u32.u64 %r2, %m;
  st.global.u32 [%rd3], %r2;""")), expect=[2**31] * 32)

# ---- one line ---------------------------------------------------------------------------------------
refused("string_over_newline", launch(write("string_nl.ptx", HEAD + '"abc\ndef"\n')), "unsupported top-level")
refused("control_bytes", launch(write("ctrl.ptx", HEAD + "\x01\x1b[31m\n")), "\\x01")
refused("long_token", launch(write("long.ptx", HEAD + "x" * 5000 + "\n")), "...")
refused("file_path_newline", launch(kernel("file_nl", extra='.file 1 "a\n.cu"\n')), "one quoted line")
refused("grid_with_newline", [kernel("grid_nl"), "k", "--grid", "1\n2", "--block", "32"], "bad dimensions '1\\n2'", 2)
refused("kernel_name_escape", [kernel("kname"), "k\x1b", "--grid", "1", "--block", "32"], "no kernel 'k\\x1b'", 1)
refused("dtype_with_newline", [kernel("dtype_nl"), "k", "--grid", "1", "--block", "32",
                               f"out:{os.path.join(work, 'o.npy')}:f\n32:4"], "unknown dtype 'f\\n32'", 2)


def parse_only(ptx):
    """Parse PTX and look for a kernel it does not have: (exit code, stderr, CPU seconds). CPU time, not
    wall time: the cpu suite runs tests side by side, and a loaded machine must not fail this."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    code, err, _ = run([ptx, "no_such_kernel", "--grid", "1", "--block", "32"], timeout=60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return code, err, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# ---- speed: linear in the number of distinct constants --------------------------------------------
N = 200_000
lines = [HEAD, ".visible .entry k(.param .u64 out)\n{\n  .reg .b32 %r<2>;\n"]
lines += [f"  add.u32 %r1, %r1, {i + 1000};\n" for i in range(N)]
lines.append("  ret;\n}\n")
many = write("many_literals.ptx", "".join(lines))

code, err, took = parse_only(many)
if code != 1 or b"has no kernel" not in err:
    failures.append(f"many_literals: expected the parse to succeed: exit {code}: {err[:200]!r}")
elif took > 2.0:  # about 0.1 s here; looked up one by one (quadratic) they took 5 s
    failures.append(f"many_literals: {N} distinct literals took {took:.1f} s to parse (more than 1 s per 100,000)")
print(f"many_literals: {N} distinct literals parsed in {took:.2f} s of CPU time")

# and in the number of kernels and module variables: each kernel's body is scanned once for the
# variables it names, not searched once per variable of the module
parts = [HEAD] + [f".shared .align 4 .b8 s{i}[4];\n" for i in range(20_000)]
parts += [f".visible .entry k{i}()\n{{\n  ret;\n}}\n" for i in range(20_000)]
many = write("many_kernels.ptx", "".join(parts))
code, err, took = parse_only(many)
if code != 1 or b"has no kernel" not in err:
    failures.append(f"many_kernels: expected the parse to succeed: exit {code}: {err[:200]!r}")
elif took > 2.0:  # about 0.1 s here
    failures.append(f"many_kernels: 20,000 kernels and 20,000 variables took {took:.1f} s to parse")
print(f"many_kernels: 20,000 kernels and 20,000 .shared variables parsed in {took:.2f} s of CPU time")

for f in failures:
    print("FAIL", f)
print(f"test_hostile_input: {len(failures)} failures")
sys.exit(1 if failures else 0)
