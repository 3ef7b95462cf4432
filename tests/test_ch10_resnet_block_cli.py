"""Chapter 10's resnet_block command line: every kind of bad input gets one line on stderr and a
non-zero exit, never a crash; --help works; without a GPU, check and bench say so and exit 77.
Run as: test_ch10_resnet_block_cli.py PATH_TO_RESNET_BLOCK"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_check import CliCheck  # noqa: E402

cli = CliCheck(sys.argv[1])
run, expect_error, failures = cli.run, cli.expect_error, cli.failures




# commands and options
expect_error([], "no command given")
expect_error(["frobnicate"], "unknown command 'frobnicate'")
expect_error(["check", "--bogus"], "unknown option '--bogus'")
expect_error(["bench", "--bogus", "3"], "unknown option '--bogus'")
expect_error(["check", "--random"], "--random needs a value")
expect_error(["bench", "--csv"], "--csv needs a value")
expect_error(["check", "--csv", "out.csv"], "--csv is an option of 'bench', not of 'check'")
expect_error(["check", "--blocks", "conv2_x"], "--blocks is an option of 'bench'")
expect_error(["check", "--quick"], "--quick is an option of 'bench'")
expect_error(["bench", "--random", "3"], "--random is an option of 'check', not of 'bench'")
# numbers
expect_error(["check", "--random", "abc"], "--random needs an integer, got 'abc'")
expect_error(["check", "--random", "-1"], "--random must be at least 0")
expect_error(["check", "--random", "99999999999"], "--random needs an integer")
expect_error(["bench", "--n", "0"], "--n must be at least 1")
expect_error(["bench", "--n", "3x"], "--n needs an integer, got '3x'")
expect_error(["bench", "--n", ""], "--n needs an integer")
expect_error(["check", "--seed", "-5"], "--seed needs a non-negative integer")
expect_error(["check", "--seed", "x"], "--seed needs a non-negative integer")
expect_error(["bench", "--n", "100000"], "block conv2_x at --n 100000")
# blocks
expect_error(["bench", "--blocks", "conv9_x"], "unknown block 'conv9_x'")
expect_error(["bench", "--blocks", "conv2_x,nope"], "unknown block 'nope'")
expect_error(["bench", "--blocks", ","], "--blocks needs at least one block name")
# kernels: the block needs launch_fused and launch, fp16 NHWC fprop on the GPU
expect_error(["check", "--kernel", "99z"], "kernel '99z' is not a kernel")
expect_error(["check", "--kernel", "05a"], "kernel '05a' has no fused epilogue (launch_fused)")
expect_error(["bench", "--kernel", "05b"], "kernel '05b' has no fused epilogue")
expect_error(["check", "--kernel", "05h"], "kernel '05h' has no fused epilogue")
expect_error(["check", "--kernel", "05l"], "kernel '05l' has no plain launch")
expect_error(["check", "--kernel", "01"], "kernel '01' is not an fp16 NHWC fprop GPU kernel")
expect_error(["check", "--kernel", "06a"], "is not an fp16 NHWC fprop GPU kernel")

# good input
result = run("--help")
words = ("check", "bench", "--kernel", "--blocks", "--random")
if result.returncode != 0 or not all(w in result.stdout for w in words):
    failures.append(f"--help: exit {result.returncode}, output {result.stdout[:200]!r}")
if run("bench", "--help").returncode != 0:
    failures.append("bench --help does not exit 0")

# Without a GPU both commands skip with one line; with one, `check --random 0` runs the fixed blocks
# (the gpu suite runs the full check), and bench is not run here.
result = run("check", "--random", "0")
if result.returncode == 77:
    if not result.stdout.startswith("skip:") or len(result.stdout.strip().splitlines()) != 1:
        failures.append(f"check without a GPU: {result.stdout!r}")
    result = run("bench", "--quick")
    if result.returncode != 77 or len(result.stdout.strip().splitlines()) != 1 or result.stderr:
        failures.append(f"bench without a GPU: exit {result.returncode}, {result.stdout!r} {result.stderr!r}")
elif result.returncode != 0:
    failures.append(f"check --random 0 on a GPU: exit {result.returncode}\n{result.stdout[-2000:]}")

sys.exit(cli.finish("test_ch10_resnet_block_cli"))
