"""What the command-line tests check about bad input, written once: the program exits with the
expected status, writes exactly one line to stderr containing the expected words, and never crashes.

    from cli_check import CliCheck
    cli = CliCheck("/path/to/program")
    cli.expect_error(["--bogus"], "unknown option '--bogus'")
    ...                                  # cli.run(...) for other checks, cli.failures.append(...) to fail
    sys.exit(cli.finish())
"""
import os
import subprocess


class CliCheck:
    def __init__(self, program):
        self.program = program
        self.name = os.path.basename(program)
        self.failures = []

    def run(self, *args, timeout=300):
        return subprocess.run([self.program, *args], capture_output=True, text=True, timeout=timeout)

    def expect_error(self, args, fragment, code=2):
        result = self.run(*args)
        lines = result.stderr.strip().splitlines()
        problems = []
        if result.returncode != code:
            problems.append(f"exit {result.returncode}, expected {code}")
        if len(lines) != 1:
            problems.append(f"{len(lines)} stderr lines, expected one")
        if fragment not in result.stderr:
            problems.append(f"stderr lacks {fragment!r}")
        if "Traceback" in result.stderr or result.returncode < 0:
            problems.append("crashed")
        if problems:
            self.failures.append(f"{self.name} {' '.join(args)}: {'; '.join(problems)}\n"
                                 f"  stderr: {result.stderr.strip()!r}")

    def finish(self, label):
        """Prints every failure and a summary line; returns the exit status."""
        for failure in self.failures:
            print("FAIL", failure)
        print(f"{label}: {len(self.failures)} failures")
        return 1 if self.failures else 0
