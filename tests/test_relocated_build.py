"""A copied or moved build runs its own kernels on the emulator: the PTX embedded in its programs, by its
own emulator library; nothing at the place it was built from.

1. The PTX in the programs' fat binaries is plain text and is the PTX of the build's emu/NAME.ptx files
   (the same instructions on the same lines: what the emulator ran when it read those files, and what
   bench/results/emulator.csv counts), one source's per fat binary, chapter 08's for compute_90a.
2. The whole build folder is copied outside the build (its tests/ and meson-logs/ folders, which hold
   test output, stay behind), and `conv check 02a --emulate` passes in the copy.
3. A changed kernel in the copy runs the changed code: the copy's conv gets chapter 02's PTX with the
   input read twice instead of input times weight, and 02a fails there, while the build's own conv
   still passes.
4. The copy's own emulator library is the one it runs: replaced by a file that is no library, or
   removed, the copy's `--emulate` fails in one line naming it, and never falls back to the build's.
5. The copy is moved, and a broken copy takes its old place (wrong PTX in its conv and in its
   emu/*.ptx, no library): the moved build still passes. Its own emu/02a_k_fastest.ptx, changed too, is not
   what runs either, unless EMU_PTX_PATH asks for it (then 02a fails: the override still works).

The copies live in a temporary folder outside the build, so no folder above them holds another build's
library. Run as: test_relocated_build.py BUILD_DIR
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

build = os.path.abspath(sys.argv[1])
failures = []

FATBIN_MAGIC = 0xBA55ED50
COMPRESSED = 0x1000 | 0x2000 | 0x8000
# chapter 02's inner product, fma(input, weight, sum): the changed kernel reads the input twice
FMA = re.compile(rb"fma\.rn\.f32(\s+)(%f\d+),(\s+)(%f\d+),(\s+)(%f\d+),")


def input_twice(match):
    same_length = len(match.group(4)) == len(match.group(6))
    operand = match.group(4) if same_length else match.group(6)
    return b"fma.rn.f32" + match.group(1) + match.group(2) + b"," + match.group(3) + match.group(4) + b"," + \
        match.group(5) + operand + b","


def fatbin_ptx(path):
    """The PTX entries of a program's .nv_fatbin section: (offset in the file, bytes, arch, flags)."""
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = sections[shstrndx][4]
    entries = []
    for name, _, _, _, offset, size in sections:
        if data[names + name:data.index(b"\0", names + name)] != b".nv_fatbin":
            continue
        at = offset
        while at + 16 <= offset + size:
            magic, _, header, body = struct.unpack_from("<IHHQ", data, at)
            if magic != FATBIN_MAGIC:  # padding between fat binaries
                at += 8
                continue
            entry, end = at + header, at + header + body
            while entry < end:
                kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
                arch, = struct.unpack_from("<I", data, entry + 28)
                flags, = struct.unpack_from("<Q", data, entry + 40)
                if kind == 1:
                    entries.append((entry + entry_header, payload, arch, flags))
                entry += entry_header + payload
            at = end
    return data, entries


def source_of(ptx):
    found = re.search(rb'\.file\s+1\s+"([^"]+)"', ptx)
    return os.path.basename(found.group(1).decode()) if found else None


def normalized(text):
    """PTX without comments, blank lines, .file paths and layout: what the fat binary keeps of it."""
    lines = []
    for line in text.decode().splitlines():
        line = " ".join(line.split())
        if line and not line.startswith("//") and not line.startswith(".file"):
            lines.append(line)
    return lines


def built_ptx():
    """{(normalized PTX, line count): the build's emu/NAME.ptx file name}."""
    folder = os.path.join(build, "emu")
    table = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".ptx"):
            text = open(os.path.join(folder, name), "rb").read()
            table[(tuple(normalized(text)), text.count(b"\n"))] = name
    return table


def same_ptx_as_files(program):
    """The sources (NAME.cu) whose emu/NAME.ptx each PTX entry of the program's fat binaries is. An entry
    is matched by its content: its first .file names the file its first kernel's code is in, which is a
    header where a step launches an earlier step's kernel (05e_large_tile.cu runs 05d's)."""
    data, entries = fatbin_ptx(program)
    files = built_ptx()
    sources = set()
    for offset, size, arch, flags in entries:
        ptx = data[offset:offset + size].rstrip(b"\0")
        label = source_of(ptx) or "a source"
        if flags & COMPRESSED:
            failures.append(f"{program}: the PTX of {label} is compressed (flags {flags:#x}): the emulator "
                            "cannot read it")
            continue
        name = files.get((tuple(normalized(ptx)), ptx.count(b"\n")))
        if name is None:
            failures.append(f"{program}: the fat binary's PTX of {label} (compute_{arch}) is none of the build's "
                            "emu/*.ptx")
            continue
        sources.add(os.path.splitext(name)[0] + ".cu")
    return sources


def conv_check(root, env=None):
    return subprocess.run([os.path.join(root, "conv"), "check", "02a", "--emulate", "--random", "0"],
                          capture_output=True, text=True, timeout=600, env=env)


