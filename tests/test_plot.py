"""Check bench/plot.py and bench/tables.py against the synthetic results fixture.

    python3 tests/test_plot.py BUILD_TMP_DIR

Runs the two scripts as a reader would (subprocesses) on a scratch folder made
under BUILD_TMP_DIR: the three PNGs of the fixture exist at the expected pixel
size; malformed CSVs (missing column, bad number, empty file, header only) exit
1 with exactly one line on stderr and no traceback; an empty results folder
prints the "no results" line and exits 0; tables.py shows every fixture row's
median (or FAIL, or a dash) in its kernel's row and layer's column, one table per
pass and data type with cuDNN's row, fills/refuses README markers, and with
--readmes --check fails when one number in a chapter's table is typed over. Exit 0 if all checks pass, 1 otherwise.
No GPU and no pytest needed.
"""

import csv
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLOT = os.path.join(ROOT, "bench", "plot.py")
TABLES = os.path.join(ROOT, "bench", "tables.py")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "results_fixture.csv")
PNG_SIZE = (1000, 550)  # plot.py's figsize 10 x 5.5 in at 100 dpi
PLOTS = ("ladder", "roofline", "pct_cudnn")

failures = []


def check(ok, what):
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failures.append(what)


def run(script, *args):
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                          cwd=ROOT, env=dict(os.environ, MPLBACKEND="Agg"))
    return proc.returncode, proc.stdout, proc.stderr


