#!/usr/bin/env python3
"""The mutation score: how many of the bugs planted in tests/mutants/ the test suites catch.

Each tests/mutants/NAME.patch is one bug a kernel author could plausibly make (its first line says
which). For each selected patch this script applies it to a scratch copy of the repository, builds
incrementally, runs the tests and puts the original files back:
  caught   a test failed: the first one to fail is named
  missed   every test that ran passed
  invalid  the mutant does not build: not a bug a test could see, and not counted in the score
The score is caught / (caught + missed). Results go to stdout, progress to stderr.

The scratch copy lives outside the tree (a temporary folder, or --scratch DIR to keep it and its build
between runs) with a build folder of its own, configured there by meson: a copied build folder would
not do, the emulator finds the kernels' PTX under the build's absolute path. One build serves every
mutant, so each costs the files its patch touches, not a full build.

By default the tests are those CI runs (`bash tests/run.sh`: every suite), minus the three that compare
the sources with records of the unmutated code and so fail on any edit, bug or not (SOURCE_RECORDS).

  python3 tests/mutate.py                          every mutant, every suite (hours)
  python3 tests/mutate.py '09*' 05h_col_offset_ignored --suite gpu --suite cpu
  python3 tests/mutate.py --chapter-tests          each mutant against its chapter's tests only
  python3 tests/mutate.py 08b_* --tests gpu_interleaved    chosen mutants against chosen tests
  python3 tests/mutate.py --list                   the mutants and what each one plants
  python3 tests/mutate.py --check                  only: does every patch still apply (seconds)
  python3 tests/mutate.py --build-only             only: does every mutant compile (no tests)

Not a meson test itself (it takes hours); `--check` is one, in the cpu suite, so the patches cannot
silently stop applying as the chapters change.
"""
import argparse
import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MUTANTS = os.path.join(ROOT, "tests", "mutants")

# Tests that check the sources against records of the unmutated code. A mutant fails them whatever it
# does, so they would "catch" every mutant and measure nothing.
SOURCE_RECORDS = {
    "counter_tables": "bench/results/emulator.csv carries each chapter folder's digest",
    "readme_register_tables": "chapters 05 and 06 list ptxas's register counts for the code as it is",
    "mutants_apply": "the patches apply to the tree: with one applied, its own no longer does",
}

# A chapter's own tests, for --chapter-tests: every test named for it (chNN in its name, as a word between
# underscores: gpu_ch05, test_ch05_implicit_gemm, gpu_ch05_epilogue_bn, ch10_resnet_block_reference),
# and the tests of programs built on its kernels (OTHER_CHAPTERS_TESTS). Not among them: gpu_interleaved
# (every kernel of every chapter, warps in a random order; add it with --tests gpu_interleaved) and chapter
# 11's training on 05h, 06 and 07b (gpu_ch11_train_cnn_ours_vs_cpu).
OTHER_CHAPTERS_TESTS = {
    "05": ["gpu_ch10_resnet_block"],  # the ResNet block runs 05i and 05l
    "08": ["emu_mutations"],  # the emulator's checks, on bugs planted in chapter 08's PTX
}


def chapter_test(name, chapter):
    """Whether a test belongs to chapter NN: named for it, or one of OTHER_CHAPTERS_TESTS."""
    return (re.search(rf"(^|_)ch{chapter}(_|$)", name) is not None
            or any(fnmatch.fnmatch(name, other) for other in OTHER_CHAPTERS_TESTS.get(chapter, [])))


FAILED = {"FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"}


def say(text):
    print(text, file=sys.stderr, flush=True)


def patches():
    return sorted(name[: -len(".patch")] for name in os.listdir(MUTANTS) if name.endswith(".patch"))


def header(name):
    """The patch's first line, the bug it plants (a '#' line, which git apply skips)."""
    with open(os.path.join(MUTANTS, name + ".patch")) as f:
        first = f.readline().strip()
    return first[1:].strip() if first.startswith("#") else ""


def touched(name):
    with open(os.path.join(MUTANTS, name + ".patch")) as f:
        return [line[6:].split("\t")[0].strip() for line in f if line.startswith("+++ b/")]


def check_patches(names, tree):
    """One line per patch that has no header or no longer applies to `tree`; returns their count."""
    bad = 0
    for name in names:
        path = os.path.join(MUTANTS, name + ".patch")
        run = subprocess.run(["git", "apply", "--check", path], cwd=tree, capture_output=True, text=True)
        if run.returncode != 0:
            first = (run.stderr.strip().splitlines() or ["git apply failed"])[0]
            print(f"mutate: {name}.patch no longer applies to the tree: {first}")
            bad += 1
        elif not header(name):
            print(f"mutate: {name}.patch has no '#' first line saying what bug it plants")
            bad += 1
    return bad


