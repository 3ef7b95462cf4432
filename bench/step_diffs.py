"""How far apart a chapter's steps are: a table of each step's file, its length, and how many lines
`diff` shows against the step before, written into the chapter's README.

    python3 bench/step_diffs.py ROOT            write the table into every chapter README that has
                                                `<!-- step-diffs:begin -->` ... `<!-- step-diffs:end -->`
    python3 bench/step_diffs.py ROOT --check    write nothing; exit 1, naming the README, if a table
                                                is not what the sources give

The steps and their files come from the chapter's registry list (steps.c: each entry's .id and .source),
in the order a reader climbs them. Steps that share a file (a kernel launched on another tile shape)
share a row. A file is compared with the file of the step before when both are kernel files of the same
kind (.cu with .cu); the count is the lines `diff` shows, removed plus added, header comments included.
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


def steps_of(chapter):
    """[(ids, file)] in registry order, ids sharing a file grouped."""
    with open(os.path.join(chapter, "steps.c")) as f:
        text = f.read()
    rows = []
    for m in ENTRY.finditer(text):
        if rows and rows[-1][1] == m.group("file"):
            rows[-1][0].append(m.group("id"))
        else:
            rows.append(([m.group("id")], m.group("file")))
    return rows


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
    for ids, name in steps_of(chapter):
        text = lines_of(os.path.join(chapter, name))
        if previous is None:
            against = "the first step"
        elif os.path.splitext(previous)[1] != os.path.splitext(name)[1]:
            against = f"not a kernel of its own: compare with the steps it launches (`{name}` says which)"
        else:
            against = f"{changed_lines(lines_of(os.path.join(chapter, previous)), text)} (`diff {previous} {name}`)"
        if len(ids) > 1:
            others = ", ".join(ids[1:])
            against += (f"; {others} {'is' if len(ids) == 2 else 'are'} {ids[0]}'s kernel on "
                        f"{'another tile shape' if len(ids) == 2 else 'other tile shapes'}, at the end of the file")
        out.append(f"| {', '.join(ids)} | [`{name}`]({name}) | {len(text)} | {against} |")
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
