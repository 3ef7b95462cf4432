"""The register tables in the chapter READMEs, from what ptxas reports for this build, never typed.

A README holds, between markers, the sources to compile (a path or a glob, relative to the repository
root) and one row per kernel (a label and a regular expression matching the kernel's mangled name in
exactly one of them); the table below the spec is generated:

    <!-- ptxas-table: chapters/05_implicit_gemm_tc/*.cu
    05a igemm_wmma
    05h igemm_staged.*Li128ELi128E
    -->
    | kernel | registers, sm_80 | registers, sm_90 | stack and spills |
    ...
    <!-- ptxas-table end -->

    python3 bench/ptxas_tables.py --write [--nvcc NVCC] [-I DIR]... [--arch 80 --arch 90] README...
    python3 bench/ptxas_tables.py --check ...    (the build suite: exit 1 when a table differs from ptxas)
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"(<!-- ptxas-table: (?P<source>\S+)\n(?P<rows>.*?)-->\n)(?P<table>.*?)(<!-- ptxas-table end -->)",
                   re.S)


def ptxas_report(nvcc, includes, source, arch):
    """{mangled name: (registers, stack bytes, spill store bytes, spill load bytes)} for one architecture."""
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([nvcc, "-std=c++17", "-O3", f"-gencode=arch=compute_{arch},code=sm_{arch}", "-Xptxas", "-v",
                              *[f"-I{d}" for d in includes], "-c", os.path.join(ROOT, source),
                              "-o", os.path.join(tmp, "out.o")], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"ptxas_tables: {source} does not compile for sm_{arch}:\n{run.stderr}")
    report, function, frame = {}, None, (0, 0, 0)
    for line in run.stderr.splitlines():
        found = re.search(r"Compiling entry function '(\S+)'", line)
        if found:
            function, frame = found.group(1), (0, 0, 0)
        found = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if found:
            frame = tuple(int(x) for x in found.groups())
        found = re.search(r"Used (\d+) registers", line)
        if found and function:
            report[function] = (int(found.group(1)), *frame)
    return report


def sources_report(nvcc, includes, pattern, arch):
    """ptxas_report() merged over every source the pattern names."""
    sources = sorted(glob.glob(os.path.join(ROOT, pattern)))
    if not sources:
        sys.exit(f"ptxas_tables: {pattern} names no source")
    report = {}
    for source in sources:
        report.update(ptxas_report(nvcc, includes, os.path.relpath(source, ROOT), arch))
    return report


def table(spec_rows, reports, archs):
    lines = ["| kernel | " + " | ".join(f"registers, sm_{a}" for a in archs) + " | stack and spills |",
             "| --- |" + " --- |" * (len(archs) + 1)]
    for row in spec_rows:
        label, pattern = row.rsplit(None, 1)  # the label may have spaces; the expression has none
        cells, frames = [], set()
        for arch in archs:
            matches = [v for name, v in reports[arch].items() if re.search(pattern.strip(), name)]
            if len(matches) != 1:
                sys.exit(f"ptxas_tables: {label}: {pattern.strip()!r} matches {len(matches)} kernels for sm_{arch}")
            cells.append(str(matches[0][0]))
            frames.add(matches[0][1:])
        spills = "none" if frames == {(0, 0, 0)} else ", ".join(
            f"{s} B stack, {st} B spill stores, {ld} B spill loads" for s, st, ld in sorted(frames))
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {spills} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    parser.add_argument("--nvcc", default="nvcc")
    parser.add_argument("-I", dest="includes", action="append", default=[os.path.join(ROOT, "common", "kernel")])
    parser.add_argument("--arch", action="append")
    parser.add_argument("readmes", nargs="+")
    args = parser.parse_args()
    archs = args.arch or ["80", "90"]
    stale = []
    for readme in args.readmes:
        text = open(readme).read()

        def generate(match):
            reports = {a: sources_report(args.nvcc, args.includes, match.group("source"), a) for a in archs}
            rows = [r for r in match.group("rows").splitlines() if r.strip()]
            return match.group(1) + table(rows, reports, archs) + match.group(5)

        new = BLOCK.sub(generate, text)
        if BLOCK.search(text) is None:
            sys.exit(f"ptxas_tables: {readme} has no ptxas-table block")
        if new != text:
            stale.append(readme)
            if args.write:
                with open(readme, "w") as f:
                    f.write(new)
    if args.check and stale:
        for readme in stale:
            print(f"FAIL {readme}: its register table differs from what ptxas reports "
                  "(python3 bench/ptxas_tables.py --write README)")
        return 1
    print(f"ptxas_tables: {len(args.readmes)} READMEs, {'written' if args.write else 'as ptxas reports'}"
          + (f" ({len(stale)} changed)" if args.write else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
