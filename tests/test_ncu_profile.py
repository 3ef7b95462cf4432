"""bench/ncu_profile.py's condensing of Nsight Compute's raw output into a row of bench/results/ncu/<gpu>.csv.

    python3 tests/test_ncu_profile.py SOURCE_ROOT PATH_TO_CONV

The fixture (tests/fixtures/ncu_raw_07b.csv) is `ncu --csv --page raw` of `conv run 07b --layer
resnet50/res4_3x3 --reps 1 --warmup 0` on an H100: two kernels (wgrad_split, wgrad_reduce), each launched
twice, the first time as the warm-up. One number is changed from the measurement, so that the wrong launch
cannot pass: the first wgrad_split's time, made 99,999 ns. A row is the last launch of each kernel, summed;
the warp states weighted by each launch's instructions. The values below were worked out by hand from the
file. A run that launched nothing (05l, which needs an epilogue) gives no row. The fixture was taken before the
L2's traffic was asked for, so its row leaves those columns empty; the same file with the two metrics added
(planted values: launch i reads 1000 * (i + 1) sectors and 10 * (i + 1) bytes from DRAM) gives the sums of
the last launch of each kernel.
"""
import csv
import gzip
import io
import os
import shutil
import subprocess
import sys
import tempfile

root, conv = sys.argv[1], sys.argv[2]
failures = []
with tempfile.TemporaryDirectory() as tmp:
    raw = os.path.join(tmp, "raw")
    os.makedirs(raw)
    shutil.copy(os.path.join(root, "tests", "fixtures", "ncu_raw_07b.csv"), os.path.join(raw, "07b_resnet50_res4_3x3.csv"))
    shutil.copy(os.path.join(root, "tests", "fixtures", "ncu_raw_05d.sass.csv"),
                os.path.join(raw, "05d_resnet50_res4_3x3.sass.csv"))
    with open(os.path.join(raw, "05l_resnet50_res4_3x3.csv"), "w") as f:  # what ncu writes when nothing launched
        f.write("==PROF== Connected to process 1\n05l ... | unsupported: kernel 05l runs only with an epilogue\n"
                "==ERROR== The application returned an error code (2).\n")

    def condensed(folder, name):
        out = os.path.join(tmp, name)
        run = subprocess.run([sys.executable, os.path.join(root, "bench", "ncu_profile.py"), "--from-raw", folder,
                              "--conv", conv, "--gpu-name", "NVIDIA H100 80GB HBM3", "--ncu-version", "2025.3.1.0",
                              "--date", "2026-11-26", "--out", out], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"FAIL ncu_profile.py --from-raw: {run.stderr.strip()}")
        with open(out, newline="") as f:
            return list(csv.DictReader(f))
    rows = condensed(raw, "h100.csv")
    # the same launches with the L2's traffic metrics added: header, units, then the four launches
    with open(os.path.join(raw, "07b_resnet50_res4_3x3.csv"), encoding="utf-8") as f:
        text = f.read()
    head, table = text[:text.find('"ID"')], list(csv.reader(io.StringIO(text[text.find('"ID"'):])))
    table[0] += ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                 "lts__t_sectors_srcunit_tex_op_read.sum", "dram__bytes_read.sum"]
    table[1] += ["request", "sector", "sector", "byte"]
    for i, launch in enumerate(table[2:]):
        launch += [str(100 * (i + 1)), str(400 * (i + 1)), str(1000 * (i + 1)), str(10 * (i + 1))]
    traffic = os.path.join(tmp, "traffic")
    os.makedirs(traffic)
    with open(os.path.join(traffic, "07b_resnet50_res4_3x3.csv"), "w", encoding="utf-8", newline="") as f:
        f.write(head)
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(table)
    traffic_rows = condensed(traffic, "traffic.csv")
    with gzip.open(os.path.join(tmp, "h100_sass.csv.gz"), "rt", newline="") as f:
        sass = list(csv.DictReader(f))
if [r["kernel"] for r in rows] != ["07b"]:
    failures.append(f"rows for {[r['kernel'] for r in rows]}, expected 07b's alone (05l launched nothing)")
else:
    row = rows[0]
    expected = {
        "layer": "resnet50/res4_3x3", "n": "32", "kernels": "2",
        "time_us": "76.128",             # 69,184 + 6,944 ns: the second launches (the first split took 99,999)
        "blocks": "864",                 # 72 x 4 + 576
        "inst_executed": "27470720",     # 26,507,648 + 963,072
        "registers": "164+54",
        "stall_wait": "1.725",           # (1.73 x 26,507,648 + 1.60 x 963,072) / 27,470,720
        "stall_selected": "1.000",
        "gpu": "NVIDIA H100 80GB HBM3", "ncu": "2025.3.1.0", "chapter": "07",
    }
    for column, value in expected.items():
        if row.get(column) != value:
            failures.append(f"{column} = {row.get(column)!r}, expected {value!r}")
    columns = ("l1_global_load_requests", "l1_global_load_sectors", "l2_sectors_read", "dram_bytes_read")
    if any(row.get(c) != "" for c in columns):
        failures.append(f"a profile without the memory traffic gave {[row.get(c) for c in columns]}: expected all empty")
# launches 3 and 4 (0-based 2 and 3) are the last of each kernel: 300 + 400 requests, 1200 + 1600 sectors of the
# L1, 3000 + 4000 of the L2, 30 + 40 bytes
traffic = [(r.get("l1_global_load_requests"), r.get("l1_global_load_sectors"), r.get("l2_sectors_read"), r.get("dram_bytes_read"))
           for r in traffic_rows]
if traffic != [("700", "2800", "7000", "70")]:
    failures.append(f"the memory traffic {traffic}, expected [('700', '2800', '7000', '70')]: the last launch of each "
                    "kernel, summed")
# The per-instruction page (tests/fixtures/ncu_raw_05d.sass.csv: 05d's first six machine instructions, as
# measured): offsets from the kernel's first instruction, the executed counts, the samples.
want = [(0, "LDC R1, c[0x0][0x28]", "1568", "25"), (16, "LDC R21, c[0x0][0x244]", "1568", "1"),
        (32, "S2R R79, SR_CTAID.X", "1568", "0"), (48, "ULDC UR4, c[0x0][0x210]", "1568", "14"),
        (64, "ULDC.64 UR8, c[0x0][0x208]", "1568", "0"), (80, "CS2R R54, SRZ", "1568", "0")]
got = [(int(r["offset"]), r["sass"], r["executed"], r["samples"]) for r in sass]
if got != want or any(r["kernel"] != "05d" for r in sass):
    failures.append(f"machine instructions {got}, expected {want}")
for line in failures:
    print(f"FAIL {line}")
print(f"ncu_profile: {'ok' if not failures else f'{len(failures)} failed'}")
sys.exit(1 if failures else 0)
