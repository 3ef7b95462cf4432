"""How far apart a chapter's steps are: a table of each step's file, its length, and how many lines
`diff` shows against the step before, written into the chapter's README.

    python3 bench/step_diffs.py ROOT            write the table into every chapter README that has
                                                `<!-- step-diffs:begin -->` ... `<!-- step-diffs:end -->`
    python3 bench/step_diffs.py ROOT --check    write nothing; exit 1, naming the README, if a table
                                                is not what the sources give

The steps and their files come from the chapter's registry list (steps.c: each entry's .id and .source),
in the order a reader climbs them. A step whose kernel later steps launch on other tile shapes keeps it
in a header named like its file (05d_16byte_loads.cuh beside 05d_16byte_loads.cu); such a later step's
file includes that header and holds only its tile and launch. So a step is compared with the step
before like with like: a step with a kernel of its own, its kernel against the kernel the step before
runs (`diff 05c_swizzle.cu 05d_16byte_loads.cuh`); a step that reuses a kernel, its file against the
step before's (`diff 05d_16byte_loads.cu 05e_large_tile.cu`: the tile). The count is the lines `diff`
shows, removed plus added, header comments included; files of different kinds (.c with .cu) are not
compared. A row that stands for a vendor library (.library, 04x's cuBLAS) is not a step: it is not
compared, nor compared against.
"""
import argparse
import difflib
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tables import refresh_chapter_readmes  # noqa: E402

MARKER = "step-diffs"
ENTRY = re.compile(r'\.id\s*=\s*"(?P<id>\w+)".*?\.source\s*=\s*DIR\s*"(?P<file>[^"]+)"', re.S)


STEP_HEADER = re.compile(r'^#include "(\d\d[a-z]_\w+\.cuh)"', re.M)


LIBRARY = re.compile(r'\.library\s*=\s*"([^"]+)"')


def steps_of(chapter):
    """[(id, file, library)] in registry order; library is the vendor library a row stands for (04x:
    cuBLAS), or None for a step of the ladder."""
    with open(os.path.join(chapter, "steps.c")) as f:
        text = f.read()
    found = list(ENTRY.finditer(text))
    steps = []
    for i, m in enumerate(found):
        entry = text[m.start():found[i + 1].start() if i + 1 < len(found) else len(text)]
        library = LIBRARY.search(entry)
        steps.append((m.group("id"), m.group("file"), library.group(1) if library else None))
    return steps


def own_header(chapter, name):
    """The step's kernel header, named like its file, or None."""
    header = os.path.splitext(name)[0] + ".cuh"
    return header if os.path.exists(os.path.join(chapter, header)) else None


def reused_header(chapter, name):
    """The header of an earlier step whose kernel this step's file launches, or None."""
    with open(os.path.join(chapter, name)) as f:
        found = STEP_HEADER.search(f.read())
    return found.group(1) if found and found.group(1) != own_header(chapter, name) else None


def kernel_file(chapter, name):
    """Where the kernel a step runs is written."""
    return own_header(chapter, name) or reused_header(chapter, name) or name


def lines_of(path):
    with open(path) as f:
        return f.read().splitlines()


def changed_lines(before, after):
    """Lines `diff before after` shows: removed plus added."""
    return sum(1 for line in difflib.unified_diff(before, after, lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---")))


def table(chapter):
    out = ["| step | file | lines | lines `diff` shows against the step before |", "| --- | --- | --- | --- |"]
    previous = None
    for step, name, library in steps_of(chapter):
        files = [f for f in (own_header(chapter, name), name) if f]
        lines = sum(len(lines_of(os.path.join(chapter, f))) for f in files)
        if library:
            against = f"not a step of the ladder: the same work handed to {library}"
        elif previous is None:
            against = "the first step"
        elif os.path.splitext(previous)[1] != os.path.splitext(name)[1]:
            against = f"not a kernel of its own: compare with the steps it launches (`{name}` says which)"
        else:
            before, after = ((previous, name) if reused_header(chapter, name)
                             else (kernel_file(chapter, previous), kernel_file(chapter, name)))
            count = changed_lines(lines_of(os.path.join(chapter, before)), lines_of(os.path.join(chapter, after)))
            against = f"{count} (`diff {before} {after}`)"
        links = " + ".join(f"[`{f}`]({f})" for f in files)
        out.append(f"| {step} | {links} | {lines} | {against} |")
        if not library:
            previous = name
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    stale = refresh_chapter_readmes(args.root, MARKER, lambda readme, text: table(os.path.dirname(readme)),
                                    args.check, "step_diffs")
    if stale:
        print(f"step_diffs: {', '.join(stale)}: the step table is not what the sources give "
              f"(run python3 bench/step_diffs.py .)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
