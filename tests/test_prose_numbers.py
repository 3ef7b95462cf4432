"""The numbers the chapters quote from the emulator's counts (bench/prose_numbers.py) are checked, and
every check can fail.

1. Styles round-trip: a shown number, formatted again in its own style, is itself (1.09e8, 9.0e5,
   2,736, 0.038, 12, 13%, 9×, 2048 ...); a value is rounded the way its shown number is written.
2. The evaluator: keys by full and short layer name, the row functions (computed as the counter tables
   compute them), same(); an unknown key, column, layer or function, a row that was not counted, and
   anything but arithmetic (a name, an attribute, a power, a call of a builtin not listed) are one-line
   errors naming README:line.
3. A marker with no end, or no expression, is an error; a wrong number is reported with README:line,
   the expression, the number shown and the number the CSV gives.
4. Through bench/tables.py --counters --readmes --check on a copy of the repository's markdown: the
   copy passes as it is; one number typed wrong fails, and the write mode puts it right; a kernel whose
   counts change (05b executing fewer warp instructions than 05a, where chapter 05 says "4% more")
   fails, and the write mode will not write "-2% more" (a number whose sign changes is an error: the
   sentence has to be rewritten); a malformed marker fails (and the write mode leaves its line as it is).

Run as: test_prose_numbers.py SOURCE_ROOT
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile

root = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(root, "bench"))
sys.dont_write_bytecode = True
import emulator_csv  # noqa: E402
import prose_numbers as P  # noqa: E402

csv_path = os.path.join(root, "bench", "results", "emulator.csv")
failures = []


def claim(text, holds):
    text = text.replace("\n", " | ")
    print(f"{'PASS' if holds else 'FAIL'} {text}")
    if not holds:
        failures.append(text)


# 1. styles
def value_of(shown):
    text = shown.replace(",", "").replace("−", "-").rstrip("%× µs")
    return float(text)


for shown in ("1.09e8", "9.0e5", "2.86e9", "6.85e10", "2,736", "150,994,944", "7,398,752,256", "0.038",
              "12", "16.5", "4.00", "0.25", "13%", "0.1%", "9×", "1.00×", "27.9×", "2048", "46.9 µs",
              "0", "-2%"):
    again = P.show(value_of(shown), P.style(shown))
    claim(f"'{shown}' round-trips ({again})", again == shown)
for value, shown, expect in ((2735.6, "2,736", "2,736"), (1759.26, "1,760", "1,759"),
                             (108448107, "1.09e8", "1.08e8"), (25480, "2.6e4", "2.5e4"),
                             (1234.0, "999", "1,234"), (1234.0, "2048", "1234"), (-2.4, "4%", "-2%"),
                             (0.0004, "0.0", "0.0"), (-0.0004, "0.0", "0.0"), (11.68, "12", "12"),
                             (9.02, "9×", "9×"), (2.9418, "2.96", "2.94"), (1e-5, "3.2e-4", "1.0e-5")):
    got = P.show(value, P.style(shown))
    claim(f"{value} in the style of '{shown}' is '{expect}' ({got})", got == expect)
for bad in ("about 3", "x", "1,23", "", "1.5e+8"):
    try:
        P.style(bad)
        claim(f"'{bad}' is refused as a number", False)
    except P.MarkerError:
        claim(f"'{bad}' is refused as a number", True)

# 2. the evaluator, on the real CSV
rows = emulator_csv.load(csv_path)
values = P.Values(rows)
h100 = emulator_csv.h100_figures()
row05b = next(r for r in rows if r["kernel"] == "05b" and r["layer"] == "resnet50/res4_3x3")
row03a = next(r for r in rows if r["kernel"] == "03a" and r["layer"] == "resnet50/res4_3x3")
for expr, expect in (
        ("{05b/res4_3x3/warp_inst}", row05b["warp_inst"]),
        ("{05b/resnet50/res4_3x3/warp_inst}", row05b["warp_inst"]),
        ("{05b/res4_3x3/c} * {05b/res4_3x3/r} * {05b/res4_3x3/s} / 32", 72),
        ("100 * ({05b/res4_3x3/warp_inst} / {05a/res4_3x3/warp_inst} - 1)",
         100 * (row05b["warp_inst"] / next(r for r in rows if r["kernel"] == "05a")["warp_inst"] - 1)),
        ("bound_us({03a/res4_3x3})", emulator_csv.floor(row03a, h100)[0]),
        ("issue_us({03a/res4_3x3})", emulator_csv.bound_us(row03a, h100)["issue slots"]),
        ("smem_us({03a/res4_3x3})", emulator_csv.bound_us(row03a, h100)["shared memory"]),
        ("bank_conflicts({03a/res4_3x3})", emulator_csv.bank_conflicts(row03a)),
        ("global_traffic({03a/res4_3x3}) / {03a/res4_3x3/min_bytes}",
         emulator_csv.global_traffic(row03a) / row03a["min_bytes"]),
        ("same({05b/res4_3x3/inst_tensor}, {05c/res4_3x3/inst_tensor})", row05b["inst_tensor"]),
        ("-(2 + 3) * 4 / 8 + abs(-1) + min(1, 2) + max(1, 2) + round(2.6)", -2.5 + 1 + 1 + 2 + 3)):
    try:
        got = P.evaluate(expr, values)
    except P.MarkerError as e:
        got = f"error: {e}"
    claim(f"{expr} = {expect} ({got})", isinstance(got, float) and abs(got - expect) <= 1e-9 * max(1, abs(expect)))

for expr, says in (
        ("{05b/res4_3x3/warp_instructions}", "unknown column"),
        ("{05z/res4_3x3/warp_inst}", "no row for kernel '05z'"),
        ("{05b/res9_3x3/warp_inst}", "no layer 'res9_3x3'"),
        ("{04x/res4_3x3/warp_inst}", "not counted"),
        ("{05b/res4_3x3}", "is a row"),
        ("{05b/res4_3x3/warp_inst", "unbalanced braces"),
        ("floor({05b/res4_3x3})", "unknown function 'floor'"),
        ("bound_us({05b/res4_3x3/warp_inst})", "takes one row"),
        ("same({05a/res4_3x3/warp_inst}, {05b/res4_3x3/warp_inst})", "values that differ"),
        ("__import__('os')", "unknown function '__import__'"),
        ("{05b/res4_3x3/warp_inst} ** 2", "not allowed"),
        ("x", "not allowed"),
        ("(1).real", "not allowed"),
        ("'text'", "not allowed"),
        ("1 / 0", "division by zero"),
        ("1 +", "not an expression")):
    try:
        P.evaluate(expr, values)
        claim(f"{expr} is refused ({says})", False)
    except P.MarkerError as e:
        claim(f"{expr} is refused: {e}", says in str(e) and "\n" not in str(e))

# 3. process(): stale numbers and malformed markers, each named by README:line
good = "<!--= {05b/res4_3x3/warp_inst} -->1.08e8<!--/-->"
text = f"first line\n05b executes {good} warp instructions, <!--= 2 * 3 -->7<!--/--> times\n"
new, stale, errors = P.process(text, values, "X.md")
claim(f"a wrong number is reported with file:line, expression, shown and CSV value ({stale})",
      stale == ["X.md:2: 2 * 3 shows 7, the CSV gives 6"] and not errors)
claim("the write mode rewrites it and nothing else", new == text.replace("-->7<!--/-->", "-->6<!--/-->"))
_, stale, errors = P.process("<!--= 2 - 3 -->1<!--/--> more\n", values, "X.md")
claim(f"a number whose sign changed is an error, not a stale number ({errors})",
      not stale and len(errors) == 1 and "X.md:1: 2 - 3 shows 1, the CSV gives -1: the sign changed" in errors[0])
claim("a text without markers is left as it is", P.process("no markers, 1.09e8", values, "X.md")[0:2] ==
      ("no markers, 1.09e8", []))
for bad, says in (("<!--= {05b/res4_3x3/warp_inst} -->1.08e8 and no end", "malformed"),
                  ("1.08e8<!--/--> with no start", "malformed"),
                  ("<!--= {05b/res4_3x3/warp_inst} 1.08e8<!--/-->", "malformed"),
                  ("<!--= -->1.08e8<!--/-->", "not an expression"),
                  ("<!--= {05b/res4_3x3/warp_instr} -->1.08e8<!--/-->", "unknown column"),
                  ("<!--= {05b/res4_3x3/warp_inst} -->about 1.08e8<!--/-->", "not a number")):
    _, _, errors = P.process(f"line one\n{bad}\n", values, "X.md")
    claim(f"'{bad}' is one error naming X.md:2 ({errors})",
          len(errors) == 1 and errors[0].startswith("X.md:2: ") and says in errors[0])


# the module on its own: one file, --check
with tempfile.TemporaryDirectory() as tmp:
    page = os.path.join(tmp, "page.md")
    with open(page, "w", encoding="utf-8") as f:
        f.write("05b: <!--= {05b/res4_3x3/warp_inst} -->1.00e0<!--/--> warp instructions\n")
    run = [sys.executable, os.path.join(root, "bench", "prose_numbers.py"), csv_path, page]
    check = subprocess.run(run + ["--check"], capture_output=True, text=True)
    claim(f"prose_numbers.py --check fails on a stale number ({check.stderr.strip()})",
          check.returncode == 1 and f"{page}:1: {{05b/res4_3x3/warp_inst}} shows 1.00e0" in check.stderr)
    write = subprocess.run(run, capture_output=True, text=True)
    with open(page, encoding="utf-8") as f:
        fixed = f.read()
    claim(f"prose_numbers.py rewrites it ({fixed.strip()})", write.returncode == 0 and "-->1.00e0" not in fixed
          and subprocess.run(run + ["--check"], capture_output=True, text=True).returncode == 0)


# 4. through tables.py, on a copy of the repository's markdown
def tables(tmp, csv_file, *extra):
    return subprocess.run([sys.executable, os.path.join(root, "bench", "tables.py"), "--counters", csv_file,
                           "--readmes", tmp, *extra], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    shutil.copy(os.path.join(root, "README.md"), tmp)
    shutil.copytree(os.path.join(root, "docs"), os.path.join(tmp, "docs"),
                    ignore=shutil.ignore_patterns("*.png"))
    for name in os.listdir(os.path.join(root, "chapters")):
        readme = os.path.join(root, "chapters", name, "README.md")
        if os.path.isfile(readme):
            os.makedirs(os.path.join(tmp, "chapters", name))
            shutil.copy(readme, os.path.join(tmp, "chapters", name))
    ch05 = os.path.join(tmp, "chapters", "05_implicit_gemm_tc", "README.md")
    with open(ch05, encoding="utf-8") as f:
        original = f.read()
    marked = P.count(original)
    claim(f"chapter 05 marks its numbers ({marked} markers)", marked >= 40)

    check = tables(tmp, csv_path, "--check")
    claim(f"the repository's markdown passes --check as it is ({check.stderr.strip()})", check.returncode == 0)

    # one number typed wrong: "05b executes 1.08e8" typed as 1.09e8
    target = "<!--= {05b/res4_3x3/warp_inst} -->"
    shown = original[original.index(target) + len(target):].split("<!--/-->")[0]
    line = original[:original.index(target)].count("\n") + 1
    wrong = "9.99e9" if shown != "9.99e9" else "1.00e0"
    with open(ch05, "w", encoding="utf-8") as f:
        f.write(original.replace(target + shown, target + wrong, 1))
    check = tables(tmp, csv_path, "--check")
    expect = f"README.md:{line}: {{05b/res4_3x3/warp_inst}} shows {wrong}, the CSV gives {shown}"
    claim(f"a number typed wrong fails --check, naming README:line ({check.stderr.strip()})",
          check.returncode == 1 and expect in check.stderr)
    write = tables(tmp, csv_path)
    with open(ch05, encoding="utf-8") as f:
        claim(f"the write mode puts it right ({write.stdout.strip()})", write.returncode == 0 and f.read() == original)
    claim("and --check passes again", tables(tmp, csv_path, "--check").returncode == 0)

    # a changed kernel: 05b now executes 2% fewer warp instructions than 05a, where the text says "4% more"
    changed_csv = os.path.join(tmp, "emulator.csv")
    with open(csv_path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, data = reader.fieldnames, list(reader)
    a = next(r for r in data if r["kernel"] == "05a")
    b = next(r for r in data if r["kernel"] == "05b")
    b["warp_inst"] = str(int(int(a["warp_inst"]) * 0.98))
    with open(changed_csv, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(data)
    check = tables(tmp, changed_csv, "--check")
    flipped = "shows 4%, the CSV gives -2%: the sign changed, so the sentence must be rewritten"
    claim(f"a kernel whose counts make '4% more' false fails --check ({check.stderr.strip()})",
          check.returncode == 1 and flipped in check.stderr)
    write = tables(tmp, changed_csv)
    with open(ch05, encoding="utf-8") as f:
        after = f.read()
    claim("the write mode does not turn '4% more' into '-2% more': it fails and keeps the 4%",
          write.returncode == 1 and flipped in write.stderr and "-->4%<!--/--> *more*" in after
          and "-->-2%" not in after)
    claim("so --check still fails after it", tables(tmp, changed_csv, "--check").returncode == 1)
    with open(ch05, "w", encoding="utf-8") as f:
        f.write(original)
    claim("the copy written from the repository's CSV again passes --check",
          tables(tmp, csv_path).returncode == 0 and tables(tmp, csv_path, "--check").returncode == 0)

    # a malformed marker
    with open(ch05, "w", encoding="utf-8") as f:
        f.write(original.replace("<!--/-->", "", 1))
    check = tables(tmp, csv_path, "--check")
    claim(f"a malformed marker fails --check with one line ({check.stderr.strip()})",
          check.returncode == 1 and "malformed number marker" in check.stderr
          and len(check.stderr.strip().splitlines()) == 1)
    write = tables(tmp, csv_path)
    with open(ch05, encoding="utf-8") as f:
        claim("and the write mode fails too, leaving that line as it is", write.returncode == 1 and f.read() ==
              original.replace("<!--/-->", "", 1))

for failure in failures:
    print("FAIL", failure)
print(f"test_prose_numbers: {len(failures)} failures")
sys.exit(1 if failures else 0)
