"""cli_mutate.py: an end-to-end mutation loop over the programs' command lines (conv, resnet_block,
train_cnn, ptxrun), run as the real binaries with a timeout.

libFuzzer runs ptxrun's argument parsing in-process (fuzz_ptxrun_cli); the others parse inside
programs that link the CUDA runtime and every kernel, so they are fuzzed from outside: start from a
few cheap, valid command lines, change one to three things (a value replaced by a hostile one, a flag
added, dropped, repeated or swapped, a control byte or a long run of characters put in an argument)
and run the result. A finding: a signal (a crash), a run past --timeout (a hang), an exit status other
than 0, 1, 2 or 77, bad input (exit 2) with more than one line on stderr or nothing said at all, or
anything on stderr that is not printable ASCII. Hostile values are invalid (negative, zero, past 2^31 or 2^64, not numbers,
empty) or small valid ones: a large valid size would only make a run slow, not wrong.

  python3 tests/fuzz/cli_mutate.py BUILD_DIR [--seconds N] [--timeout S] [--state N] [--out DIR]

Each finding is written to OUT/findings/cli_N.json (the program and its arguments); once fixed it goes
to tests/fuzz/regressions/cli/, whose inputs are replayed first, every run.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser()
parser.add_argument("build")
parser.add_argument("--seconds", type=float, default=15)
parser.add_argument("--timeout", type=float, default=20)
parser.add_argument("--state", type=int, default=int(time.time()), help="the random generator's starting state")
parser.add_argument("--out", default=None)
args = parser.parse_args()
build = os.path.abspath(args.build)
out = os.path.abspath(args.out or os.path.join(build, "fuzz"))
scratch = os.path.join(out, "cli_scratch")
os.makedirs(scratch, exist_ok=True)
os.makedirs(os.path.join(out, "findings"), exist_ok=True)
rng = random.Random(args.state)

PTX = (".version 9.0\n.target sm_90\n.address_size 64\n"
       ".visible .entry k(.param .u64 out, .param .u32 n)\n{\n  .reg .pred %p<2>; .reg .b32 %r<3>; .reg .b64 %rd<4>;\n"
       "  ld.param.u64 %rd1, [out]; ld.param.u32 %r2, [n]; mov.u32 %r1, %tid.x; setp.ge.u32 %p1, %r1, %r2;\n"
       "  @%p1 bra DONE;\n  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r1;\n"
       "DONE:\n  ret;\n}\n")
with open(os.path.join(scratch, "k.ptx"), "w") as f:
    f.write(PTX)

PROGRAMS = {
    "conv": {
        "path": os.path.join(build, "conv"),
        "starts": [["list"], ["layers"], ["run", "01", "--n", "1", "--c", "2", "--h", "5", "--w", "5", "--k", "2",
                                         "--r", "3", "--s", "3", "--pad", "1", "--reps", "1", "--warmup", "0"],
                  ["run", "01", "--layer", "tutorial/first_graph", "--n", "1", "--reps", "1", "--epilogue", "relu"],
                  ["check", "01", "--random", "1", "--seed", "3"], ["run", "02b", "--n", "1"]],
        "flags": ["--n", "--c", "--h", "--w", "--k", "--r", "--s", "--pad", "--pad-h", "--pad-w", "--stride",
                  "--stride-h", "--stride-w", "--dil", "--dil-h", "--dil-w", "--groups", "--seed", "--reps",
                  "--warmup", "--random", "--layer", "--epilogue", "--suite", "--kernels", "--save-npy",
                  "--load-npy", "--no-verify", "--no-cudnn", "--counters", "--sample", "--help"],
        # bench and --emulate run for minutes by design; the emulator's input has its own harnesses
        "never": ["bench", "--emulate", "--quick"],
    },
    "resnet_block": {
        "path": os.path.join(build, "chapters", "10_resnet_block", "resnet_block"),
        "starts": [["check", "--random", "0"], ["check", "--kernel", "05j", "--seed", "2"], ["--help"]],
        "flags": ["--kernel", "--seed", "--random", "--n", "--blocks", "--csv", "--help"],
        "never": ["bench", "--emulate", "--quick"],
    },
    "train_cnn": {
        "path": os.path.join(build, "chapters", "11_train_cnn", "train_cnn"),
        "starts": [["--backend", "cpu", "--steps", "2", "--batch", "2", "--test", "2", "--size", "8", "--log-every", "1",
                   "--target", "0"],
                  ["--backend", "cpu", "--steps", "1", "--batch", "1", "--test", "1", "--size", "8", "--lr", "0.1",
                   "--emulate-fp16", "--target", "0", "--log", "losses.csv"]],
        "flags": ["--backend", "--compare", "--compare-with", "--steps", "--batch", "--size", "--lr", "--loss-scale",
                  "--log-every", "--log", "--test", "--target", "--seed", "--emulate-fp16", "--help"],
        "never": ["--emulate", "ours", "cudnn", "--compare"],
    },
    "ptxrun": {
        "path": os.path.join(build, "emu", "ptxrun"),
        "starts": [["k.ptx", "k", "--grid", "1", "--block", "32", "out:o.npy:u32:32", "u32:32"],
                  ["k.ptx", "k", "--grid", "2,1,1", "--block", "16,2", "--smem", "64", "out:o.npy:f32:64", "u32:5"]],
        "flags": ["--grid", "--block", "--smem", "--counters", "--help"],
        "never": [],
    },
}
HOSTILE = ["", "0", "-1", "-0", "+1", "2147483647", "2147483648", "4294967296", "-2147483649",
           "9223372036854775807", "9223372036854775808", "18446744073709551616", "1e3", "0x10", "010", "1.5",
           "nan", "inf", "-inf", "abc", "--n", "-", " 3", "3 ", "1,2,3,4", ",", "1,,1", "a\nb", "\t", "\x1b[31m",
           "x" * 5000, "\xff\xfe", "%s%n", "resnet50/res2_3x3", "tutorial/", "/nonexistent/x", "bn,relu,bn",
           "relu,", "05i", "99z", "out:o.npy:f32:4611686018427387904", "out:o.npy:f64:0", "in:k.ptx",
           "u32:-1", "f32:1e99", "inout:o.npy", "s32:2147483648", "u64:-5"]
SMALL = ["1", "2", "3", "4", "5", "8"]


def mutate(argv, spec):
    argv = list(argv)
    for _ in range(rng.randint(1, 3)):
        choice = rng.random()
        if choice < 0.35 and argv:  # a value replaced
            argv[rng.randrange(len(argv))] = rng.choice(HOSTILE + SMALL)
        elif choice < 0.55:  # a flag added, with a value
            at = rng.randint(0, len(argv))
            argv[at:at] = [rng.choice(spec["flags"]), rng.choice(HOSTILE + SMALL)][:rng.randint(1, 2)]
        elif choice < 0.65 and argv:  # dropped
            del argv[rng.randrange(len(argv))]
        elif choice < 0.75 and argv:  # repeated
            at = rng.randrange(len(argv))
            argv.insert(at, argv[at])
        elif choice < 0.85 and len(argv) > 1:  # swapped
            i, j = rng.randrange(len(argv)), rng.randrange(len(argv))
            argv[i], argv[j] = argv[j], argv[i]
        elif argv:  # a byte put in, or the argument cut
            at = rng.randrange(len(argv))
            s = argv[at]
            cut = rng.randint(0, len(s))
            argv[at] = s[:cut] + rng.choice(["\n", "\x01", "\x7f", "\xe9", "'", "\"", "%", "\\", ""]) + s[cut:]
    return argv


def threads_launched(argv):
    """The threads of a launch CUDA would accept, read as ptxrun reads its options (each flag takes the
    next argument, the last one given counts), else 0: an invalid launch must still be refused."""
    limits = {"--grid": (2**31 - 1, 65535, 65535), "--block": (1024, 1024, 64)}
    given, i = {}, 0
    while i < len(argv) - 1:
        if argv[i] in limits or argv[i] == "--smem":
            given[argv[i]] = argv[i + 1]
            i += 1
        i += 1
    total = 1
    for flag, most in limits.items():
        parts = given.get(flag, "").split(",")
        if len(parts) > 3 or not all(p.isdigit() and 0 < int(p) <= m for p, m in zip(parts, most)):
            return 0
        threads = 1
        for p in parts:
            threads *= int(p)
        if flag == "--block" and threads > 1024:
            return 0
        total *= threads
    return total


# Flags that count repetitions: a large valid count (--reps 2147483647 times a CPU convolution) is a run
# that is slow by request, not wrong
COUNTS = ("--reps", "--warmup", "--random", "--steps", "--test", "--sample")


def large_count(argv):
    """Whether a repetition count is given as a valid number above 1000 (the last one given counts, as the
    programs read them); an invalid one (negative, past 2^31 - 1, not a number) must still be refused."""
    given = {}
    for flag, value in zip(argv, argv[1:]):
        if flag in COUNTS:
            given[flag] = value
    return any(v.isdigit() and 1000 < int(v) <= 2**31 - 1 for v in given.values())


def allowed(argv, spec):
    """Commands that are slow by design (a valid launch of more than 2^20 threads: --grid 2147483647
    is a legal launch the emulator would run for many minutes, with its progress line; a valid repetition
    count above 1000), and paths out of the scratch folder, are not run."""
    if any(a in spec["never"] for a in argv) or threads_launched(argv) > 1 << 20 or large_count(argv):
        return False
    return not any("/" in a and not a.startswith(("resnet50/", "tutorial/", "mobilenet/", "out:", "in:")) and
                   a != "/nonexistent/x" for a in argv)


def check(name, spec, argv):
    """None if the run is fine, else what is wrong."""
    command = [spec["path"]] + [a.encode("utf-8", "surrogateescape") for a in argv]
    env = dict(os.environ, CONV_EMULATE="0")
    try:
        r = subprocess.run(command, capture_output=True, timeout=args.timeout, cwd=scratch, env=env)
    except subprocess.TimeoutExpired:
        return f"still running after {args.timeout:.0f} s"
    except OSError as e:  # the binary is being rebuilt under us: not the program's fault
        print(f"cli_mutate: could not start {name}: {e}")
        return None
    err = r.stderr
    if r.returncode < 0:
        return f"killed by signal {-r.returncode}: {err[-300:]!r}"
    if r.returncode not in (0, 1, 2, 77):
        return f"exit status {r.returncode}: {err[-300:]!r}"
    if any(c not in (9, 10) and not 32 <= c < 127 for c in err):
        return f"stderr is not printable text: {err[:300]!r}"
    # bad input: one line on stderr (or, for conv's "unsupported" problems, the result line on stdout)
    if r.returncode == 2 and (err.count(b"\n") > 1 or (err and not err.endswith(b"\n")) or not (err or r.stdout)):
        return f"bad input (exit 2) without one line saying why: {err[:300]!r}"
    return None


present = {name: spec for name, spec in PROGRAMS.items() if os.access(spec["path"], os.X_OK)}
failures = []
# every regression first
regressions = os.path.join(here, "regressions", "cli")
for file in sorted(os.listdir(regressions)) if os.path.isdir(regressions) else []:
    with open(os.path.join(regressions, file)) as f:
        case = json.load(f)
    if case["program"] in present:
        why = check(case["program"], present[case["program"]], case["args"])
        if why:
            failures.append(f"regression {file}: {case['program']} {case['args']!r}: {why}")
print(f"cli_mutate: random state {args.state}; {len(os.listdir(regressions)) if os.path.isdir(regressions) else 0} "
      f"regression inputs replayed")
runs = {name: 0 for name in present}
deadline = time.monotonic() + args.seconds
while present and time.monotonic() < deadline and len(failures) < 5:
    name = rng.choice(sorted(present))
    spec = present[name]
    argv = mutate(rng.choice(spec["starts"]), spec)
    if not allowed(argv, spec):
        continue
    runs[name] += 1
    why = check(name, spec, argv)
    if why:
        path = os.path.join(out, "findings", f"cli_{len(failures)}_{name}.json")
        with open(path, "w") as f:
            json.dump({"program": name, "args": argv, "why": why}, f)
        failures.append(f"{name} {argv!r}: {why} (saved as {path})")
print("cli_mutate: " + ", ".join(f"{name} {n} runs" for name, n in runs.items()))
for f in failures:
    print("FOUND", f)
sys.exit(1 if failures else 0)