def tree_files():
    """The repository's files as they are in the working tree: tracked ones and untracked ones git does
    not ignore (never a build folder)."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p and os.path.isfile(os.path.join(ROOT, p))]


def sync(scratch, paths):
    """Copies paths from the repository into scratch where the contents differ; unchanged files keep
    their times, so the build redoes only what changed."""
    for path in paths:
        src, dst = os.path.join(ROOT, path), os.path.join(scratch, path)
        if os.path.isfile(dst):
            with open(src, "rb") as a, open(dst, "rb") as b:
                if a.read() == b.read():
                    continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
        os.utime(dst)  # newer than anything built from the file before


def meson_command():
    if shutil.which("meson"):
        return ["meson"]
    return [sys.executable, "-m", "mesonbuild.mesonmain"]


def environment():
    env = dict(os.environ)
    if not shutil.which("nvcc") and os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
        env["PATH"] = "/usr/local/cuda/bin" + os.pathsep + env.get("PATH", "")  # as bench/setup.sh does
    return env


def run_logged(cmd, cwd, log, env):
    with open(log, "w") as f:
        return subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, env=env).returncode


def select_tests(meson, build, env, suites, chapter_prefix, patterns):
    """The test names to run: those of the suites asked for (all when none), without SOURCE_RECORDS;
    with chapter_prefix or patterns, only that chapter's (chapter_test()) and those matching a pattern."""
    listed = json.loads(subprocess.run(meson + ["introspect", "--tests", build], capture_output=True, text=True,
                                       check=True, env=env).stdout)
    names = []
    for test in listed:
        test_suites = {s.split(":")[-1] for s in test["suite"]}
        if suites and not test_suites & set(suites):
            continue
        if test["name"] in SOURCE_RECORDS:
            continue
        if chapter_prefix is not None or patterns:
            wanted = any(fnmatch.fnmatch(test["name"], pattern) for pattern in patterns)
            if not wanted and not (chapter_prefix is not None and chapter_test(test["name"], chapter_prefix)):
                continue
        names.append(test["name"])
    return names


def has_maxfail(meson, env):
    """meson test stops at the first failures with --maxfail (meson 1.0 on); older ones run every test."""
    help_text = subprocess.run(meson + ["test", "--help"], capture_output=True, text=True, env=env).stdout
    return "--maxfail" in help_text


def run_tests(meson, scratch, names, args, env, log):
    """(first failing test or None, how many passed, meson's exit status)."""
    build = os.path.join(scratch, "build")
    testlog = os.path.join(build, "meson-logs", "testlog.json")
    if os.path.exists(testlog):
        os.remove(testlog)
    cmd = meson + ["test", "-C", build, "--no-rebuild", "--print-errorlogs", "--num-processes", str(args.jobs)]
    if args.maxfail and has_maxfail(meson, env):
        cmd += ["--maxfail", str(args.maxfail)]
    if args.timeout_multiplier:
        cmd += ["--timeout-multiplier", str(args.timeout_multiplier)]
    status = run_logged(cmd + names, scratch, log, env)
    first, passed = None, 0
    if os.path.exists(testlog):
        for line in open(testlog):
            result = json.loads(line)
            if result.get("result") in FAILED and first is None:
                first = result["name"]
            passed += result.get("result") == "OK"
    if status != 0 and first is None:
        first = "(meson test failed; see its log)"
    return first, passed, status


