"""The project's text speaks of the project only: no words a reader cannot resolve. Fails, naming
file:line, on "design brief", "issue N" (a tracker the reader cannot see) and "seeds/" (the old name
of the tutorial/ layer suite), anywhere in README.md, docs/, chapters/, common/, bench/, emu/ and
tests/ (except this file). Run as: test_words.py REPOSITORY_ROOT"""
import os
import re
import sys

root = sys.argv[1]
this = os.path.abspath(__file__)
patterns = [
    ("design brief", re.compile(r"design brief", re.IGNORECASE)),
    ("issue N", re.compile(r"\bissue \d+", re.IGNORECASE)),
    ("seeds/", re.compile(r"seeds/")),
]


def text_files():
    yield os.path.join(root, "README.md")
    for top in ("docs", "chapters", "common", "bench", "emu", "tests"):
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for name in sorted(files):
                path = os.path.join(folder, name)
                if os.path.abspath(path) != this:
                    yield path


failures = []
checked = 0
for path in text_files():
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (UnicodeDecodeError, OSError):
        continue  # images and other binary files
    checked += 1
    for number, line in enumerate(lines, 1):
        for label, pattern in patterns:
            if pattern.search(line):
                failures.append(f"{os.path.relpath(path, root)}:{number}: {label}: {line.strip()}")

for failure in failures:
    print("FAIL", failure)
print(f"test_words: {checked} files, {len(failures)} failures")
sys.exit(1 if failures else 0)
