"""build suite: what the compiler made of each kernel file, checked without a GPU.

For every CUDA source and every GPU architecture of the build: ptxas's resource report must show no
register spills (a spilled hot loop goes through local memory), and the instructions each registered
kernel's row names (conv_kernel's .ptx and .sass, read from `conv list --json`) must be in its source
file's PTX (e.g. that a shared-memory chapter really stages through shared memory, or that a
tensor-core chapter really contains mma.sync) and in its machine code for the newest architecture
(HMMA, LDSM, LDGSTS: what the hardware will really run). A row whose file is not among the sources
given is left to the run that compiles it (chapter 08's, for sm_90a). The SASS checks
need cuobjdump and nvdisasm, which the toolkit here lacks: tests/run.sh installs them from PyPI
(nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm). Exits 1 on any failure; otherwise 77 (skip) if nvcc is
missing, or if cuobjdump is and some SASS pattern was therefore not checked: a pass means every check ran.

Run as: check_build.py --nvcc NVCC --arch 80 --arch 90 -I DIR ... --registry CONV
        [--registers FILE=FUNCTION_REGEX=N ...] FILE.cu ...
"""
import argparse
import glob
import json
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile


def find_cuobjdump():
    found = shutil.which("cuobjdump")
    if found:
        return found
    for base in site.getsitepackages() + [site.getusersitepackages()]:
        for path in glob.glob(os.path.join(base, "nvidia", "*", "bin", "cuobjdump")):
            return path
    return None


def expectations_by_file(conv, sources):
    """{file name: [PTX patterns]}, {file name: [SASS patterns]} of the registered kernels whose source
    is among `sources`, from the runner's `list --json`."""
    listed = subprocess.run([conv, "list", "--json"], capture_output=True, text=True, check=True).stdout
    given = {os.path.basename(s) for s in sources}
    ptx, sass = {}, {}
    for kernel in json.loads(listed):
        name = os.path.basename(kernel["source"])
        if name in given:
            ptx.setdefault(name, []).extend(kernel["ptx"])
            sass.setdefault(name, []).extend(kernel["sass"])
    return ptx, sass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nvcc", default="nvcc")
    parser.add_argument("--arch", action="append", required=True)
    parser.add_argument("-I", dest="includes", action="append", default=[])
    parser.add_argument("--registry", required=True, help="the runner, conv: the rows' .ptx and .sass")
    # FILE=FUNCTION_REGEX=N: ptxas must give the entry function exactly N registers per thread (for the newest
    # --arch), where a kernel's code rests on the count (08b's setmaxnreg split of the block's register pool)
    parser.add_argument("--registers", action="append", default=[])
    parser.add_argument("sources", nargs="+")
    args = parser.parse_args()
    if not shutil.which(args.nvcc):
        print(f"skip: {args.nvcc} not found")
        return 77

    expectations, sass_expectations = expectations_by_file(args.registry, args.sources)
    pattern_count = sum(map(len, expectations.values())) + sum(map(len, sass_expectations.values()))
    register_counts = {}
    for item in args.registers:
        name, function, count = item.rsplit("=", 2)
        register_counts.setdefault(name, []).append((function, int(count)))
    cuobjdump = find_cuobjdump()

    failures = []
    sass_not_run = []
    sources = []
    with tempfile.TemporaryDirectory() as tmp:
        sources = [s for s in args.sources if s.endswith(".cu")]
        for source in sources:
            name = os.path.basename(source)
            includes = [f"-I{d}" for d in args.includes]
            for arch in args.arch:
                gencode = f"-gencode=arch=compute_{arch},code=sm_{arch}"
                compiled = subprocess.run(
                    [args.nvcc, "-std=c++17", "-O3", gencode, "-Xptxas", "-v", *includes, "-c", source,
                     "-o", os.path.join(tmp, "out.o")], capture_output=True, text=True)
                if compiled.returncode != 0:
                    failures.append(f"{name} sm_{arch}: does not compile:\n{compiled.stderr}")
                    continue
                function = "?"
                counts_seen = {}
                for line in compiled.stderr.splitlines():
                    found = re.search(r"Compiling entry function '(\S+)'", line)
                    if found:
                        function = found.group(1)
                    used = re.search(r"Used (\d+) registers", line)
                    if used and arch == args.arch[-1]:
                        counts_seen[function] = int(used.group(1))
                    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
                    if spills and (int(spills.group(1)) or int(spills.group(2))):
                        failures.append(f"{name} sm_{arch}: {function} spills registers: {line.strip()}")
                if arch == args.arch[-1]:
                    for wanted, count in register_counts.pop(name, []):
                        matching = {f: n for f, n in counts_seen.items() if re.search(wanted, f)}
                        if not matching:
                            failures.append(f"{name} sm_{arch}: no entry function matches {wanted!r}")
                        for found_function, n in matching.items():
                            if n != count:
                                failures.append(f"{name} sm_{arch}: {found_function} got {n} registers from ptxas; "
                                                f"its code assumes {count}")
            sass_patterns = sass_expectations.pop(name, [])
            if sass_patterns and cuobjdump:  # out.o holds the newest architecture's code, compiled last
                # cuobjdump disassembles through nvdisasm, which the PyPI wheels put beside it
                env = dict(os.environ, PATH=os.path.dirname(cuobjdump) + os.pathsep + os.environ.get("PATH", ""))
                dumped = subprocess.run([cuobjdump, "-sass", os.path.join(tmp, "out.o")], capture_output=True,
                                        text=True, env=env)
                sass = dumped.stdout
                if dumped.returncode != 0:
                    failures.append(f"{name}: cuobjdump -sass failed: {dumped.stderr.strip()}")
                for pattern in sass_patterns:
                    if not re.search(pattern, sass):
                        failures.append(f"{name}: sm_{args.arch[-1]} SASS has no match for {pattern!r}")
            elif sass_patterns:
                sass_not_run.append(name)
            patterns = expectations.pop(name, [])
            if patterns:
                ptx_path = os.path.join(tmp, "out.ptx")
                subprocess.run([args.nvcc, "-std=c++17", "-O3", f"-arch=sm_{args.arch[-1]}", *includes, "-ptx",
                                source, "-o", ptx_path], check=True, capture_output=True)
                ptx = open(ptx_path).read()
                for pattern in patterns:
                    if not re.search(pattern, ptx):
                        failures.append(f"{name}: PTX has no match for {pattern!r}")
            print(f"{name}: checked for sm_{', sm_'.join(args.arch)}")
    for failure in failures:
        print("FAIL", failure)
    print(f"check_build: {len(sources)} files, {pattern_count} instructions the registry names, "
          f"{len(failures)} failures")
    if failures:
        return 1
    if sass_not_run:
        print(f"skip: SASS checks not run for {', '.join(sass_not_run)}: cuobjdump not found "
              "(pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
