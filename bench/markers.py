"""Generated sections of the project's markdown: whatever stands between `<!-- NAME:begin -->` and
`<!-- NAME:end -->` is a script's output, rewritten by it (--write) or compared with it (--check). Shared by
bench/tables.py, bench/model_validation.py, bench/model_microbench.py and tests/kernel_tests.py; not run on
its own.
"""
import os
import sys


def replace_between_markers(text, marker, content):
    """Put `content` between the NAME:begin/end comments; ValueError if they are not there once."""
    begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
    for tag in (begin, end):
        count = text.count(tag)
        if count != 1:
            raise ValueError(f"marker {tag} found {count} times (need exactly 1)")
    i, j = text.index(begin) + len(begin), text.index(end)
    if j < i:
        raise ValueError(f"marker {end} comes before {begin}")
    return text[:i] + "\n" + content + "\n" + text[j:]


def refresh(path, marker, content, check, tool, regenerate):
    """Write `content` into path's NAME section (or, with check, only compare it); 0, or 1 with one line on
    stderr: a missing marker, or with check a section that differs (`regenerate` says how to fix it)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        fresh = replace_between_markers(text, marker, content.rstrip("\n"))
    except ValueError as e:
        print(f"{tool}: {path}: {e}", file=sys.stderr)
        return 1
    shown = os.path.relpath(path)
    if check:
        if fresh != text:
            print(f"{tool}: {shown}'s {marker} section is not current: {regenerate}", file=sys.stderr)
            return 1
        print(f"{tool}: {shown}'s {marker} section is current")
        return 0
    if fresh != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(fresh)
        print(f"{tool}: {shown} updated")
    return 0
