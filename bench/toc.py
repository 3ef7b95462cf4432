"""A table of contents for every chapter README that asks for one, between `<!-- toc:begin -->` and
`<!-- toc:end -->`: its `##` and `###` headings as links, in order.

    python3 bench/toc.py ROOT            write the tables
    python3 bench/toc.py ROOT --check    write nothing; exit 1, naming the README, if one is not current

Anchors are GitHub's: the heading lower-cased, punctuation but hyphens and underscores dropped, spaces
made hyphens.
"""
import argparse
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tables import refresh_chapter_readmes  # noqa: E402

MARKER = "toc"


def anchor(title):
    text = re.sub(r"[`*]", "", title).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def contents(text):
    lines, in_code = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^(##|###) (.+)$", line)
        if m:
            indent = "" if m.group(1) == "##" else "  "
            lines.append(f"{indent}- [{m.group(2).strip()}](#{anchor(m.group(2))})")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    stale = refresh_chapter_readmes(args.root, MARKER, lambda readme, text: contents(text), args.check, "toc")
    if stale:
        print(f"toc: {', '.join(stale)}: the table of contents is not the headings' (run python3 bench/toc.py .)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
