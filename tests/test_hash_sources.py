#!/usr/bin/env python3
"""The digest the results record covers everything a kernel is compiled from (common/harness/hash_sources.py).

usage: test_hash_sources.py SOURCE_ROOT

On a copy of the real tree: a change to a header that a chapter includes from elsewhere (chapter 05's
steps.cuh and igemm_pipeline.cuh, which chapter 08 builds on; common/kernel/conv.h) changes that chapter's
digest, a change to a file no kernel of the chapter includes does not, and a chapter's own files count; the
emulator's digest covers the GPU figures its timing model is built from, and not their source texts.
Each check names the file it touched.
"""
import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.realpath(sys.argv[1])
sys.path.insert(0, os.path.join(ROOT, "common", "harness"))
sys.dont_write_bytecode = True
from hash_sources import code_digest, included_closure  # noqa: E402

failures = []


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    tree = os.path.join(tmp, "tree")
    for part in ("common", "emu", "bench", "chapters"):
        shutil.copytree(os.path.join(ROOT, part), os.path.join(tree, part),
                        ignore=shutil.ignore_patterns("__pycache__", "*.png", "results"))
    os.makedirs(os.path.join(tree, "tests"))

    def chapter(name):
        return os.path.join(tree, "chapters", name)

    def digest(name):
        return code_digest(chapter(name), tree)

    def touched(path, name):
        """Whether appending a comment to `path` changes chapter `name`'s digest."""
        before = digest(name)
        with open(os.path.join(tree, path), "a") as f:
            f.write("\n/* touched */\n")
        return digest(name) != before

    hopper = os.listdir(chapter("08_hopper"))
    closure = {os.path.relpath(p, tree) for p in included_closure(
        [os.path.join(chapter("08_hopper"), n) for n in hopper if n.endswith(".cu")], tree)}
    check("chapters/05_implicit_gemm_tc/igemm_pipeline.cuh" in closure, "08's closure holds chapter 05's "
          f"igemm_pipeline.cuh (included through chapter 05's headers): {sorted(closure)}")
    check(touched("chapters/05_implicit_gemm_tc/steps.cuh", "05_implicit_gemm_tc"),
          "a change to 05's steps.cuh changes 05's digest (a .cuh in the chapter's own folder)")
    check(touched("chapters/05_implicit_gemm_tc/igemm_pipeline.cuh", "08_hopper"),
          "a change to chapter 05's igemm_pipeline.cuh changes 08's digest (a header of another folder)")
    check(touched("common/kernel/conv.h", "02_naive_cuda"), "a change to common/kernel/conv.h changes 02's digest")
    check(not touched("common/harness/verify.c", "02_naive_cuda"),
          "a change to common/harness/verify.c (the harness, which no kernel includes) leaves 02's digest alone")
    before = code_digest(os.path.join(tree, "emu"), tree)
    with open(os.path.join(tree, "emu", "racecheck.c"), "a") as f:
        f.write("\n/* touched */\n")
    check(code_digest(os.path.join(tree, "emu"), tree) != before, "a change to emu/racecheck.c changes emu/'s digest")
    def edited_h100(edit):
        """Whether editing the copy's bench/h100.json with `edit` (a function of its dict) changes emu/'s digest."""
        path = os.path.join(tree, "bench", "h100.json")
        before = code_digest(os.path.join(tree, "emu"), tree)
        with open(path) as f:
            figures = json.load(f)
        edit(figures)
        with open(path, "w") as f:
            json.dump(figures, f)
        return code_digest(os.path.join(tree, "emu"), tree) != before

    chapter_02 = digest("02_naive_cuda")
    check(edited_h100(lambda g: g["lat_l2_hit_cycles"].update(value=g["lat_l2_hit_cycles"]["value"] + 1)),
          "a change to a figure of bench/h100.json (lat_l2_hit_cycles, which the timing model is built from) "
          "changes emu/'s digest")
    check(not edited_h100(lambda g: g["lat_l2_hit_cycles"].update(source=g["lat_l2_hit_cycles"]["source"] + ".")),
          "a change to a figure's source text in bench/h100.json leaves emu/'s digest alone")
    check(digest("02_naive_cuda") == chapter_02, "a change to bench/h100.json leaves 02's digest alone")

print(f"{'all' if not failures else len(failures)} {'checks passed' if not failures else 'checks FAILED'}")
sys.exit(1 if failures else 0)
