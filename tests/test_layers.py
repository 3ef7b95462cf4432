#!/usr/bin/env python3
"""The project's floors, checked: which of its files may include or call which.

usage: test_layers.py SOURCE_ROOT BUILD_DIR

An arrow from file A to file B is read two ways: A includes B (a quoted #include, found as the compiler
finds it: common/harness/hash_sources.py), or A's object file needs a symbol that B's object file
defines (nm over the objects the build compiled, named in its compile_commands.json). Each file
belongs to one place, and each place may point only at the places below:

  common/kernel    what a kernel's source may include               itself
  chapter NN       01-09, the kernels                                common/kernel, itself, earlier chapters
  common/harness   what drives the kernels                           common/kernel, itself, emu/'s headers;
                                                                     the kernels only from registry.c, the
                                                                     list the build generates
  emu              the PTX emulator                                  itself, common/kernel/bounded.h, and
                                                                     common/harness/npy (the .npy files
                                                                     ptxrun reads and writes)
  chapter 10, 11   programs built on the kernels                     common/, emu/'s headers, chapters up
                                                                     to itself
  bench            the runner and its tooling                        anything but tests
  tests            the tests                                         anything

Nothing outside bench/ points into it, and no circle runs through the project's files: no two files
call each other, directly or round a longer loop, and no headers include each other. emu/libcudaemu.so
stands in for the CUDA runtime, so a call to a name of the runtime (cuda*, __cuda*) is a call to the
runtime, not an arrow to emu/runtime.c. A planted arrow of each kind is checked first, so a checker that
stopped seeing arrows would fail here too.
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.realpath(sys.argv[1])
BUILD = os.path.realpath(sys.argv[2])
sys.path.insert(0, os.path.join(ROOT, "common", "harness"))
from hash_sources import project_includes  # noqa: E402

SOURCE_SUFFIXES = (".c", ".cu", ".h", ".cuh")
PLACES = ("common/kernel", "common/harness", "emu", "bench", "tests")
KERNEL_CHAPTERS = 9  # chapters 01-09 register kernels; 10 and 11 are programs built on them
EMU_SHARED = ("common/kernel/bounded.h", "common/harness/npy.h", "common/harness/npy.c")


def place_of(path):
    """The place a file (relative to the root) belongs to: one of PLACES, or ("chapter", NN); None for
    files outside them (generated sources in the build folder)."""
    for place in PLACES:
        if path.startswith(place + "/"):
            return place
    chapter = re.match(r"chapters/(\d\d)_", path)
    return ("chapter", int(chapter.group(1))) if chapter else None


def why_not(source, target):
    """None when the arrow source -> target is allowed; otherwise why it is not."""
    a, b = place_of(source), place_of(target)
    if a is None or b is None or a == b or a == "tests":
        return None
    if b == "bench":
        return "nothing outside bench/ may use bench/ (the runner is the top floor)"
    if b == "tests":
        return "only tests may use tests/"
    if a == "bench":
        return None
    if a == "common/kernel":
        return "common/kernel may reach only itself: it is what every kernel includes"
    if a == "emu":
        return None if target in EMU_SHARED else "emu/ may reach only bounded.h and the .npy format outside itself"
    if b == "common/kernel":
        return None
    if a == "common/harness":
        if b == "emu" and target.endswith(".h"):
            return None
        if isinstance(b, tuple) and source == "common/harness/registry.c":
            return None
        return "common/harness reaches the kernels only through registry.c, and emu/ only through its headers"
    chapter = a[1]
    if chapter <= KERNEL_CHAPTERS:
        if isinstance(b, tuple) and b[1] < chapter:
            return None
        return "a kernel chapter may reach only common/kernel and the chapters before it"
    if b == "common/harness" or (b == "emu" and target.endswith(".h")):
        return None
    if isinstance(b, tuple) and b[1] <= chapter:
        return None
    return "a program chapter may reach common/, emu/'s headers and the chapters up to itself"


def circles(arrows):
    """The strongly connected sets of more than one file (Tarjan's algorithm), each sorted."""
    graph = {}
    for a, b in arrows:
        if a != b:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set())
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def problems(arrows):
    """One line per arrow that breaks a floor, and one per circle."""
    lines = [f"{s} -> {t} ({how}): {why_not(s, t)}" for s, t, how in sorted(arrows) if why_not(s, t)]
    lines += ["circle: " + " -> ".join(c) for c in circles([(s, t) for s, t, _ in arrows])]
    return lines