def png_size(path):
    """(width, height) from the IHDR chunk, or None if this is not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def table_lines(stdout):
    """The markdown table's header and body lines (not the |---| rule)."""
    return [line for line in stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| ---")]


def fixture_rows():
    with open(FIXTURE, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def test_plots(tmp):
    results, out = os.path.join(tmp, "results"), os.path.join(tmp, "docs")
    os.makedirs(results)
    shutil.copy(FIXTURE, os.path.join(results, "fixture.csv"))
    rc, stdout, stderr = run(PLOT, "--results", results, "--out", out)
    check(rc == 0, f"plot.py on the fixture exits 0 (got {rc}; {stderr.strip()[-300:]})")
    for name in PLOTS:
        png = os.path.join(out, f"fixture_{name}.png")
        exists = os.path.isfile(png) and os.path.getsize(png) > 0
        check(exists, f"{os.path.basename(png)} written and non-empty")
        check(png in stdout.split(), f"{os.path.basename(png)} path printed")
        if exists:
            size = png_size(png)
            check(size == PNG_SIZE, f"{os.path.basename(png)} is {PNG_SIZE} px (got {size})")


def test_modeled(tmp):
    """The timing model's two figures from bench/results/modeled/h100.csv, each labelled as modeled; a modeled
    CSV with a column missing is one line and exit 1."""
    source = os.path.join(ROOT, "bench", "results", "modeled", "h100.csv")
    if not os.path.exists(source):
        check(False, "bench/results/modeled/h100.csv exists (bash bench/run.sh writes it)")
        return
    results, out = os.path.join(tmp, "modeled_results"), os.path.join(tmp, "modeled_docs")
    os.makedirs(os.path.join(results, "modeled"))
    shutil.copy(source, os.path.join(results, "modeled", "h100.csv"))
    rc, stdout, stderr = run(PLOT, "--results", results, "--out", out)
    check(rc == 0, f"plot.py on a modeled CSV exits 0 (got {rc}; {stderr.strip()[-300:]})")
    for name in ("modeled_h100_ladder.png", "modeled_h100_states.png"):
        png = os.path.join(out, name)
        check(os.path.isfile(png) and os.path.getsize(png) > 0 and png in stdout.split(),
              f"{name} written, non-empty and its path printed")
    with open(source, newline="") as f:
        rows = list(csv.DictReader(f))
    header = [c for c in rows[0] if c != "modeled_us"]
    write_csv(os.path.join(results, "modeled", "h100.csv"), header, rows)
    rc, stdout, stderr = run(PLOT, "--results", results, "--out", out)
    lines = stderr.strip().splitlines()
    check(rc == 1 and len(lines) == 1 and "modeled_us" in lines[0],
          f"a modeled CSV without modeled_us: exit 1 and one line naming it (got {rc}, {lines[-2:]})")


def test_no_cudnn_one_pass(tmp):
    """No cuDNN times, fprop only, a custom layer with a 2x1 stride: still three PNGs."""
    results, out = os.path.join(tmp, "results_nocudnn"), os.path.join(tmp, "docs_nocudnn")
    os.makedirs(results)
    rows = [dict(r, cudnn_ms="", pct_cudnn="", cudnn_algo="", cudnn="n/a")
            for r in fixture_rows() if r["pass"] == "fprop"]
    rows.append(dict(rows[3], layer="custom", stride="2x1", h="60", w="40"))
    write_csv(os.path.join(results, "nocudnn.csv"), list(fixture_rows()[0]), rows)
    rc, _, stderr = run(PLOT, "--results", results, "--out", out)
    check(rc == 0, f"plot.py without cuDNN times exits 0 (got {rc}; {stderr.strip()[-300:]})")
    check(all(png_size(os.path.join(out, f"nocudnn_{n}.png")) == PNG_SIZE for n in PLOTS),
          "three PNGs of the expected size without cuDNN times")


def malformed_cases():
    rows = fixture_rows()
    header = list(rows[0])
    bad_number = [dict(r) for r in rows]
    bad_number[0]["tflops"] = "fast"
    return {
        "missing_column": ([c for c in header if c != "tflops"], rows),
        "bad_number": (header, bad_number),
        "empty_file": None,
        "header_only": (header, []),
        "bad_status": (header, [dict(rows[0], status="maybe")]),
    }


def test_malformed(tmp):
    for name, content in malformed_cases().items():
        results = os.path.join(tmp, f"bad_{name}")
        os.makedirs(results)
        path = os.path.join(results, f"{name}.csv")
        if content is None:
            open(path, "w").close()
        else:
            write_csv(path, *content)
        for script, args in ((PLOT, ["--results", results, "--out", os.path.join(tmp, "x")]),
                             (TABLES, [path])):
            rc, _, stderr = run(script, *args)
            tool = os.path.basename(script)
            lines = stderr.strip().splitlines()
            check(rc == 1, f"{tool} on {name} exits 1 (got {rc})")
            check(len(lines) == 1 and "Traceback" not in stderr,
                  f"{tool} on {name}: one stderr line, no traceback ({stderr.strip()[:200]!r})")
            check(bool(lines) and path in lines[0],
                  f"{tool} on {name}: the line names the file")


def test_no_results(tmp):
    empty = os.path.join(tmp, "results_empty")
    os.makedirs(empty)
    rc, stdout, stderr = run(PLOT, "--results", empty, "--out", os.path.join(tmp, "y"))
    expected = f"plot: no GPU results in {empty}: the measured plots wait for a run on a GPU"
    check(rc == 0 and stdout.strip() == expected and not stderr,
          f"empty results folder: exit 0 and the 'no results' line (got {rc}, {stdout!r})")


def pivot(stdout):
    """Every table in tables.py's output as {kernel: {layer: cell}}, cells as printed."""
    tables, header = [], None
    for line in stdout.splitlines():
        if not line.startswith("| ") or line.startswith("| ---"):
            header = None if not line.startswith("| ") else header
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == "kernel":
            header = cells[1:]
            tables.append({})
        elif header:
            tables[-1][cells[0]] = dict(zip(header, cells[1:]))
    return tables


def expected_cell(row):
    """What the table must show for a fixture row: its median to 3 figures, FAIL or a dash."""
    if row["status"] == "unsupported":
        return "–"
    if row["status"] == "fail":
        return "FAIL"
    value = float(row["time_ms"])
    return f"{value:.{max(0, 2 - math.floor(math.log10(value)))}f}"


def test_tables(tmp):
    rows = fixture_rows()
    rc, stdout, stderr = run(TABLES, FIXTURE)
    tables = pivot(stdout)
    check(rc == 0, f"tables.py on the fixture exits 0 ({stderr.strip()[:200]})")
    check("FIXTURE (synthetic" in stdout and "CUDA 13.0" in stdout and "2026-11-22" in stdout,
          "tables.py names the GPU, CUDA and date")
    check(len(tables) == 4, f"a table per pass and data type: fp32 fprop, fp16 fprop, dgrad, wgrad (got {len(tables)})")
    cells = {k: v for t in tables for k, v in t.items()}
    wrong = [f"{r['kernel']} {r['layer']}: {cells.get(r['kernel'], {}).get(r['layer'].split('/')[1])!r}"
             for r in rows
             if cells.get(r["kernel"], {}).get(r["layer"].split("/")[1], "").strip("*") != expected_cell(r)]
    check(not wrong, f"every row's cell is its median, FAIL or a dash ({', '.join(wrong)[:200]})")
    fastest = [t[k][layer] for t in tables for k in t for layer in t[k] if t[k][layer].startswith("**")]
    bold = ["**0.627**", "**0.831**", "**1.24**", "**0.0406**", "**0.0525**", "**0.0474**", "**0.0763**",
            "**0.0627**", "**0.0711**"]
    check(sorted(fastest) == sorted(bold), f"the fastest passing kernel per layer in bold ({fastest})")
    check(cells.get("cuDNN", {}).get("res2_3x3") and tables[0]["cuDNN"]["res2_3x3"] == "0.235"
          and tables[2]["cuDNN"]["res2_3x3"] == "0.0199", "each table's cuDNN row is its own pass's")

    rc, stdout, _ = run(TABLES, FIXTURE, "--chapter", "2", "--pass", "fprop")
    tables = pivot(stdout)
    check(rc == 0 and len(tables) == 1 and list(tables[0]) == ["02a", "02b", "cuDNN"],
          f"--chapter 2 --pass fprop gives just the chapter-02 kernels and cuDNN ({[list(t) for t in tables]})")
    rc, _, stderr = run(TABLES, FIXTURE, "--chapter", "09")
    check(rc == 1 and len(stderr.strip().splitlines()) == 1, "--chapter with no rows exits 1")

    # a kernel unsupported on every layer is named under the table, not given a row of dashes
    only_unsupported = os.path.join(tmp, "unsupported.csv")
    with open(FIXTURE, newline="") as f:
        header = next(csv.reader(f))
    write_csv(only_unsupported, header, [dict(r, status="unsupported", time_ms="", cudnn_ms="") if r["kernel"] == "02a"
                                         else r for r in rows])
    rc, stdout, _ = run(TABLES, only_unsupported, "--chapter", "02")
    check(rc == 0 and "Not shown: 02a" in stdout and "02a" not in pivot(stdout)[0],
          "a kernel unsupported everywhere is named, not tabled")

    # one CSV per GPU: a table for each that has the chapter's rows, each under its own GPU line
    other = os.path.join(tmp, "other_gpu.csv")
    with open(FIXTURE) as f:
        text = f.read()
    with open(other, "w") as f:
        f.write(text.replace("FIXTURE (synthetic", "SECOND FIXTURE (synthetic"))
    rc, stdout, stderr = run(TABLES, FIXTURE, other, "--chapter", "02")
    check(rc == 0 and stdout.count("Measured on **") == 2 and "SECOND FIXTURE" in stdout and len(pivot(stdout)) == 2,
          f"two CSVs give two tables ({stderr.strip()[:200]})")

    readme = os.path.join(tmp, "README.md")
    with open(readme, "w") as f:
        f.write("# Chapter 2\n\nbefore\n<!-- results:begin -->\nstale table\n"
                "<!-- results:end -->\nafter\n")
    rc, _, stderr = run(TABLES, FIXTURE, "--chapter", "02", "--readme", readme, "--marker", "results")
    with open(readme) as f:
        text = f.read()
    check(rc == 0 and "stale table" not in text and "| 02a |" in text,
          f"--readme replaces the text between the markers ({stderr.strip()[:200]})")
    check(text.startswith("# Chapter 2\n\nbefore\n<!-- results:begin -->\n")
          and text.endswith("<!-- results:end -->\nafter\n"), "text outside the markers kept")
    run(TABLES, FIXTURE, "--chapter", "02", "--readme", readme, "--marker", "results")
    with open(readme) as f:
        check(f.read() == text, "a second --readme run changes nothing")

    rc, _, stderr = run(TABLES, FIXTURE, "--readme", readme, "--marker", "nosuch")
    check(rc == 1 and len(stderr.strip().splitlines()) == 1 and "nosuch:begin" in stderr
          and "Traceback" not in stderr, f"missing marker: exit 1, one line ({stderr.strip()!r})")
    with open(readme) as f:
        check(f.read() == text, "missing marker leaves the file untouched")

    # --readmes ROOT: every chapter README's section, and --check fails on a table typed over
    root = os.path.join(tmp, "tree")
    for chapter in ("02_naive", "09_depthwise"):
        os.makedirs(os.path.join(root, "chapters", chapter))
        with open(os.path.join(root, "chapters", chapter, "README.md"), "w") as f:
            f.write("# x\n<!-- results:begin -->\nold\n<!-- results:end -->\n")
    rc, _, stderr = run(TABLES, FIXTURE, "--readmes", root, "--marker", "results", "--check")
    check(rc == 1 and "02_naive/README.md" in stderr, "--check names a README whose table is stale")
    rc, _, stderr = run(TABLES, FIXTURE, "--readmes", root, "--marker", "results")
    ch02, ch09 = (open(os.path.join(root, "chapters", c, "README.md")).read() for c in ("02_naive", "09_depthwise"))
    check(rc == 0 and "| 02a |" in ch02 and "Not yet measured on a GPU" in ch09,
          f"--readmes writes each chapter's table, or says it is not yet measured ({stderr.strip()[:200]})")
    rc, _, _ = run(TABLES, FIXTURE, "--readmes", root, "--marker", "results", "--check")
    check(rc == 0, "--check passes once written")
    with open(os.path.join(root, "chapters", "02_naive", "README.md"), "w") as f:
        f.write(ch02.replace("| 02a | 2.55 |", "| 02a | 2.50 |"))
    rc, _, stderr = run(TABLES, FIXTURE, "--readmes", root, "--marker", "results", "--check")
    check(rc == 1 and "02_naive/README.md" in stderr, "--check fails on one number typed over")


def main():
    if len(sys.argv) != 2:
        print("usage: python3 tests/test_plot.py BUILD_TMP_DIR", file=sys.stderr)
        return 2
    os.makedirs(sys.argv[1], exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="test_plot_", dir=sys.argv[1]) as tmp:
        for test in (test_plots, test_modeled, test_no_cudnn_one_pass, test_malformed, test_no_results,
                     test_tables):
            test(tmp)
    print(f"test_plot: {len(failures)} failed" if failures else "test_plot: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
