"""The timing model's numbers in the project are current, complete and labelled.

1. Every chapter README's modeled table is what bench/results/modeled/h100.csv gives (bench/tables.py
   --modeled --check), and emu/README.md's validation table what the modeled and measured CSVs give
   (bench/model_validation.py --check), and its microbenchmark table what the model gives now
   (bench/model_microbench.py --check, running them), and its independent check on a published GEMM series
   what the model gives now (bench/model_sgemm.py --check, after --verify shows the series' kernels compute
   the product), and its table of ptxas's stall counts beside Nsight Compute's `wait` what the machine code
   of the build's PTX gives now (bench/stall_counts.py --check): generated, never typed.
2. The modeled CSV describes the code in the tree: each row's source_sha256 is its chapter's digest and its
   emulator_sha256 is emu/'s (the model lives in emu/), as for the counts (test_counter_tables.py).
3. It is complete: every kernel and layer the emulator counted (bench/results/emulator.csv) was modeled on
   the H100, the A100 and the A6000 (or, on the Ampere GPUs, found unsupported: chapter 08's sm_90a code).
4. Every table and figure caption that shows modeled numbers says "a model, not a measurement".
5. The validation's kernels were also modeled from their PTX alone, from the same code
   (bench/results/modeled/ptx_alone/h100.csv), so its table shows what reading the machine code changes.
6. No modeled time is below the bound from counts (bench/emulator_csv.py, at the modeled GPU's peak rates):
   the model's rows against the bound's tensor-core and DRAM terms, and its H100 rows from the PTX alone
   against every term. The instruction terms count PTX, which ptxas shortens, and the shared-memory term the
   PTX's accesses, which ptxas widens (four ld.shared.f32 of consecutive words: one LDS.128, fewer
   wavefronts): the machine code may beat them, and does (04a, measured on the H100 below its shared-memory
   term).
7. Every issued machine instruction is one warp-cycle in the state `selected` (its warp issuing it): the
   two agree on every modeled row, within 1%.

Run as: test_modeled.py SOURCE_ROOT PTXRUN
"""
import os
import subprocess
import sys

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "bench"))
sys.path.insert(0, os.path.join(root, "common", "harness"))
sys.dont_write_bytecode = True
import emulator_csv  # noqa: E402
import modeled_csv  # noqa: E402
from hash_sources import code_digest  # noqa: E402

failures = []


def claim(text, holds):
    print(f"{'PASS' if holds else 'FAIL'} {text}")
    if not holds:
        failures.append(text)


modeled_path = os.path.join(root, "bench", "results", "modeled", "h100.csv")  # the chapters' tables
ptxrun = sys.argv[2]
for command in (["tables.py", "--modeled", modeled_path, "--readmes", root, "--check"],
                ["model_validation.py", "--check"], ["model_microbench.py", "--check", "--ptxrun", ptxrun],
                ["model_sgemm.py", "--verify", "--ptxrun", ptxrun], ["model_sgemm.py", "--check", "--ptxrun", ptxrun],
                ["stall_counts.py", "--check", "--build", os.path.dirname(os.path.dirname(os.path.abspath(ptxrun)))]):
    done = subprocess.run([sys.executable, os.path.join(root, "bench", command[0])] + command[1:],
                          capture_output=True, text=True)
    claim(f"{' '.join(command[:2])} passes: the kernels compute what they must, or the generated text is current "
          f"({(done.stderr or done.stdout).strip()[-300:]})", done.returncode == 0)

chapters = {name[:2]: os.path.join(root, "chapters", name) for name in os.listdir(os.path.join(root, "chapters"))}
emulator_digest = code_digest(os.path.join(root, "emu"), root)
counted = {(r["kernel"], r["layer"], str(r["n"])) for r in emulator_csv.load(
    os.path.join(root, "bench", "results", "emulator.csv")) if r["status"] == "counted"}
gpus = modeled_csv.gpus(os.path.join(root, "bench", "results"))
claim(f"bench/results/modeled/ has the H100's, the A100's and the A6000's CSVs ({gpus})",
      {"h100", "a100", "a6000"} <= set(gpus))