def include_arrows():
    arrows = set()
    for top in ("common", "chapters", "emu", "bench", "tests"):
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith(SOURCE_SUFFIXES):
                    path = os.path.join(folder, name)
                    for target in project_includes(path, ROOT):
                        arrows.add((os.path.relpath(path, ROOT), os.path.relpath(target, ROOT), "includes"))
    return arrows


def symbols(obj):
    """The global symbols an object file defines (strongly: not weak, not common) and those it needs."""
    defined, needed = set(), set()
    out = subprocess.run(["nm", "-g", obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == "U":
            needed.add(fields[1])
        elif len(fields) == 3 and fields[1] in "TDBR":
            defined.add(fields[2])
    return defined, needed


def call_arrows():
    with open(os.path.join(BUILD, "compile_commands.json")) as f:
        commands = json.load(f)
    objects = {}  # object file -> its source, relative to the root
    for entry in commands:
        source = os.path.relpath(os.path.realpath(os.path.join(entry["directory"], entry["file"])), ROOT)
        obj = os.path.join(entry["directory"], entry["output"])
        if os.path.exists(obj):
            objects[obj] = source
    definer, needs = {}, {}
    for obj, source in objects.items():
        defined, needed = symbols(obj)
        if source == "emu/runtime.c":  # the stand-in for the CUDA runtime: its names are the runtime's
            defined = {symbol for symbol in defined if not symbol.startswith(("cuda", "__cuda"))}
        for symbol in defined:
            definer.setdefault(symbol, set()).add(source)
        needs.setdefault(source, set()).update(needed)
    arrows = {(source, target, "calls " + symbol)
              for source, needed in needs.items() for symbol in needed for target in definer.get(symbol, ())}
    return arrows, len(objects)


def planted_arrows_are_caught():
    """Each kind of broken arrow, planted, must be reported."""
    planted = {
        ("common/kernel/tiles.h", "common/harness/harness.h", "includes"): "common/kernel",
        ("common/harness/harness.c", "chapters/05_implicit_gemm_tc/05a_wmma.cu", "calls launch_05a"): "registry.c",
        ("chapters/10_resnet_block/block.c", "bench/results_csv.c", "calls x"): "bench/",
        ("chapters/06_dgrad/06a_flipped_filter.cu", "chapters/07_wgrad/wgrad.h", "includes"): "chapters before it",
        ("emu/exec.c", "common/harness/harness.h", "includes"): "emu/",
    }
    ok = True
    for arrow, expected in planted.items():
        reported = problems({arrow})
        if not reported or expected not in reported[0]:
            print(f"FAIL the planted arrow {arrow[0]} -> {arrow[1]} is not reported as breaking '{expected}'")
            ok = False
    circle = {("common/harness/a.c", "common/harness/b.c", "calls g"),
              ("common/harness/b.c", "common/harness/a.c", "calls f")}
    if not any(line.startswith("circle:") for line in problems(circle)):
        print("FAIL a planted circle a.c -> b.c -> a.c is not reported")
        ok = False
    allowed = {("chapters/08_hopper/hopper.cuh", "chapters/05_implicit_gemm_tc/implicit_gemm.h", "includes"),
               ("common/harness/registry.c", "chapters/05_implicit_gemm_tc/steps.c", "calls ch05_kernels")}
    if problems(allowed):
        print(f"FAIL allowed arrows reported: {problems(allowed)}")
        ok = False
    return ok


def main():
    if not planted_arrows_are_caught():
        return 1
    calls, object_count = call_arrows()
    if object_count == 0:
        print(f"FAIL no object files of the build found through {BUILD}/compile_commands.json")
        return 1
    arrows = include_arrows() | calls
    found = problems(arrows)
    for line in found:
        print("FAIL " + line)
    print(f"{len(arrows)} arrows ({object_count} object files read): "
          + (f"{len(found)} break the floors" if found else "every one within the floors, no circle"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