def markdown(rows):
    lines = ["| mutant | bug | result | first failing test |", "| --- | --- | --- | --- |"]
    for name, outcome, detail in rows:
        lines.append(f"| `{name}` | {header(name)} | {outcome} | {detail if outcome == 'caught' else ''} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="mutants to run, by name or glob (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--check", action="store_true", help="only check that every patch applies to the tree")
    parser.add_argument("--suite", action="append", default=[], help="a meson test suite to run (repeatable; "
                        "default: every suite, as CI runs them)")
    parser.add_argument("--chapter-tests", action="store_true", help="run each mutant against its chapter's "
                        "tests only (those named for it, chNN, and OTHER_CHAPTERS_TESTS), not every suite")
    parser.add_argument("--tests", action="append", default=[], metavar="PATTERN", help="run only the tests "
                        "whose name matches (a glob; repeatable), with --chapter-tests in addition to those")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel compiles and tests")
    parser.add_argument("--maxfail", type=int, default=1, help="stop a mutant's tests at this many failures "
                        "(0: run them all)")
    parser.add_argument("--timeout-multiplier", type=float, default=0, help="passed to meson test")
    parser.add_argument("--scratch", help="scratch copy to use and keep (default: a temporary folder, removed)")
    parser.add_argument("--build-only", action="store_true", help="apply and build each mutant, run no test: "
                        "which ones compile")
    parser.add_argument("--no-baseline", action="store_true", help="skip running the tests on the unmutated "
                        "copy first")
    parser.add_argument("--markdown", action="store_true", help="end with the results as a markdown table")
    args = parser.parse_args()

    if not shutil.which("git"):
        print("mutate: needs git (git apply)")
        return 77
    names = patches()
    if args.names:
        chosen = [n for n in names if any(fnmatch.fnmatch(n, p) or n == p.removesuffix(".patch")
                                          for p in args.names)]
        unknown = [p for p in args.names if not any(fnmatch.fnmatch(n, p) or n == p.removesuffix(".patch")
                                                    for n in names)]
        if unknown:
            print(f"mutate: no mutant matches {', '.join(unknown)} (see --list)")
            return 2
        names = chosen
    if args.list:
        for name in names:
            print(f"{name:40} {header(name)}")
        return 0
    if check_patches(names, ROOT):
        return 1
    if args.check:
        print(f"mutate: all {len(names)} patches apply")
        return 0

    meson, env = meson_command(), environment()
    scratch = os.path.abspath(args.scratch) if args.scratch else tempfile.mkdtemp(prefix="conv-mutants-")
    if scratch == ROOT or scratch.startswith(ROOT + os.sep):
        print("mutate: the scratch copy must be outside the repository")
        return 2
    logs = os.path.join(scratch, "mutant-logs")
    os.makedirs(logs, exist_ok=True)
    started = time.time()
    try:
        say(f"mutate: scratch copy in {scratch}")
        sync(scratch, tree_files())
        if not os.path.isdir(os.path.join(scratch, ".git")):  # git apply's paths are then relative to scratch
            subprocess.run(["git", "init", "-q", scratch], check=True)
        build = os.path.join(scratch, "build")
        if not os.path.exists(os.path.join(build, "build.ninja")):
            say("mutate: configuring the scratch build")
            setup = meson + ["setup", build] + shlex.split(env.get("MESON_SETUP_ARGS", ""))
            if run_logged(setup, scratch, os.path.join(logs, "setup.log"), env):
                print(f"mutate: meson setup failed: see {logs}/setup.log")
                return 1
        compile_cmd = meson + ["compile", "-C", build, "-j", str(args.jobs)]
        say("mutate: building the unmutated copy")
        if run_logged(compile_cmd, scratch, os.path.join(logs, "baseline.build.log"), env):
            print(f"mutate: the unmutated copy does not build: see {logs}/baseline.build.log")
            return 1
        def tests_for(name):
            chapter = re.match(r"\d\d", name) if args.chapter_tests else None  # names start with the chapter
            chapter = chapter.group(0) if chapter else None
            return select_tests(meson, build, env, args.suite, chapter, args.tests)

        if not args.build_only and not all(tests_for(name) for name in names):
            print("mutate: no test selected (see --suite)")  # meson test would then run every test
            return 2
        if not args.no_baseline and not args.build_only:
            baseline = sorted({t for name in names for t in tests_for(name)})
            say(f"mutate: the unmutated copy against {len(baseline)} tests")
            first, passed, _ = run_tests(meson, scratch, baseline, args, env, os.path.join(logs, "baseline.test.log"))
            if first:
                print(f"mutate: the unmutated copy fails {first}: fix that first (see {logs}/baseline.test.log)")
                return 1

        rows = []
        for i, name in enumerate(names, 1):
            t0 = time.time()
            say(f"mutate: [{i}/{len(names)}] {name}")
            subprocess.run(["git", "apply", os.path.join(MUTANTS, name + ".patch")], cwd=scratch, check=True)
            try:
                if run_logged(compile_cmd, scratch, os.path.join(logs, name + ".build.log"), env):
                    outcome, detail = "invalid", "does not build"
                elif args.build_only:
                    outcome, detail = "builds", ""
                else:
                    first, passed, _ = run_tests(meson, scratch, tests_for(name), args, env,
                                                 os.path.join(logs, name + ".test.log"))
                    outcome, detail = ("caught", first) if first else ("missed", f"{passed} tests passed")
            finally:
                sync(scratch, touched(name))  # the original files back, whatever happened
            rows.append((name, outcome, detail))
            print(f"{outcome:8} {name:40} {detail}  ({time.time() - t0:.0f} s)", flush=True)

        if args.build_only:
            print(f"mutate: {sum(o == 'builds' for _, o, _ in rows)} of {len(rows)} mutants build")
            return 0
        caught = sum(o == "caught" for _, o, _ in rows)
        missed = sum(o == "missed" for _, o, _ in rows)
        invalid = len(rows) - caught - missed
        print(f"score: {caught}/{caught + missed} caught ({missed} missed, {invalid} invalid) in "
              f"{(time.time() - started) / 60:.0f} min" + (f"; logs in {logs}" if args.scratch else ""))
        if args.markdown:
            print(markdown(rows))
        return 0
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