for gpu in gpus:
    modeled = modeled_csv.load(os.path.join(root, "bench", "results", modeled_csv.FOLDER, gpu + ".csv"))
    stale = [f"{r['kernel']} {r['layer']}" for r in modeled if r["source_sha256"] !=
             code_digest(chapters[r["chapter"]], root) or r["emulator_sha256"] != emulator_digest]
    claim(f"{gpu}: every modeled row was modeled from the tree's chapters and emu/ (stale: {stale[:5]}; rerun "
          "bash bench/run.sh without a GPU)", not stale)
    # a kernel the GPU cannot run (its code is for a newer one) is there too, as unsupported
    have = {(r["kernel"], r["layer"], r["n"]) for r in modeled if r["status"] in ("counted", "unsupported")}
    claim(f"{gpu}: every counted (kernel, layer, N) is modeled (missing: {sorted(counted - have)[:5]})",
          counted <= have)

done = subprocess.run([sys.executable, os.path.join(root, "bench", "model_validation.py"), "--stale-ptx-alone", "h100"],
                      capture_output=True, text=True)
claim(f"h100: every validated kernel was modeled from its PTX alone by the tree's code and emu/ (stale: "
      f"{(done.stdout or done.stderr).strip()[-200:]}; rerun bash bench/run.sh without a GPU)",
      done.returncode == 0 and not done.stdout.strip())

for gpu in gpus:
    off = [f"{r['kernel']} {r['layer']}: {r['warp_cycles_selected'] / r['issued']:.3f}" for r in modeled_csv.load(
        os.path.join(root, "bench", "results", modeled_csv.FOLDER, gpu + ".csv"))
        if r["status"] == "counted" and abs(r["warp_cycles_selected"] - r["issued"]) > 0.01 * r["issued"]]
    claim(f"{gpu}: selected warp-cycles per issued machine instruction are 1 ({off[:3]})", not off)

counts = {(r["kernel"], r["layer"], str(r["n"])): r for r in emulator_csv.load(
    os.path.join(root, "bench", "results", "emulator.csv")) if r["status"] == "counted"}
for path, terms in [(os.path.join(root, "bench", "results", "modeled", gpu + ".csv"),
                     ("tensor cores", "DRAM")) for gpu in gpus] + \
                   [(os.path.join(root, "bench", "results", "modeled", "ptx_alone", "h100.csv"), None)]:
    figures = emulator_csv.gpu_figures(os.path.basename(path)[:-len(".csv")])  # the modeled GPU's peaks
    below = []
    for r in modeled_csv.load(path) if os.path.exists(path) else []:
        c = counts.get((r["kernel"], r["layer"], r["n"]))
        if r["status"] == "counted" and c:
            bounds = emulator_csv.bound_us(c, figures)
            floor = max(v for name, v in bounds.items() if terms is None or name in terms)
            if r["modeled_us"] < floor:
                below.append(f"{r['kernel']} {r['layer']}: {r['modeled_us']:.1f} < {floor:.1f} µs")
    claim(f"{os.path.relpath(path, root)}: no modeled time below the bound from counts ({below[:3]})", not below)

label = "a model, not a measurement"
for path in [os.path.join(root, "README.md"), os.path.join(root, "emu", "README.md")] + \
        [os.path.join(chapters[c], "README.md") for c in sorted(chapters)]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if "<!-- modeled:begin -->" in text:
        section = text.split("<!-- modeled:begin -->")[1].split("<!-- modeled:end -->")[0]
        claim(f"{os.path.relpath(path, root)}: its modeled table says '{label}'", label in section)
    if "<!-- model-validation:begin -->" in text:
        section = text.split("<!-- model-validation:begin -->")[1].split("<!-- model-validation:end -->")[0]
        claim(f"{os.path.relpath(path, root)}: its validation table says '{label}'", label in section)

print(f"test_modeled: {len(failures)} failed" if failures else "test_modeled: all checks passed")
sys.exit(1 if failures else 0)