def passed(run):
    return run.returncode == 0 and " pass, 0 fail" in run.stdout


def failed_check(run):
    found = re.search(r"(\d+) pass, (\d+) fail", run.stdout)
    return run.returncode != 0 and found is not None and int(found.group(2)) > 0


def expect(ok, what, run=None):
    print(f"{'PASS' if ok else 'FAIL'} {what}")
    if not ok:
        detail = f": exit {run.returncode}: {(run.stdout + run.stderr).strip()[-400:]!r}" if run else ""
        failures.append(what + detail)


def copy_build(source, target):
    def skip(folder, names):
        return {"tests", "meson-logs"} if os.path.abspath(folder) == os.path.abspath(source) else set()

    def copy(src, dst):
        try:
            shutil.copy2(src, dst)
        except FileNotFoundError:  # test output that another test removed meanwhile
            pass
    try:
        shutil.copytree(source, target, symlinks=True, ignore=skip, copy_function=copy)
    except shutil.Error as error:
        # test output another test removed while it was copied is no loss; anything else is
        if any(os.path.exists(src) for src, _, _ in error.args[0]):
            raise


def change_kernel(program):
    """02a's PTX in the program's fat binary, with the input read twice (same length, in place)."""
    data, entries = fatbin_ptx(program)
    data = bytearray(data)
    changed = 0
    for offset, size, _, _ in entries:
        if source_of(data[offset:offset + size]) == "02a_k_fastest.cu":
            ptx, count = FMA.subn(input_twice, bytes(data[offset:offset + size]))
            if len(ptx) == size:
                data[offset:offset + size] = ptx
                changed += count
    with open(program, "wb") as f:
        f.write(data)
    return changed


def main():
    conv = os.path.join(build, "conv")
    sources = same_ptx_as_files(conv)
    train_cnn = os.path.join(build, "chapters", "11_train_cnn", "train_cnn")
    if os.path.exists(train_cnn):
        sources |= same_ptx_as_files(train_cnn)
    expected = {os.path.splitext(name)[0] + ".cu" for name in os.listdir(os.path.join(build, "emu"))
                if name.endswith(".ptx")}
    expect(sources == expected, f"1. the fat binaries' PTX is the build's emu/*.ptx, one per source "
           f"({len(sources)} sources; missing: {sorted(expected - sources)}, extra: {sorted(sources - expected)})")

    work = tempfile.mkdtemp(prefix="conv-relocated-")
    try:
        copy = os.path.join(work, "build")
        copy_build(build, copy)
        copy_conv = os.path.join(copy, "conv")
        run = conv_check(copy)
        expect(passed(run), "2. the copied build passes 02a on the emulator", run)

        saved = open(copy_conv, "rb").read()
        count = change_kernel(copy_conv)
        run = conv_check(copy)
        expect(count > 0 and failed_check(run),
               f"3. the copy's changed kernel ({count} fma changed in its conv) runs and fails 02a", run)
        run = conv_check(build)
        expect(passed(run), "3. the build's own conv still passes 02a", run)
        with open(copy_conv, "wb") as f:
            f.write(saved)

        library = os.path.join(copy, "emu", "libcudaemu.so")
        kept = library + ".kept"
        os.rename(library, kept)
        with open(library, "w") as f:
            f.write("not a library\n")
        run = conv_check(copy)
        expect(run.returncode != 0 and library in run.stderr and "did not load" in run.stderr,
               "4. the copy runs its own library: a broken one stops it, naming it", run)
        os.remove(library)
        run = conv_check(copy)
        lines = run.stderr.strip().splitlines()
        expect(run.returncode != 0 and len(lines) == 1 and library in run.stderr and "missing" in run.stderr,
               "4. without its library the copy stops in one line naming where it looked", run)
        os.rename(kept, library)

        moved = os.path.join(work, "moved")
        os.rename(copy, moved)
        copy_build(moved, copy)  # the old place now holds a broken build
        change_kernel(os.path.join(copy, "conv"))
        kernel_ptx = os.path.join(copy, "emu", "02a_k_fastest.ptx")
        ptx = open(kernel_ptx, "rb").read()
        with open(kernel_ptx, "wb") as f:
            f.write(FMA.sub(input_twice, ptx))
        os.remove(os.path.join(copy, "emu", "libcudaemu.so"))
        shutil.copy2(os.path.join(copy, "emu", "02a_k_fastest.ptx"), os.path.join(moved, "emu", "02a_k_fastest.ptx"))
        run = conv_check(moved)
        expect(passed(run), "5. the moved build passes 02a, whatever is at its old place and in its emu/02a_k_fastest.ptx",
               run)
        run = conv_check(moved, dict(os.environ, EMU_PTX_PATH=os.path.join(moved, "emu")))
        expect(failed_check(run), "5. EMU_PTX_PATH still overrides: the changed emu/02a_k_fastest.ptx runs and fails", run)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"relocated_build: {len(failures)} failures")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
