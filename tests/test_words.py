"""The project's text speaks of the project only: no words a reader cannot resolve. Fails, naming
file:line, on "design brief", "issue N" (a tracker the reader cannot see), "seeds/" (the old name
of the tutorial/ layer suite) and words about how the project is made rather than what a reader runs
("GPU session", "owed", "tried by hand", "throwaway", "development machine"), anywhere in README.md, docs/, chapters/, common/, bench/, emu/ and
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
    # how the project is made, not what the reader can run or see
    ("a GPU session", re.compile(r"GPU session", re.IGNORECASE)),
    ("owed", re.compile(r"\bow(ed|es)\b", re.IGNORECASE)),
    ("by hand", re.compile(r"tried by hand", re.IGNORECASE)),
    ("throwaway", re.compile(r"throwaway", re.IGNORECASE)),
    ("development machine", re.compile(r"development machine", re.IGNORECASE)),
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
